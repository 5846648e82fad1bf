"""Administrative ceilings (spec §6.9, step 1): a host policy no prompt may exceed.

The policy is a JSON file (``OCHAT_SHELL_ADMIN_POLICY`` names it; absent means
permissive). :func:`check_admin_ceilings` compares every compiled runtime with
it and reports **all** violations, each ``shell.admin_<what>`` with the
runtime, the requested value, the ceiling, the policy source and a
remediation hint. The manifest is never rewritten to fit. Per-command hard
denials (``denied_programs``, ``denied_argument_substrings``,
``denied_effects``) are loaded and validated here but enforced at execution;
``require_trusted_source`` and ``require_signature`` are enforced before
instantiation (:mod:`runtime.shell.security`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from typing import Any

import attrs

from chatcommon.diagnostics import Diagnostic
from chatcommon.sources import Span
from chatmd.shell.compile.compiler import CompiledShell
from chatmd.shell.compile.reporting import compile_diagnostic, location
from chatmd.shell.compile.validate import runtime_hooks
from chatmd.shell.declare.sections import BYTE_LIMITS, DURATION_LIMITS, LIMIT_NAMES, POWERS, Root
from chatmd.shell.declare.settings import Setting
from chatmd.shell.declare.typed_declarations import RawMode, ShellAccessDecl
from chatmd.shell.declare.values import (
    ValueProblem,
    format_bytes,
    format_duration,
    parse_bytes,
    parse_duration,
    parse_uint,
)
from chatmd.shell.secure import POLICY_VARIABLE

PHASE = "shell.secure"

_BOOLEANS = {
    "allow_network": True, "allow_child_processes": True, "allow_arbitrary_code": True,
    "allow_privilege_change": True, "require_sandbox": False, "allow_direct_backend": True,
    "allow_declared_confinement": True, "allow_external_backends": True, "allow_hooks": True,
    "allow_raw_prefix_grants": True, "allow_yolo": True, "require_executable_hashes": False,
    "require_trusted_executables": False, "require_audit": False,
    "require_durable_audit": False, "require_trusted_source": False, "require_signature": False,
}
_OPTIONAL_LISTS = ("allowed_read_roots", "allowed_write_roots", "allowed_reviewer_kinds",
                   "allowed_approval_scopes")
_LISTS = ("denied_programs", "denied_argument_substrings", "denied_effects")


@attrs.frozen
class AdminPolicy:
    """A loaded administrative policy; list ceilings are None when unlimited."""

    source: str = "built-in permissive policy"
    flags: Mapping[str, bool] = attrs.field(factory=lambda: dict(_BOOLEANS))
    allowed_read_roots: tuple[str, ...] | None = None
    allowed_write_roots: tuple[str, ...] | None = None
    allowed_reviewer_kinds: tuple[str, ...] | None = None
    allowed_approval_scopes: tuple[str, ...] | None = None
    denied_programs: tuple[str, ...] = ()
    denied_argument_substrings: tuple[str, ...] = ()
    denied_effects: tuple[str, ...] = ()
    limits: Mapping[str, float | int] = attrs.field(factory=dict)

    def flag(self, name: str) -> bool:
        return self.flags.get(name, _BOOLEANS[name])


class AdminPolicyError(ValueError):
    """The policy file cannot be used; carries a ``shell.admin_policy_load_failed`` diagnostic."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueProblem(f"duplicate key {key!r}")
        result[key] = value
    return result


def _limit_value(name: str, value: Any) -> float | int:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueProblem(f"limits.{name} must be a number or a string such as 30s or 1MiB")
    if isinstance(value, str):
        if name in DURATION_LIMITS:
            return parse_duration(value)
        if name in BYTE_LIMITS:
            return parse_bytes(value)
        return parse_uint(value)
    if value < 0:
        raise ValueProblem(f"limits.{name} must not be negative")
    return value


