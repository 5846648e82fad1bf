"""``chatmdc shell explain``: the effective, merged runtime of a prompt, for people.

For each runtime: the chain of layers it was built from (the runtime, its
declared ancestors, a built-in profile, the defaults), every effective
setting with the layer that set it (and where, when it was written in a
file), every list entry with the layer that contributed it, the tools bound
to it, and the problems that keep it from compiling. This is what a user
needs when a tool is refused: which profile granted what, and which ancestor
set each setting.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from chatcommon.sources import Span
from chatmd.shell.compile.compiler import CompiledShell
from chatmd.shell.compile.features import required_features
from chatmd.shell.declare.matchers import (
    AllOf,
    AnyCommand,
    AnyOf,
    ArgumentContains,
    ArgumentIs,
    ArgvPrefix,
    BasenameIs,
    ChatmlMatch,
    EffectIs,
    Matcher,
    NotMatcher,
    NoUnknownEffects,
    ProgramIs,
    ProgramRegex,
    RawShell,
    ResolvedPathIs,
    TrustedExecutable,
)
from chatmd.shell.declare.sections import BYTE_LIMITS, DURATION_LIMITS, LIMIT_NAMES, POWERS
from chatmd.shell.declare.settings import Setting
from chatmd.shell.declare.typed_declarations import ShellAccessDecl
from chatmd.shell.declare.values import PathExpr, format_bytes, format_duration

_VALUE_WIDTH = 34


class UnknownRuntimeError(LookupError):
    """``explain`` was asked about a runtime the prompt does not declare."""


def _where(span: Span | None) -> str:
    if span is None:
        return ""
    line, column = span.start_position
    return f" ({span.file}:{line}:{column})"


def _by(origin: str, span: Span | None = None) -> str:
    return f"set by {origin}{_where(span)}"


def _show(value: Any, name: str = "") -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, PathExpr):
        if value.base == "source_dir" and value.source_dir:
            joined = value.source_dir.rstrip("/") + ("/" + value.path if value.path else "")
            return f"{value} (= {joined})"
        return str(value)
    if isinstance(value, tuple):
        return ", ".join(_show(item) for item in value) or "(none)"
    if isinstance(value, float | int) and name in DURATION_LIMITS:
        return format_duration(float(value))
    if isinstance(value, int) and name in BYTE_LIMITS:
        return format_bytes(value)
    return str(value)


def _setting_line(label: str, setting: Setting[Any], name: str = "") -> str:
    if setting.state == "clear":
        value = "none (no limit)" if name in LIMIT_NAMES else "none"
    else:
        value = _show(setting.value, name)
    return f"  {label:<28} {value:<{_VALUE_WIDTH}} {_by(setting.origin, setting.span)}"


def _entry_line(text: str, entry: Any) -> str:
    return f"    {text:<{28 + _VALUE_WIDTH - 1}} {_by(entry.origin, entry.span)}"


def describe_matcher(matcher: Matcher) -> str:
    """A one-line reading of a matcher tree."""
    if isinstance(matcher, AnyCommand):
        return "any command"
    if isinstance(matcher, ProgramIs):
        return f"program is {matcher.value}"
    if isinstance(matcher, BasenameIs):
        return f"basename is {matcher.value}"
    if isinstance(matcher, ResolvedPathIs):
        return f"resolved path is {matcher.value}"
    if isinstance(matcher, TrustedExecutable):
        return "the executable is trusted"
    if isinstance(matcher, ProgramRegex):
        return f"program matches /{matcher.value}/"
    if isinstance(matcher, ArgvPrefix):
        return "argv starts with " + " ".join(matcher.values)
    if isinstance(matcher, ArgumentIs):
        return f"an argument is {matcher.value}"
    if isinstance(matcher, ArgumentContains):
        return f"an argument contains {matcher.value}"
    if isinstance(matcher, EffectIs):
        return f"effect {matcher.name}" + (f" under {matcher.under}" if matcher.under else "")
    if isinstance(matcher, NoUnknownEffects):
        return "no unknown effects"
    if isinstance(matcher, RawShell):
        return "a raw shell request"
    if isinstance(matcher, ChatmlMatch):
        return f"script {matcher.script}.{matcher.function} says yes"
    if isinstance(matcher, NotMatcher):
        return f"not ({describe_matcher(matcher.matcher)})"
    if isinstance(matcher, AllOf):
        return "all of (" + "; ".join(describe_matcher(m) for m in matcher.matchers) + ")"
    assert isinstance(matcher, AnyOf)
    return "any of (" + "; ".join(describe_matcher(m) for m in matcher.matchers) + ")"


def _paths(title: str, entries: Iterable[Any], show: Any) -> list[str]:
    entries = list(entries)
    lines = [f"  {title}:" + ("" if entries else " (none)")]
    lines += [_entry_line(show(entry), entry) for entry in entries]
    return lines


def _root_text(root: Any) -> str:
    if root.path is not None:
        return _show(root.path)
    return f"$({root.path_env})" + (" (optional)" if root.optional else "")


def _env_text(op: Any) -> str:
    tag = op.TAG
    if tag == "set":
        return f"set {op.name}={op.value}"
    if tag == "pass":
        flags = [flag for flag in ("required", "secret") if getattr(op, flag)]
        return f"pass {op.name}" + (f" ({', '.join(flags)})" if flags else "")
    if tag == "unset":
        return f"unset {op.name}"
    if tag == "unset_prefix":
        return f"unset every {op.prefix}*"
    if tag == "path":
        return f"PATH {op.position} {op.path}"
    return (f"PATH {op.position} $({op.name})" + (f"/{op.suffix}" if op.suffix else "")
            + (" (required)" if op.required else ""))


def _backend_text(backend: Any, platform: str) -> str:
    label = f"{backend.kind} {backend.id or ''}".strip()
    applies = "applies" if backend.matches(platform) else f"not on {platform}"
    return f"{label} when={backend.when} [{applies}]"


def _section_origin(section: Any) -> str:
    return f"    ({_by(section.origin, section.span)})"


def explain_runtime(compiled: CompiledShell, runtime: ShellAccessDecl) -> str:
    chain = compiled.chains.get(runtime.id, (runtime.id,))
    declared = ""
    if runtime.span is not None:
        line, column = runtime.span.start_position
        declared = f", declared at {runtime.span.file}:{line}:{column}"
    lines = [f"runtime {runtime.id}{declared}",
             "  built from: " + " <- ".join(chain)]
    if runtime.resolved_profile:
        requested = runtime.requested_profile
        lines.append(f"  profile: {runtime.resolved_profile}"
                     + (f" (requested as {requested})"
                        if requested != runtime.resolved_profile else ""))
    assert runtime.capabilities is not None and runtime.resolver is not None
    assert runtime.environment is not None and runtime.limits is not None
    assert runtime.backends is not None and runtime.policy is not None
    assert runtime.approvals is not None and runtime.secrets is not None
    capabilities = runtime.capabilities
    lines += ["", "general", _setting_line("cwd", runtime.cwd),
              _setting_line("pipefail", runtime.pipefail),
              "", "capabilities", _setting_line("sandbox", capabilities.sandbox)]
    lines += [_setting_line(power, getattr(capabilities, power)) for power in POWERS]
    lines += _paths("read roots", capabilities.reads, _root_text)
    lines += _paths("write roots (also readable)", capabilities.writes, _root_text)
    resolver = runtime.resolver
    lines += ["", "resolver", _setting_line("allow_relative_search_path",
                                            resolver.allow_relative_search_path)]
    lines += _paths("search path", resolver.search_paths, lambda e: _show(e.path))
    lines += _paths("trusted roots", resolver.trusted_roots, lambda e: _show(e.path))
    lines += _paths("executables", resolver.executables,
                    lambda e: f"{e.id} -> {e.path}" + (" (trusted)" if e.trusted else "")
                    + (f" sha256 {e.sha256}" if e.sha256 else ""))
    lines += ["", "environment", _setting_line("inherit", runtime.environment.inherit)]
    lines += _paths("operations (in order)", runtime.environment.operations, _env_text)
    lines += ["", "limits"]
    lines += [_setting_line(name, getattr(runtime.limits, name), name) for name in LIMIT_NAMES]
    backends = runtime.backends
    lines += ["", "backends",
              f"  {'accept_declared_confinement':<28} "
              f"{_show(backends.accept_declared_confinement):<{_VALUE_WIDTH}} "
              f"{_by(backends.origin, backends.span)}"]
    lines += _paths("backends (in order)", backends.backends,
                    lambda b: _backend_text(b, compiled.platform))
    lines += ["", "policy", _setting_line("default", runtime.policy.default)]
    lines += _paths("rules (deny > ask > allow among matching rules)", runtime.policy.rules,
                    lambda r: f"{r.id}: {r.action} when {describe_matcher(r.matcher)}")
    approvals = runtime.approvals
    lines += ["", "approvals", _setting_line("provider", approvals.provider),
              _setting_line("unavailable", approvals.unavailable),
              _setting_line("scopes", approvals.scopes),
              _setting_line("durable", approvals.durable)]
    lines += _extensions(runtime)
    lines += ["", "secrets", _setting_line("replacement", runtime.secrets.replacement)]
    lines += _paths("sources", runtime.secrets.sources,
                    lambda s: {"from_env": f"environment {s.name}",
                               "from_file": f"file {s.path}",
                               "literal": "a literal value (never shown)"}[s.kind]
                    + (" (optional)" if s.optional else ""))
    tools = [tool for tool in compiled.tools if tool.runtime == runtime.id]
    lines += ["", "tools bound to this runtime: "
              + (", ".join(f"{tool.name} ({tool.mode_name})" for tool in tools) or "none")]
    needed = required_features([runtime], tools, compiled.platform)
    lines += ["", f"features needed on {compiled.platform}"]
    for feature in sorted(needed):
        verdict = "supported" if feature in compiled.features else "NOT SUPPORTED"
        lines.append(f"  {feature:<36} {verdict:<14} ({needed[feature].reason})")
    problems = [d for d in compiled.diagnostics if _concerns(d.path, d.message, runtime.id,
                                                             {t.name for t in tools})]
    if problems:
        lines += ["", "problems"]
        lines += [f"  {d.severity.value}[{d.code}] {d.file}:{d.line}:{d.column}: {d.message}"
                  for d in problems]
    return "\n".join(lines) + "\n"


def _extensions(runtime: ShellAccessDecl) -> list[str]:
    assert runtime.reviewers is not None and runtime.interceptors is not None
    assert runtime.effect_analysis is not None and runtime.audit is not None
    lines = ["", "reviewers (strategy " + runtime.reviewers.strategy + ")",
             _section_origin(runtime.reviewers)]
    lines += [_entry_line(f"{r.id}: {r.kind}" + (f" script {r.script}" if r.script else "")
                          + (f" agent {r.agent}" if r.agent else "")
                          + (f" via worker {r.hook.runtime}" if r.hook else ""), r)
              for r in runtime.reviewers.reviewers] or ["    (none)"]
    lines += ["", "interceptors", _section_origin(runtime.interceptors)]
    lines += [_entry_line(f"{i.id}: {i.phase}" + (f" script {i.script}" if i.script else "")
                          + (f" via worker {i.hook.runtime}" if i.hook else "")
                          + (f" when {describe_matcher(i.match)}" if i.match else ""), i)
              for i in runtime.interceptors.interceptors] or ["    (none)"]
    lines += ["", "effect analysis", _section_origin(runtime.effect_analysis)]
    lines += [_entry_line(f"{a.id}: {a.kind}" + (f" script {a.script}" if a.script else "")
                          + (" (replaces built-in effects)" if a.replace else ""), a)
              for a in runtime.effect_analysis.analyzers] or ["    (none)"]
    audit = runtime.audit
    lines += ["", "audit", _section_origin(audit),
              f"    format {audit.format}" + (f", path {audit.path}" if audit.path else "")
              + f", content {audit.content}, on failure {audit.failure}"]
    return lines


def _concerns(path: tuple[str, ...], message: str, runtime_id: str, tools: set[str]) -> bool:
    if path[:2] == ("runtime", runtime_id):
        return True
    if len(path) >= 2 and path[0] == "tool" and path[1] in tools:
        return True
    return f"runtime {runtime_id} " in message or f"runtime {runtime_id})" in message


def explain(compiled: CompiledShell, runtime_id: str | None = None) -> str:
    """The readable summary of one runtime (or of every runtime when ``runtime_id`` is None).

    Raises :class:`UnknownRuntimeError` when ``runtime_id`` names no runtime.
    """
    if runtime_id is not None:
        runtime = compiled.runtimes.get(runtime_id)
        if runtime is None:
            problems = [d for d in compiled.diagnostics if d.path[:2] == ("runtime", runtime_id)]
            if problems:
                return (f"runtime {runtime_id} does not resolve:\n"
                        + "".join(f"  {d.severity.value}[{d.code}] {d.file}:{d.line}:"
                                  f"{d.column}: {d.message}\n" for d in problems))
            known = ", ".join(sorted(compiled.runtimes)) or "none"
            raise UnknownRuntimeError(f"no runtime {runtime_id!r} in this prompt; "
                                      f"runtimes: {known}")
        return explain_runtime(compiled, runtime)
    if not compiled.runtimes:
        return "no shell runtimes in this prompt\n"
    return "\n".join(explain_runtime(compiled, compiled.runtimes[key])
                     for key in sorted(compiled.runtimes))
