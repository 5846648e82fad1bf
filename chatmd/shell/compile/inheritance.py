"""Inheritance resolution (spec §6.2 step 4): every declared runtime merged onto its base.

The base is the defaults runtime (no ``extends``), a declared runtime
(resolved first; declared runtimes shadow built-in profiles of the same name)
or a built-in profile. Runtimes are visited in id order, so the diagnostics
and the reported cycle are the same on every run. Each distinct cycle is
reported once, spelled out (``a -> b -> a``); a runtime whose parent failed is
not reported again. The chain of layers each runtime was built from is kept
for ``chatmdc shell explain``.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from chatcommon.diagnostics import Diagnostic
from chatmd.shell.compile.defaults import defaults_runtime
from chatmd.shell.compile.merge import merge_runtime
from chatmd.shell.compile.profiles import PREFIX, expand_profile, parse_profile_ref, profile_names
from chatmd.shell.compile.reporting import Where, compile_diagnostic, location
from chatmd.shell.declare.settings import DEFAULTS_ORIGIN
from chatmd.shell.declare.typed_declarations import ShellAccessDecl


@attrs.frozen
class Resolution:
    """Resolved runtimes by id (failed ones absent), their layer chains, and diagnostics."""

    runtimes: Mapping[str, ShellAccessDecl]
    chains: Mapping[str, tuple[str, ...]]
    diagnostics: tuple[Diagnostic, ...]


def _extends_span(runtime: ShellAccessDecl) -> Where:
    return location(runtime.attribute_spans.get("extends"), runtime.span, runtime.provenance)


class _Resolver:
    def __init__(self, declared: Mapping[str, ShellAccessDecl], platform: str) -> None:
        self.declared = declared
        self.platform = platform
        self.done: dict[str, ShellAccessDecl | None] = {}
        self.chains: dict[str, tuple[str, ...]] = {}
        self.diagnostics: list[Diagnostic] = []
        self.reported_cycles: set[frozenset[str]] = set()

    def resolve(self, runtime_id: str, stack: list[str]) -> ShellAccessDecl | None:
        if runtime_id in self.done:
            return self.done[runtime_id]
        runtime = self.declared[runtime_id]
        parent_id = runtime.extends
        base: ShellAccessDecl | None
        chain: tuple[str, ...]
        stack.append(runtime_id)
        if parent_id is None:
            base, chain = defaults_runtime(runtime_id), (DEFAULTS_ORIGIN,)
        elif parent_id in self.declared:
            if parent_id in stack:
                self._cycle(runtime, stack[stack.index(parent_id):] + [parent_id])
                for member in stack[stack.index(parent_id):]:
                    self.done[member] = None
                stack.pop()
                return None
            base = self.resolve(parent_id, stack)
            chain = (parent_id,) + self.chains.get(parent_id, ())
        elif parent_id.startswith(PREFIX):
            source_dir = runtime.provenance.source_dir if runtime.provenance else ""
            base = expand_profile(parent_id, runtime_id, self.platform, source_dir)
            chain = ()
            if base is None:
                self.diagnostics.append(compile_diagnostic(
                    _extends_span(runtime), "shell.unknown_builtin_profile",
                    f"unknown built-in profile {parent_id!r} in runtime {runtime_id}",
                    ("runtime", runtime_id, "extends"),
                    hint="built-in profiles: " + ", ".join(profile_names())))
            else:
                profile = parse_profile_ref(parent_id)
                assert profile is not None
                chain = (profile.resolved, DEFAULTS_ORIGIN)
        else:
            base, chain = None, ()
            known = ", ".join(sorted(self.declared)) or "none declared"
            self.diagnostics.append(compile_diagnostic(
                _extends_span(runtime), "shell.unknown_runtime",
                f"unknown parent runtime: {parent_id} (runtime {runtime_id} extends it); "
                f"declared runtimes: {known}", ("runtime", runtime_id, "extends"),
                hint="extend a declared <shell_access id>, or a built-in profile such as "
                "builtin:workspace-readonly@1"))
        stack.pop()
        if runtime_id in self.done:  # marked failed by a cycle found below this runtime
            return None
        if base is None:
            self.done[runtime_id] = None
            return None
        merged, problems = merge_runtime(runtime, base)
        self.diagnostics.extend(problems)
        self.done[runtime_id] = merged
        self.chains[runtime_id] = chain
        return merged

    def _cycle(self, runtime: ShellAccessDecl, loop: list[str]) -> None:
        members = frozenset(loop)
        if members in self.reported_cycles:
            return
        self.reported_cycles.add(members)
        self.diagnostics.append(compile_diagnostic(
            _extends_span(runtime), "shell.inheritance_cycle",
            "inheritance cycle: " + " -> ".join(loop), ("runtime", runtime.id, "extends"),
            hint="a runtime cannot extend itself, directly or through other runtimes"))


def resolve_runtimes(declared: Mapping[str, ShellAccessDecl], platform: str) -> Resolution:
    """Resolve every runtime in ``declared`` (ids unique) for compile ``platform``."""
    resolver = _Resolver(declared, platform)
    for runtime_id in sorted(declared):
        resolver.resolve(runtime_id, [])
    resolved = {key: value for key, value in resolver.done.items() if value is not None}
    chains = {key: (key,) + chain for key, chain in resolver.chains.items() if key in resolved}
    return Resolution(resolved, chains, tuple(resolver.diagnostics))
