"""Compile-time validation of resolved runtimes and tools (spec §6.2 step 6, §6.6).

Per runtime: every setting resolved, sandbox/backend compatibility on the
compile platform, matcher sanity, external backend templates, worker runtimes
of executable hooks. Per tool: its runtime exists, ``executable_ref`` names an
alias of the resolved runtime, argument bounds, the compact command parses as
one simple command. The moderator binding names a runtime. Caller → worker
edges have no cycle. Entries inherited from a parent were checked where they
were declared, so each problem is reported once.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import attrs

from chatcommon.diagnostics import Diagnostic
from chatmd.shell.compile.chain import ChainError, parse_chain
from chatmd.shell.compile.reporting import Where, compile_diagnostic, location, where_of
from chatmd.shell.declare.matchers import AllOf, AnyOf, ArgvPrefix, Matcher, ProgramRegex, walk
from chatmd.shell.declare.sections import Hook
from chatmd.shell.declare.settings import Setting
from chatmd.shell.declare.typed_declarations import (
    ArgvCommand,
    CompactCommand,
    FixedMode,
    ModeratorRuntimeDecl,
    ShellAccessDecl,
    ShellToolDecl,
)


def settings_of(node: Any, prefix: str = "") -> Iterator[tuple[str, Setting[Any]]]:
    """Every tri-state setting reachable from ``node`` (runtime or section), by dotted name."""
    if not attrs.has(type(node)):
        return
    for field in attrs.fields(type(node)):
        value = getattr(node, field.name)
        if isinstance(value, Setting):
            yield prefix + field.name, value
        elif attrs.has(type(value)):
            yield from settings_of(value, f"{prefix}{field.name}.")


def runtime_hooks(runtime: ShellAccessDecl) -> Iterator[tuple[str, Hook, Any]]:
    """(kind, hook, declaring entry) for every executable hook of ``runtime``."""
    if runtime.reviewers is not None:
        for reviewer in runtime.reviewers.reviewers:
            if reviewer.hook is not None:
                yield "reviewer", reviewer.hook, reviewer
    if runtime.interceptors is not None:
        for interceptor in runtime.interceptors.interceptors:
            if interceptor.hook is not None:
                yield "interceptor", interceptor.hook, interceptor
    if runtime.effect_analysis is not None:
        for analyzer in runtime.effect_analysis.analyzers:
            if analyzer.hook is not None:
                yield "analyzer", analyzer.hook, analyzer
    if runtime.audit is not None and runtime.audit.filter is not None:
        audit_filter = runtime.audit.filter
        if audit_filter.hook is not None:
            yield "audit filter", audit_filter.hook, runtime.audit


def runtime_matchers(runtime: ShellAccessDecl) -> Iterator[tuple[Matcher, Any]]:
    """(matcher, declaring entry) for every matcher node of rules and interceptor matches."""
    if runtime.policy is not None:
        for rule in runtime.policy.rules:
            for matcher in walk(rule.matcher):
                yield matcher, rule
    if runtime.interceptors is not None:
        for interceptor in runtime.interceptors.interceptors:
            if interceptor.match is not None:
                for matcher in walk(interceptor.match):
                    yield matcher, interceptor


def _label(kind: str, entry: Any) -> str:
    ident = getattr(entry, "id", None)
    return f"{kind} {ident}" if isinstance(ident, str) and ident else kind


def _own(entry: Any, runtime: ShellAccessDecl) -> bool:
    return getattr(entry, "origin", None) == runtime.id


def check_backends(runtime: ShellAccessDecl, platform: str) -> list[Diagnostic]:
    """Sandbox/backend compatibility (§6.6) and external backend templates."""
    problems: list[Diagnostic] = []
    assert runtime.capabilities is not None and runtime.backends is not None
    sandbox = runtime.capabilities.sandbox.value
    backends = runtime.backends.backends
    matching = [b for b in backends if b.matches(platform)]
    where = ("runtime", runtime.id, "backends")
    span = location(runtime.backends.span, where_of(runtime))
    if sandbox == "required" and not any(b.is_confining for b in matching):
        problems.append(compile_diagnostic(
            span, "shell.incompatible_backend",
            f"runtime {runtime.id} requires a sandbox but has no confining backend for "
            f"{platform} (seatbelt, bubblewrap, or an external backend with confinement)",
            where, hint='declare a confining backend, or set <capabilities sandbox="preferred">'))
    elif sandbox == "preferred" and not backends:
        problems.append(compile_diagnostic(
            span, "shell.incompatible_backend",
            f"runtime {runtime.id} prefers a sandbox but declares no backend at all", where))
    elif sandbox == "direct_unsafe" and not any(b.is_direct for b in matching):
        problems.append(compile_diagnostic(
            span, "shell.incompatible_backend",
            f"runtime {runtime.id} is direct_unsafe but has no direct backend for {platform}",
            where, hint="add <direct/> to <backends>"))
    for backend in backends:
        if backend.kind != "external_backend" or not _own(backend, runtime):
            continue
        here = location(backend.span, span)
        argv_atoms = sum(1 for atom in backend.template if atom.kind == "command_argv")
        if argv_atoms != 1:
            problems.append(compile_diagnostic(
                here, "shell.external_backend_command_argv",
                f"external backend {backend.id or backend.executable} must contain exactly one "
                f"<command_argv/>, found {argv_atoms}", where,
                hint="<command_argv/> marks where the target command goes"))
        if backend.confinement == "verified":
            problems.append(compile_diagnostic(
                here, "shell.external_backend_unverifiable",
                f"external backend {backend.id or backend.executable} cannot claim "
                'confinement="verified": user-defined wrappers are never verified', where,
                hint='use confinement="declared" with <backends accept_declared_confinement='
                '"true">, or "none"'))
    return problems


def check_runtime(runtime: ShellAccessDecl, declared_ids: Sequence[str],
                  platform: str) -> list[Diagnostic]:
    problems: list[Diagnostic] = []
    runtime_span = where_of(runtime)
    for name, setting in settings_of(runtime):
        if setting.is_inherit:
            problems.append(compile_diagnostic(
                runtime_span, "shell.unresolved_setting",
                f"setting {name} of runtime {runtime.id} was never resolved",
                ("runtime", runtime.id, name)))
    problems += check_backends(runtime, platform)
    for matcher, entry in runtime_matchers(runtime):
        if not _own(entry, runtime):
            continue
        where = ("runtime", runtime.id, "policy")
        span = location(matcher.span, entry.span, runtime_span)
        if isinstance(matcher, AllOf | AnyOf) and not matcher.matchers:
            problems.append(compile_diagnostic(span, "shell.empty_matcher",
                                               f"<{matcher.TAG}> has no matcher", where))
        elif isinstance(matcher, ProgramRegex) and not matcher.value:
            problems.append(compile_diagnostic(span, "shell.empty_regex",
                                               "<program_regex> has an empty pattern", where))
        elif isinstance(matcher, ArgvPrefix) and not matcher.values:
            problems.append(compile_diagnostic(span, "shell.invalid_argv_prefix",
                                               "<argv_prefix> has no values", where))
    for kind, hook, entry in runtime_hooks(runtime):
        if _own(entry, runtime) and hook.runtime not in declared_ids:
            problems.append(compile_diagnostic(
                location(hook.runtime_span, entry.span, runtime_span),
                "shell.unknown_worker_runtime",
                f"unknown worker runtime {hook.runtime!r} for the {_label(kind, entry)} of "
                f"runtime {runtime.id}",
                ("runtime", runtime.id, kind.replace(" ", "_")),
                hint="executable hooks run through a declared <shell_access> runtime"))
    return problems


def check_tool(tool: ShellToolDecl, runtimes: Mapping[str, ShellAccessDecl],
               declared_ids: Sequence[str]) -> list[Diagnostic]:
    problems: list[Diagnostic] = []
    tool_span = where_of(tool)
    spans = tool.attribute_spans
    if tool.runtime not in declared_ids:
        known = ", ".join(sorted(declared_ids)) or "none declared"
        problems.append(compile_diagnostic(
            location(spans.get("runtime"), tool_span), "shell.unknown_runtime",
            f"unknown runtime {tool.runtime!r} for tool {tool.name}; declared runtimes: {known}",
            ("tool", tool.name, "runtime"),
            hint="declare it with <shell_access id=...>; imported ids are qualified with "
            "their namespace (team:ID)"))
    mode = tool.mode
    if not isinstance(mode, FixedMode):
        return problems
    arguments = mode.arguments
    if (arguments.min_count is not None and arguments.max_count is not None
            and arguments.min_count > arguments.max_count):
        problems.append(compile_diagnostic(
            location(arguments.span, tool_span), "shell.invalid_argument_bounds",
            f"tool {tool.name}: min_count {arguments.min_count} is greater than max_count "
            f"{arguments.max_count}", ("tool", tool.name, "arguments")))
    command = mode.command
    if isinstance(command, CompactCommand):
        try:
            chain = parse_chain(command.text)
        except ChainError as error:
            problems.append(compile_diagnostic(
                location(spans.get("command"), tool_span), "shell.tool_invalid_fixed_command",
                f"tool {tool.name}: command {command.text!r} does not parse: {error.message} "
                f"at byte {error.offset}", ("tool", tool.name, "command"),
                hint="a fixed command is one program with literal arguments; pipes, "
                "redirections and substitutions are not allowed"))
        else:
            if chain.single_command is None:
                problems.append(compile_diagnostic(
                    location(spans.get("command"), tool_span), "shell.tool_invalid_fixed_command",
                    f"tool {tool.name}: command {command.text!r} must be a single command, "
                    "not a pipeline or sequence", ("tool", tool.name, "command"),
                    hint='use mode="chain" for pipelines'))
    elif isinstance(command, ArgvCommand) and command.executable_ref is not None:
        runtime = runtimes.get(tool.runtime)
        if runtime is not None and runtime.resolver is not None:
            aliases = [alias.id for alias in runtime.resolver.executables]
            if command.executable_ref not in aliases:
                problems.append(compile_diagnostic(
                    location(command.span, spans.get("executable_ref"), tool_span),
                    "shell.unknown_executable",
                    f"tool {tool.name}: runtime {tool.runtime} has no executable "
                    f"{command.executable_ref!r}; its aliases: "
                    + (", ".join(aliases) or "none"),
                    ("tool", tool.name, "executable_ref"),
                    hint='declare <resolver><executable id="..." path="..."/></resolver>'))
    return problems


def check_moderator(moderator: ModeratorRuntimeDecl | None,
                    declared_ids: Sequence[str]) -> list[Diagnostic]:
    if moderator is None or moderator.runtime in declared_ids:
        return []
    return [compile_diagnostic(where_of(moderator), "shell.unknown_runtime",
                               f"unknown runtime {moderator.runtime!r} for <moderator_runtime>",
                               ("moderator_runtime",),
                               hint="name a declared <shell_access id=...>")]


def worker_edges(runtimes: Mapping[str, ShellAccessDecl]
                 ) -> dict[str, list[tuple[str, Where | None]]]:
    """Caller → worker runtime edges of executable hooks (inherited hooks count)."""
    edges: dict[str, list[tuple[str, Where | None]]] = {}
    for runtime_id in sorted(runtimes):
        for _, hook, entry in runtime_hooks(runtimes[runtime_id]):
            edges.setdefault(runtime_id, []).append(
                (hook.runtime, hook.runtime_span or entry.span))
    return edges


def check_dependency_cycles(runtimes: Mapping[str, ShellAccessDecl]) -> list[Diagnostic]:
    """``shell.runtime_dependency_cycle`` for each distinct cycle of caller → worker edges."""
    edges = worker_edges(runtimes)
    problems: list[Diagnostic] = []
    reported: set[frozenset[str]] = set()
    finished: set[str] = set()

    def visit(node: str, stack: list[str]) -> None:
        if node in finished:
            return
        stack.append(node)
        for target, span in edges.get(node, []):
            if target in stack:
                loop = stack[stack.index(target):] + [target]
                if frozenset(loop) not in reported:
                    reported.add(frozenset(loop))
                    problems.append(compile_diagnostic(
                        location(span, where_of(runtimes[node])), "shell.runtime_dependency_cycle",
                        "runtime dependency cycle: " + " -> ".join(loop), ("dependencies",),
                        hint="a hook's worker runtime cannot (directly or indirectly) use "
                        "hooks that run through the calling runtime"))
            elif target in runtimes:
                visit(target, stack)
        stack.pop()
        finished.add(node)

    for runtime_id in sorted(edges):
        visit(runtime_id, [])
    return problems
