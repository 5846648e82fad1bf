"""Compiling moderator scripts once per prompt load, and instantiating them per session
(moderator-runtime spec 1.1, stdlib spec 9.1).

:class:`ModeratorRegistry` compiles a ``<script kind="moderator">`` (or any
ChatML source) against the moderator or UI-moderator surface: parse,
typecheck, the host contract of :mod:`chatml.typecheck.contracts`, bytecode. The
result, an :class:`Artifact`, is cached by source hash (MD5 hex of the
source text, as snapshots record it), surface, script id and where the source
sits, so compiling the same declaration twice gives the same artifact.
Compile errors raise :class:`~runtime.errors.ModeratorLoadError` carrying
every diagnostic, positioned in the prompt (inline scripts) or the ``src``
file.

:meth:`Artifact.instantiate` gives a fresh :class:`ScriptInstance` -- the
bytecode loaded into a new environment and its top level run -- so each
session has its own globals, ``initial_state`` and ``on_event``.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from typing import Any

import attrs

import runtime.builtins  # noqa: F401  (registers Item, Tool_call and Context)
from chatcommon.diagnostics import Diagnostic, DiagnosticError
from chatcommon.sources import SourceFile
from chatml.calls import ChatMLRuntimeError
from chatml.engine import Engine, Script
from chatml.limits import Limits
from chatml.typecheck.contracts import check_contract
from chatml.values import Value
from chatml.vm.loader import load
from chatml.vm.run import run_program
from runtime.errors import ModeratorLoadError

SURFACES = ("moderator", "ui_moderator")


def source_hash(text: str) -> str:
    """Lowercase hex MD5 of ``text`` (UTF-8): the script hash snapshots record."""
    return hashlib.md5(text.encode("utf-8"), usedforsecurity=False).hexdigest()


@attrs.frozen
class ScriptInstance:
    """One session's loaded script: its own globals, ``initial_state`` and ``on_event``."""

    initial_state: Value = attrs.field(eq=False)
    on_event: Value = attrs.field(eq=False)


@attrs.frozen(eq=False)
class Artifact:
    """A compiled moderator: id, MD5 source hash, surface, and the loaded compile."""

    script_id: str
    source_hash: str
    surface: str
    compiled: Script = attrs.field(repr=False)
    source: SourceFile = attrs.field(repr=False)
    warnings: tuple[Diagnostic, ...] = attrs.field(default=(), repr=False)

    @property
    def file(self) -> str:
        return self.source.name

    def on_event_position(self) -> tuple[int, int]:
        """(line, column) of the ``on_event`` binding, where handler failures point when the
        failing expression is unknown (a ``Task.fail`` or an operation error)."""
        for binding in reversed(self.compiled.types.bindings):
            if binding.name == "on_event" and binding.span is not None:
                return binding.span.start_position
        return 1, 1

    def instantiate(self, limits: Limits | None = None,
                    sink: Callable[[str], Any] | None = None) -> ScriptInstance:
        """Load the bytecode into a fresh environment and run its top level.

        A failing top level raises :class:`ModeratorLoadError` with the runtime
        diagnostic; so does a missing ``initial_state``/``on_event``.
        """
        program = load(self.compiled.program.module, self.compiled.host.runtime_values(),
                       self.source)
        try:
            run_program(program, limits, sink=sink or _discard)
        except ChatMLRuntimeError as error:
            raise ModeratorLoadError(
                f"moderator '{self.script_id}': its top level failed: {error.message}",
                [error.diagnostic]) from None
        top = program.top_level()
        for name in ("initial_state", "on_event"):
            if name not in top:
                message = f"Missing {name} binding '{name}'"
                raise ModeratorLoadError(message, [Diagnostic.for_file(
                    self.file, "runtime.missing_binding", message, phase="moderation")])
        if not callable(top["on_event"]):
            message = "Entrypoint 'on_event' is not callable"
            raise ModeratorLoadError(message, [Diagnostic.for_file(
                self.file, "runtime.not_callable", message, phase="moderation")])
        return ScriptInstance(top["initial_state"], top["on_event"])


def _discard(text: str) -> None:
    return None


class ModeratorRegistry:
    """Compiles moderator scripts and caches the artifacts (thread-safe)."""

    def __init__(self) -> None:
        self._engines: dict[str, Engine] = {}
        self._artifacts: dict[tuple[Any, ...], Artifact] = {}
        self._lock = threading.Lock()
        self.compilations = 0
        """How many compilations actually ran (cache misses)."""

    def __len__(self) -> int:
        return len(self._artifacts)

    def _engine(self, surface: str) -> Engine:
        if surface not in SURFACES:
            raise ValueError(f"a moderator compiles against one of {', '.join(SURFACES)}, "
                             f"not {surface!r}")
        engine = self._engines.get(surface)
        if engine is None:
            engine = self._engines[surface] = Engine(surface)
        return engine

    def compile(self, script: Any, surface: str = "moderator") -> Artifact:
        """The artifact of a ``chatmd.ir.Script`` (inline or ``src``)."""
        from chatmd.frontend import script_source_file

        if getattr(script, "language", "chatml") != "chatml":
            raise ValueError(f"script '{script.id}' is not ChatML")
        return self.compile_source(script_source_file(script), script_id=script.id,
                                   surface=surface)

    def compile_text(self, text: str, *, script_id: str = "main", name: str = "<moderator>",
                     surface: str = "moderator") -> Artifact:
        """The artifact of ChatML source text (a test or an embedding without a prompt)."""
        return self.compile_source(SourceFile(name, text), script_id=script_id, surface=surface)

    def compile_source(self, source: SourceFile, *, script_id: str,
                       surface: str = "moderator") -> Artifact:
        digest = source_hash(source.text)
        key = (digest, surface, script_id, source.name, source.line_offset,
               source.first_line_column_offset)
        with self._lock:
            cached = self._artifacts.get(key)
            if cached is not None:
                return cached
            artifact = self._build(source, digest, script_id, surface)
            self._artifacts[key] = artifact
            self.compilations += 1
            return artifact

    def _build(self, source: SourceFile, digest: str, script_id: str, surface: str) -> Artifact:
        engine = self._engine(surface)
        try:
            compiled = engine.compile_source(source)
        except DiagnosticError as error:
            raise ModeratorLoadError(
                f"moderator '{script_id}' does not compile: {error.diagnostics[0].message}",
                list(error.diagnostics)) from None
        problems = check_contract("moderator", compiled.types, source)
        errors = [d for d in problems if d.is_error]
        if errors:
            raise ModeratorLoadError(f"moderator '{script_id}': {errors[0].message}", problems)
        return Artifact(script_id, digest, surface, compiled, source,
                        tuple(compiled.warnings) + tuple(problems))


__all__ = ["SURFACES", "Artifact", "ModeratorRegistry", "ScriptInstance", "source_hash"]
