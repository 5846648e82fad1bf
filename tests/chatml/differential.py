"""Run one ChatML program through the translated VM and the reference interpreter.

:func:`both` builds a source once (core surface) and runs the module in
:mod:`chatml.vm.loader` + :mod:`chatml.vm.run` (the translated VM) and in
:mod:`chatml.vm.reference`, each on a large stack, and returns what each run
did as an :class:`Outcome`: printed output, the runtime diagnostic (every
field), and the steps taken and memory charged, read from the meter when the
top level returns or fails (the batched charges of the translated VM are all
made by then: at a failure too, see :mod:`chatml.vm.charges`).

Comparison (:meth:`Outcome.comparable`): everything, except for a run that
hit the recursion limit, where only the code is compared -- the two
implementations use different numbers of Python frames per ChatML call, so
they stop at different depths (and so with different steps, memory and
stack traces).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from chatcommon.diagnostics import DiagnosticError
from chatcommon.sources import SourceFile
from chatml.build import build_source
from chatml.bytecode.code import CompiledModule
from chatml.calls import ChatMLRuntimeError
from chatml.limits import METER, WORD, Limits
from chatml.values import Value
from chatml.vm.loader import load
from chatml.vm.reference import load_reference, run_reference
from chatml.vm.run import on_large_stack, run_program
from tests.chatml.vm_support import core_values

RECURSION = "chatml.recursion_limit"


@attrs.frozen
class Outcome:
    stdout: str
    error: dict[str, Any] | None
    """The runtime diagnostic's fields (``None`` when the run succeeded)."""
    steps: int
    memory: int
    """Words charged."""

    def comparable(self) -> tuple[Any, ...]:
        if self.error is not None and self.error["code"] == RECURSION:
            return ("recursion limit",)
        return (self.stdout, self.error, self.steps, self.memory)


def _fields(error: ChatMLRuntimeError) -> dict[str, Any]:
    d = error.diagnostic
    return {"code": d.code, "message": d.message, "file": d.file, "line": d.line,
            "column": d.column, "end_line": d.end_line, "end_column": d.end_column,
            "hint": d.hint, "related": [(r.message, r.file, r.line, r.column)
                                        for r in d.related],
            "stack": error.stack}


def _measured(main: Callable[[], Value], seen: list[tuple[int, int]]) -> Callable[[], Value]:
    def run() -> Value:
        try:
            return main()
        finally:
            seen.append((METER.steps, METER.memory))

    return run


def _outcome(run: Callable[[Callable[[str], Any]], None], limits: Limits,
             seen: list[tuple[int, int]]) -> Outcome:
    output: list[str] = []
    error = None
    try:
        on_large_stack(lambda: run(output.append))
    except ChatMLRuntimeError as failure:
        error = _fields(failure)
    steps, memory = seen[-1] if seen else (limits.max_steps or 0, (limits.max_memory or 0) // WORD)
    return Outcome("".join(output), error, (limits.max_steps or 0) - steps,
                   (limits.max_memory or 0) // WORD - memory)


def run_translated(module: CompiledModule, source: SourceFile | None, limits: Limits,
                   transactional: bool = False) -> Outcome:
    seen: list[tuple[int, int]] = []
    program = load(module, core_values(), source)
    program = attrs.evolve(program, main=_measured(program.main, seen))
    return _outcome(lambda sink: run_program(program, limits, sink=sink,
                                             transactional=transactional), limits, seen)


def run_reference_of(module: CompiledModule, source: SourceFile | None,
                     limits: Limits, transactional: bool = False) -> Outcome:
    seen: list[tuple[int, int]] = []
    program = load_reference(module, core_values(), source)
    program = attrs.evolve(program, main=_measured(program.main, seen))
    return _outcome(lambda sink: run_reference(program, limits, sink=sink,
                                               transactional=transactional), limits, seen)


def both(text: str, name: str, limits: Limits,
         transactional: bool = False) -> tuple[Outcome, Outcome] | None:
    """(translated, reference) outcomes; ``None`` when the program does not build or
    the translated VM refuses to load it (too deeply nested for Python).
    ``transactional``: both run as transactional runs (the undo journal is on)."""
    assert limits.max_steps is not None and limits.max_memory is not None
    try:
        built = build_source(text, name, surface="core", values=core_values())
    except DiagnosticError:
        return None
    try:
        translated = run_translated(built.module, built.source, limits, transactional)
    except DiagnosticError:
        return None
    return translated, run_reference_of(built.module, built.source, limits, transactional)
