"""The shell runtime compiler (spec §6.2): declarations to one canonical manifest.

Steps, in the spec's order: desugar legacy tools (adding ``legacy:custom``),
index runtimes, tools and scripts (duplicates stop compilation), resolve
inheritance, validate runtimes and tools, resolve script references, gate
features, then either return every diagnostic (deduplicated and sorted) or
build the manifest and warn about unused shell scripts. There is no partial
result: a tool whose runtime fails to compile is never published.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence

import attrs

from chatcommon.diagnostics import Diagnostic, Severity
from chatmd.shell.compile.features import SUPPORTED_FEATURES, required_features
from chatmd.shell.compile.inheritance import resolve_runtimes
from chatmd.shell.compile.legacy import desugar_legacy_tool, legacy_runtime
from chatmd.shell.compile.manifest import ShellManifest, build_manifest
from chatmd.shell.compile.references import check_script_references, script_references
from chatmd.shell.compile.reporting import compile_diagnostic, finalise, related_at, where_of
from chatmd.shell.compile.validate import (
    check_dependency_cycles,
    check_moderator,
    check_runtime,
    check_tool,
    worker_edges,
)
from chatmd.shell.declare.typed_declarations import (
    LegacyToolDecl,
    ModeratorRuntimeDecl,
    ShellAccessDecl,
    ShellScript,
    ShellToolDecl,
)


def host_platform() -> str:
    """The compile platform of this host: ``macos``, ``linux`` or ``any``."""
    if sys.platform == "darwin":
        return "macos"
    if sys.platform.startswith("linux"):
        return "linux"
    return "any"


@attrs.frozen
class CompiledShell:
    """The result of compiling a prompt's shell declarations.

    ``manifest`` is None when there is any error (or nothing to compile).
    ``runtimes`` holds every runtime whose inheritance resolved, even when a
    later step failed, and ``chains`` the layers each was built from (for
    ``explain``). ``tools`` are the shell tools after legacy desugaring.
    """

    manifest: ShellManifest | None
    runtimes: Mapping[str, ShellAccessDecl]
    chains: Mapping[str, tuple[str, ...]]
    tools: tuple[ShellToolDecl, ...]
    diagnostics: tuple[Diagnostic, ...]
    platform: str
    features: frozenset[str]

    @property
    def ok(self) -> bool:
        return not any(d.is_error for d in self.diagnostics)


def _duplicates(items: Sequence[object], key: str, kind: str, code: str) -> list[Diagnostic]:
    seen: dict[str, object] = {}
    problems: list[Diagnostic] = []
    for item in items:
        ident = getattr(item, key)
        if ident not in seen:
            seen[ident] = item
            continue
        problems.append(compile_diagnostic(
            where_of(item), code, f"duplicate {kind}: {ident} is declared more than once",
            (kind, ident), related=[related_at(where_of(seen[ident]), "first declared here")]))
    return problems


def compile_runtimes(runtimes: Iterable[ShellAccessDecl],
                     tools: Iterable[ShellToolDecl] = (), *,
                     legacy_tools: Iterable[LegacyToolDecl] = (),
                     scripts: Iterable[ShellScript] = (),
                     moderator: ModeratorRuntimeDecl | None = None,
                     platform: str | None = None,
                     features: Iterable[str] = SUPPORTED_FEATURES) -> CompiledShell:
    """Compile declared runtimes and shell tools into one manifest (spec §6.2)."""
    platform = platform or host_platform()
    supported = frozenset(features)
    declared = list(runtimes)
    legacy = list(legacy_tools)
    all_tools = list(tools) + [desugar_legacy_tool(tool) for tool in legacy]
    if legacy:
        declared.append(legacy_runtime(legacy[0]))
    script_list = list(scripts)

    def result(diagnostics: Iterable[Diagnostic], manifest: ShellManifest | None = None,
               resolved: Mapping[str, ShellAccessDecl] | None = None,
               chains: Mapping[str, tuple[str, ...]] | None = None) -> CompiledShell:
        return CompiledShell(manifest, resolved or {}, chains or {},
                             tuple(sorted(all_tools, key=lambda t: t.name)),
                             finalise(diagnostics), platform, supported)

    # step 3: index; duplicates stop compilation
    problems = (_duplicates(declared, "id", "runtime", "shell.duplicate_runtime")
                + _duplicates(all_tools, "name", "tool", "shell.duplicate_tool")
                + _duplicates(script_list, "id", "script", "shell.duplicate_script"))
    if problems:
        return result(problems)
    by_id = {runtime.id: runtime for runtime in declared}
    script_index = {script.id: script for script in script_list}
    if not declared and not all_tools and moderator is None:
        return result(_unused_scripts(script_list, set()))

    # step 4: inheritance
    resolution = resolve_runtimes(by_id, platform)
    problems = list(resolution.diagnostics)
    resolved = resolution.runtimes
    ordered = [resolved[key] for key in sorted(resolved)]
    declared_ids = sorted(by_id)

    # step 6: validation
    for runtime in ordered:
        problems += check_runtime(runtime, declared_ids, platform)
    for tool in sorted(all_tools, key=lambda t: t.name):
        problems += check_tool(tool, resolved, declared_ids)
    problems += check_moderator(moderator, declared_ids)
    problems += check_dependency_cycles(resolved)

    # step 7: script references
    for runtime in ordered:
        problems += check_script_references(runtime, script_index)

    # step 8: features
    needed = required_features(ordered, sorted(all_tools, key=lambda t: t.name), platform)
    for feature in sorted(needed):
        if feature not in supported:
            requirement = needed[feature]
            problems.append(compile_diagnostic(
                requirement.span, "shell.unsupported_feature",
                f"feature {feature} is not supported by this implementation "
                f"({requirement.reason}); the declaration fails closed",
                ("features", feature), hint=_feature_hint(feature, supported)))
    if any(d.is_error for d in problems) or len(resolved) != len(by_id):
        return result(problems, resolved=resolved, chains=resolution.chains)

    # step 9: the manifest
    referenced: dict[str, ShellScript] = {}
    dependencies: list[tuple[str, str, str]] = []
    for runtime in ordered:
        for reference in script_references(runtime):
            referenced[reference.script] = script_index[reference.script]
            dependencies.append((runtime.id, f"script:{reference.script}", "chatml_extension"))
    for caller, targets in worker_edges(resolved).items():
        dependencies += [(caller, target, "worker_runtime") for target, _ in targets]
    dependencies += [(f"tool:{tool.name}", tool.runtime, "tool_runtime") for tool in all_tools]
    if moderator is not None:
        dependencies.append(("moderator", moderator.runtime, "moderator_runtime"))
    manifest = build_manifest(
        platform=platform, runtimes=ordered, tools=all_tools,
        moderator_runtime=moderator.runtime if moderator else None,
        scripts=referenced.values(), dependencies=dependencies, required_features=needed)
    warnings = _unused_scripts(script_list, set(referenced))
    return result(problems + warnings, manifest, resolved, resolution.chains)


def _feature_hint(feature: str, supported: frozenset[str]) -> str:
    hint = "this implementation supports: " + ", ".join(sorted(supported))
    if feature in ("shell.backend.bubblewrap.v1", "shell.backend.seatbelt.v1") and (
            "shell.backend.direct.v1" in supported):
        hint += ('; without a sandbox backend a runtime compiles only with direct execution: '
                 '<capabilities sandbox="preferred"/> and <backends merge="replace"><direct/>'
                 "</backends> (commands then run unconfined, under policy and approvals)")
    return hint


def _unused_scripts(scripts: Sequence[ShellScript], used: set[str]) -> list[Diagnostic]:
    warnings = []
    for script in scripts:
        if script.kind.startswith("shell_") and script.id not in used:
            warnings.append(compile_diagnostic(
                where_of(script), "chatmd.unused_script",
                f"script {script.id} ({script.kind}) is not used by any shell runtime",
                ("script", script.id), severity=Severity.WARNING,
                hint="reference it from a runtime, or remove it"))
    return warnings
