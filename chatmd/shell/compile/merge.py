"""Merging a declared runtime onto its resolved parent (spec §6.3).

Scalars: the child's ``set``/``clear`` wins, ``inherit`` keeps the parent's.
Ordered lists append (parent then child) unless the child section says
``merge="replace"``. Named entries (resolver executables, policy rules,
backends) are replaced in place only with ``override="true"``; a clash
without it is ``shell.duplicate_named_entry``. Reviewers, interceptors,
effect analysis and audit are replaced wholesale when the child declares them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import attrs

from chatcommon.diagnostics import Diagnostic
from chatmd.shell.compile.reporting import compile_diagnostic, location
from chatmd.shell.declare.sections import (
    Approvals,
    Backend,
    Backends,
    Capabilities,
    Environment,
    Limits,
    Policy,
    Resolver,
    Secrets,
)
from chatmd.shell.declare.settings import Setting
from chatmd.shell.declare.typed_declarations import ShellAccessDecl

E = TypeVar("E")

def _settings_over(child: Any, parent: Any, names: Sequence[str]) -> dict[str, Setting[Any]]:
    return {name: getattr(child, name).over(getattr(parent, name)) for name in names}


def _listed(parent: tuple[E, ...], child: tuple[E, ...], replace: bool) -> tuple[E, ...]:
    return child if replace else parent + child


def _merge_named(parent: tuple[Any, ...], child: tuple[Any, ...], replace: bool,
                 report: Callable[[Any], None], *, overridable: bool) -> tuple[Any, ...]:
    """Parent entries (none with ``replace``) then child entries, matched by ``id``."""
    result: list[Any] = [] if replace else list(parent)
    index = {entry.id: i for i, entry in enumerate(result) if entry.id is not None}
    for entry in child:
        ident = entry.id
        wants_override = overridable and entry.override
        if overridable:
            entry = attrs.evolve(entry, override=False)
        if ident is not None and ident in index:
            if wants_override:
                result[index[ident]] = entry
            else:
                report(entry)
            continue
        if ident is not None:
            index[ident] = len(result)
        result.append(entry)
    return tuple(result)


def merge_runtime(child: ShellAccessDecl, parent: ShellAccessDecl
                  ) -> tuple[ShellAccessDecl, list[Diagnostic]]:
    """``child`` merged onto the resolved ``parent``; ``extends`` is cleared in the result."""
    diagnostics: list[Diagnostic] = []

    def reporter(section: str, noun: str) -> Callable[[Any], None]:
        def report(entry: Any) -> None:
            span = location(entry.span, child.span, child.provenance)
            message = (f"duplicate {noun} id {entry.id!r} in runtime {child.id}: it is already "
                       "defined" + (f" by {_layer(parent, entry.id, section)}"))
            hint = ('add override="true" to replace the inherited entry'
                    if section != "backends" else "give the backend a different id")
            diagnostics.append(compile_diagnostic(span, "shell.duplicate_named_entry",
                                                  message, ("runtime", child.id, section),
                                                  hint=hint))
        return report

    capabilities = parent.capabilities
    assert capabilities is not None
    if child.capabilities is not None:
        own = child.capabilities
        replace = own.merge == "replace"
        settings: dict[str, Any] = _settings_over(
            own, capabilities, ("sandbox", "network", "child_processes", "arbitrary_code",
                                "privilege_change"))
        capabilities = Capabilities(
            **settings,
            reads=_listed(capabilities.reads, own.reads, replace),
            writes=_listed(capabilities.writes, own.writes, replace), span=own.span)
    resolver = parent.resolver
    assert resolver is not None
    if child.resolver is not None:
        own_resolver = child.resolver
        replace = own_resolver.merge == "replace"
        resolver = Resolver(
            allow_relative_search_path=own_resolver.allow_relative_search_path.over(
                resolver.allow_relative_search_path),
            search_paths=_listed(resolver.search_paths, own_resolver.search_paths, replace),
            trusted_roots=_listed(resolver.trusted_roots, own_resolver.trusted_roots, replace),
            executables=_merge_named(resolver.executables, own_resolver.executables, replace,
                                     reporter("resolver.executable", "executable"),
                                     overridable=True),
            span=own_resolver.span)
    environment = parent.environment
    assert environment is not None
    if child.environment is not None:
        own_env = child.environment
        environment = Environment(
            inherit=own_env.inherit.over(environment.inherit),
            operations=_listed(environment.operations, own_env.operations,
                               own_env.merge == "replace"),
            span=own_env.span)
    limits = parent.limits
    assert limits is not None
    if child.limits is not None:
        names = [f.name for f in attrs.fields(Limits) if f.name != "span"]
        limits = Limits(**_settings_over(child.limits, limits, names), span=child.limits.span)
    backends = parent.backends
    assert backends is not None
    if child.backends is not None:
        own_backends = child.backends
        merged: tuple[Backend, ...] = _merge_named(
            backends.backends, own_backends.backends, own_backends.merge == "replace",
            reporter("backends", "backend"), overridable=False)
        backends = Backends(accept_declared_confinement=own_backends.accept_declared_confinement,
                            backends=merged, span=own_backends.span, origin=own_backends.origin)
    policy = parent.policy
    assert policy is not None
    if child.policy is not None:
        own_policy = child.policy
        policy = Policy(default=own_policy.default.over(policy.default),
                        rules=_merge_named(policy.rules, own_policy.rules,
                                           own_policy.merge == "replace",
                                           reporter("policy.rule", "rule"), overridable=True),
                        span=own_policy.span)
    approvals = parent.approvals
    assert approvals is not None
    if child.approvals is not None:
        approvals = Approvals(**_settings_over(child.approvals, approvals,
                                               ("provider", "unavailable", "scopes", "durable")),
                              span=child.approvals.span)
    secrets = parent.secrets
    assert secrets is not None
    if child.secrets is not None:
        own_secrets = child.secrets
        secrets = Secrets(replacement=own_secrets.replacement.over(secrets.replacement),
                          sources=_listed(secrets.sources, own_secrets.sources,
                                          own_secrets.merge == "replace"),
                          span=own_secrets.span)
    merged_runtime = attrs.evolve(
        child,
        extends=None,
        cwd=child.cwd.over(parent.cwd),
        pipefail=child.pipefail.over(parent.pipefail),
        capabilities=capabilities, resolver=resolver, environment=environment, limits=limits,
        backends=backends, policy=policy, approvals=approvals, secrets=secrets,
        reviewers=child.reviewers if child.reviewers is not None else parent.reviewers,
        interceptors=(child.interceptors if child.interceptors is not None
                      else parent.interceptors),
        effect_analysis=(child.effect_analysis if child.effect_analysis is not None
                         else parent.effect_analysis),
        audit=child.audit if child.audit is not None else parent.audit,
        requested_profile=child.requested_profile or parent.requested_profile,
        resolved_profile=child.resolved_profile or parent.resolved_profile,
    )
    return merged_runtime, diagnostics


def _layer(parent: ShellAccessDecl, ident: str, section: str) -> str:
    """Which layer defined entry ``ident`` of ``section`` in the parent (for messages)."""
    entries: tuple[Any, ...] = ()
    if section == "resolver.executable" and parent.resolver is not None:
        entries = parent.resolver.executables
    elif section == "policy.rule" and parent.policy is not None:
        entries = parent.policy.rules
    elif section == "backends" and parent.backends is not None:
        entries = parent.backends.backends
    for entry in entries:
        if entry.id == ident:
            return entry.origin
    return "an earlier entry of the same declaration"