def parse_admin_policy(data: Any, source: str) -> AdminPolicy:
    """An :class:`AdminPolicy` from decoded JSON; raises ValueProblem on a bad shape."""
    if not isinstance(data, dict):
        raise ValueProblem("the policy must be a JSON object")
    known = set(_BOOLEANS) | set(_OPTIONAL_LISTS) | set(_LISTS) | {"source", "limits"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueProblem(f"unknown key {unknown[0]!r}; expected some of {', '.join(sorted(known))}")
    flags = dict(_BOOLEANS)
    for name in _BOOLEANS:
        if name in data:
            if not isinstance(data[name], bool):
                raise ValueProblem(f"{name} must be true or false")
            flags[name] = data[name]
    lists: dict[str, Any] = {}  # AdminPolicy's list fields by name: tuple[str, ...] | None
    for name in _OPTIONAL_LISTS + _LISTS:
        value = data.get(name)
        if value is None:
            lists[name] = None if name in _OPTIONAL_LISTS else ()
            continue
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise ValueProblem(f"{name} must be a list of strings"
                               + (" or null" if name in _OPTIONAL_LISTS else ""))
        lists[name] = tuple(value)
    limits_data = data.get("limits") or {}
    if not isinstance(limits_data, dict):
        raise ValueProblem("limits must be an object of per-limit maxima")
    limits = {}
    for name, value in limits_data.items():
        if name not in LIMIT_NAMES:
            raise ValueProblem(f"unknown limit {name!r}; expected some of {', '.join(LIMIT_NAMES)}")
        limits[name] = _limit_value(name, value)
    label = data.get("source", source)
    if not isinstance(label, str):
        raise ValueProblem("source must be a string")
    return AdminPolicy(label, flags, limits=limits, **lists)


def load_admin_policy(path: str) -> AdminPolicy:
    """Read the policy file ``path``; raises :class:`AdminPolicyError` when it is unusable."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle, object_pairs_hook=_no_duplicates)
        return parse_admin_policy(data, path)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise AdminPolicyError(Diagnostic.for_file(
            path, "shell.admin_policy_load_failed",
            f"cannot load the administrative shell policy {path}: {reason}", phase=PHASE,
            hint=f"fix the file, or unset {POLICY_VARIABLE}")) from exc


def admin_policy_from_environment(environ: Mapping[str, str] | None = None
                                  ) -> AdminPolicy | None:
    """The policy named by ``OCHAT_SHELL_ADMIN_POLICY`` (None when unset: permissive)."""
    path = (os.environ if environ is None else environ).get(POLICY_VARIABLE)
    return load_admin_policy(path) if path else None


# ------------------------------------------------------------------ checks

class _Checker:
    def __init__(self, policy: AdminPolicy, compiled: CompiledShell) -> None:
        self.policy = policy
        self.compiled = compiled
        self.found: list[Diagnostic] = []

    def violation(self, runtime: ShellAccessDecl, what: str, message: str, field: str,
                  remediation: str, *spans: Span | None) -> None:
        self.found.append(compile_diagnostic(
            location(*spans, runtime.span, runtime.provenance), f"shell.admin_{what}",
            f"runtime {runtime.id}: {message} (administrative policy: {self.policy.source})",
            ("runtime", runtime.id, field), hint=remediation, phase=PHASE))

    def run(self) -> list[Diagnostic]:
        for runtime_id in sorted(self.compiled.runtimes):
            self.runtime(self.compiled.runtimes[runtime_id])
        return self.found

    def runtime(self, runtime: ShellAccessDecl) -> None:
        policy = self.policy
        capabilities = runtime.capabilities
        assert capabilities is not None and runtime.backends is not None
        assert runtime.approvals is not None and runtime.audit is not None
        extends_span = runtime.attribute_spans.get("extends")
        for power in POWERS:
            setting: Setting[bool] = getattr(capabilities, power)
            if setting.value and not policy.flag(f"allow_{power}"):
                self.violation(runtime, f"{power}_denied",
                               f"{power.replace('_', ' ')} is granted ({power}=true, set by "
                               f"{setting.origin}) but the ceiling is allow_{power}=false",
                               f"capabilities.{power}", f'set <capabilities {power}="false"/>',
                               setting.span, extends_span)
        sandbox = capabilities.sandbox
        if policy.flag("require_sandbox") and sandbox.value != "required":
            self.violation(runtime, "sandbox_required",
                           f"sandbox is {sandbox.value} (set by {sandbox.origin}) but the "
                           "policy requires sandbox=required", "capabilities.sandbox",
                           'set <capabilities sandbox="required"/>', sandbox.span, extends_span)
        self.roots(runtime, "read", capabilities.reads, policy.allowed_read_roots)
        self.roots(runtime, "write", capabilities.writes, policy.allowed_write_roots)
        self.backends(runtime, extends_span)
        if runtime.resolved_profile == "builtin:yolo@1" and not policy.flag("allow_yolo"):
            self.violation(runtime, "yolo_denied", "the runtime resolves to builtin:yolo@1, "
                           "which the policy forbids (allow_yolo=false)", "extends",
                           "extend builtin:workspace-development@1 or a narrower runtime",
                           extends_span)
        self.extensions(runtime)
        self.approvals(runtime)
        audit_format = runtime.audit.format
        if policy.flag("require_audit") and audit_format == "none":
            self.violation(runtime, "audit_required", "auditing is off (format none) but the "
                           "policy requires an audit", "audit",
                           'add <audit format="session"/>', runtime.audit.span)
        if policy.flag("require_durable_audit") and audit_format not in ("jsonl", "session"):
            self.violation(runtime, "durable_audit_required",
                           f"audit format {audit_format} is not durable; the policy requires "
                           "jsonl or session", "audit", 'use <audit format="session"/>',
                           runtime.audit.span)
        self.hashes(runtime)
        self.limits(runtime)

    def roots(self, runtime: ShellAccessDecl, kind: str, roots: tuple[Root, ...],
              allowed: tuple[str, ...] | None) -> None:
        if allowed is None:
            return
        for root in roots:
            text = str(root.path) if root.path is not None else f"path_env:{root.path_env}"
            if root.path is not None and any(text == a or text.startswith(a.rstrip("/") + "/")
                                             for a in allowed):
                continue
            self.violation(runtime, f"{kind}_root_denied",
                           f"{kind} root {text} (set by {root.origin}) is outside the allowed "
                           f"{kind} roots: {', '.join(allowed) or 'none'}",
                           f"capabilities.{kind}", f"use one of the allowed {kind} roots",
                           root.span if root.origin == runtime.id else None,
                           runtime.attribute_spans.get("extends"))

    def backends(self, runtime: ShellAccessDecl, extends_span: Span | None) -> None:
        policy = self.policy
        backends = runtime.backends
        assert backends is not None
        platform = self.compiled.platform
        for backend in backends.backends:
            span = backend.span if backend.origin == runtime.id else None
            label = backend.id or backend.kind
            if (backend.is_direct and backend.matches(platform)
                    and not policy.flag("allow_direct_backend")):
                self.violation(runtime, "direct_backend_denied",
                               f"backend {label} runs commands directly (set by "
                               f"{backend.origin}) but allow_direct_backend=false", "backends",
                               'remove it with <backends merge="replace">', span, extends_span)
            if backend.kind == "external_backend" and not policy.flag("allow_external_backends"):
                self.violation(runtime, "external_backend_denied",
                               f"external backend {label} is declared but "
                               "allow_external_backends=false", "backends",
                               "use a built-in backend", span, extends_span)
        if backends.accept_declared_confinement and not policy.flag("allow_declared_confinement"):
            self.violation(runtime, "declared_confinement_denied",
                           "accept_declared_confinement=true but the policy does not accept "
                           "declared confinement", "backends",
                           'set accept_declared_confinement="false"', backends.span)

    def extensions(self, runtime: ShellAccessDecl) -> None:
        policy = self.policy
        assert runtime.reviewers is not None
        allowed = policy.allowed_reviewer_kinds
        for reviewer in runtime.reviewers.reviewers:
            if allowed is not None and reviewer.kind not in allowed:
                self.violation(runtime, "reviewer_denied",
                               f"reviewer {reviewer.id} is of kind {reviewer.kind}; allowed "
                               f"kinds: {', '.join(allowed) or 'none'}", "reviewers",
                               "use an allowed reviewer kind", reviewer.span)
        if not policy.flag("allow_hooks"):
            for kind, _hook, entry in runtime_hooks(runtime):
                self.violation(runtime, "hooks_denied", f"an executable {kind} is declared but "
                               "allow_hooks=false", "hooks", "remove the hook",
                               getattr(entry, "span", None))
            for entry in _chatml_hooks(runtime):
                self.violation(runtime, "hooks_denied", f"the ChatML hook {entry.id} is "
                               "declared but allow_hooks=false", "hooks", "remove the hook",
                               entry.span)

    def approvals(self, runtime: ShellAccessDecl) -> None:
        policy = self.policy
        approvals = runtime.approvals
        assert approvals is not None
        scopes = approvals.scopes.value or ()
        allowed = policy.allowed_approval_scopes
        for scope in scopes:
            if allowed is not None and scope not in allowed:
                self.violation(runtime, "approval_scope_denied",
                               f"approval scope {scope} (set by {approvals.scopes.origin}) is not "
                               f"allowed; allowed scopes: {', '.join(allowed) or 'none'}",
                               "approvals.scopes", "remove the scope from scopes=...",
                               approvals.scopes.span)
        if "prefix_session" in scopes and not policy.flag("allow_raw_prefix_grants"):
            for tool in self.compiled.tools:
                if tool.runtime == runtime.id and isinstance(tool.mode, RawMode):
                    self.violation(runtime, "raw_prefix_grant_denied",
                                   f"raw tool {tool.name} could be granted by prefix "
                                   "(prefix_session) but allow_raw_prefix_grants=false",
                                   "approvals.scopes", "drop prefix_session from scopes",
                                   approvals.scopes.span, tool.span)

    def hashes(self, runtime: ShellAccessDecl) -> None:
        if not self.policy.flag("require_executable_hashes"):
            return
        assert runtime.resolver is not None and runtime.backends is not None
        for alias in runtime.resolver.executables:
            if not alias.sha256:
                self.violation(runtime, "executable_hash_required",
                               f"executable {alias.id} has no sha256 pin", "resolver.executable",
                               'add sha256="..." to the <executable>', alias.span)
        for backend in runtime.backends.backends:
            if backend.kind == "external_backend" and not backend.sha256:
                self.violation(runtime, "executable_hash_required",
                               f"external backend {backend.id or backend.executable} has no "
                               "sha256 pin", "backends", 'add sha256="..."', backend.span)
        for kind, hook, entry in runtime_hooks(runtime):
            if not hook.sha256:
                self.violation(runtime, "executable_hash_required",
                               f"the executable {kind} {getattr(entry, 'id', '')} has no sha256 "
                               "pin", "hooks", 'add sha256="..."', getattr(entry, "span", None))

    def limits(self, runtime: ShellAccessDecl) -> None:
        assert runtime.limits is not None
        for name, maximum in sorted(self.policy.limits.items()):
            setting: Setting[Any] = getattr(runtime.limits, name)
            value = setting.value
            if value is not None and value <= maximum:
                continue
            shown = "none (no limit)" if value is None else _show_limit(name, value)
            self.violation(runtime, f"limit_{name}",
                           f"limit {name} is {shown} (set by {setting.origin}); the ceiling is "
                           f"{_show_limit(name, maximum)}", f"limits.{name}",
                           f'set <limits {name}="{_show_limit(name, maximum)}"/> or lower',
                           setting.span)


def _show_limit(name: str, value: float | int) -> str:
    if name in DURATION_LIMITS:
        return format_duration(float(value))
    if name in BYTE_LIMITS:
        return format_bytes(int(value))
    return str(value)


def _chatml_hooks(runtime: ShellAccessDecl) -> Iterator[Any]:
    assert runtime.reviewers is not None and runtime.interceptors is not None
    assert runtime.effect_analysis is not None
    for reviewer in runtime.reviewers.reviewers:
        if reviewer.script is not None:
            yield reviewer
    for interceptor in runtime.interceptors.interceptors:
        if interceptor.script is not None:
            yield interceptor
    for analyzer in runtime.effect_analysis.analyzers:
        if analyzer.script is not None:
            yield analyzer


def check_admin_ceilings(compiled: CompiledShell, policy: AdminPolicy) -> list[Diagnostic]:
    """Every violation of ``policy`` by the compiled runtimes (all reported, spec §6.9)."""
    return _Checker(policy, compiled).run()
