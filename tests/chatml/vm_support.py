"""Test helpers for the compiler and VM: build, load and run a ChatML source in one call.

:func:`run_source` returns a :class:`RunOutcome` (printed text, diagnostics --
parse/type/resolve errors, warnings, or the runtime error -- and the loaded
program). :func:`minimal_values` is a tiny builtin registry (``print``,
``to_string``, ``fail``, ``length``) so VM tests do not depend on the whole
standard library.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from chatcommon.diagnostics import Diagnostic, DiagnosticError
from chatml.build import build_source, runtime_values
from chatml.calls import ChatMLRuntimeError, emit_output
from chatml.limits import Limits
from chatml.values import ChatMLFailure, Value, builtin
from chatml.vm.loader import LoadedProgram, load
from chatml.vm.run import run_program


@attrs.define
class RunOutcome:
    stdout: str
    diagnostics: list[Diagnostic]
    program: LoadedProgram | None
    error: ChatMLRuntimeError | None = None

    @property
    def error_message(self) -> str | None:
        errors = [d for d in self.diagnostics if d.is_error]
        return errors[0].message if errors else None


def _show(value: Value) -> str:
    from chatml.stdlib.render import show

    return show(value)


def minimal_values() -> dict[str, Value]:
    """``print``, ``to_string``, ``fail`` and ``length`` -- enough for language tests."""

    @builtin("print")
    def print_(value: Value) -> None:
        emit_output(_show(value) + "\n")

    @builtin("to_string")
    def to_string(value: Value) -> str:
        return _show(value)

    @builtin("fail")
    def fail(message: str) -> Value:
        raise ChatMLFailure(message)

    @builtin("length")
    def length(array: list[Value]) -> int:
        return len(array)

    return {"print": print_, "to_string": to_string, "fail": fail, "length": length}


_CORE: dict[str, Value] | None = None


def core_values() -> dict[str, Value]:
    global _CORE
    if _CORE is None:
        _CORE = runtime_values("core")
    return _CORE


def run_source(text: str, name: str = "test.chatml", *, limits: Limits | None = None,
               values: Mapping[str, Value] | None = None, transactional: bool = False,
               surface: str = "core") -> RunOutcome:
    values = core_values() if values is None else values
    output: list[str] = []
    try:
        result = build_source(text, name, surface=surface, values=values)
    except DiagnosticError as error:
        return RunOutcome("", list(error.diagnostics), None)
    diagnostics = list(result.warnings)
    program = load(result.module, values, result.source)
    try:
        run_program(program, limits or Limits(), sink=output.append,
                    transactional=transactional)
    except ChatMLRuntimeError as error:
        diagnostics += error.diagnostics
        return RunOutcome("".join(output), diagnostics, program, error)
    return RunOutcome("".join(output), diagnostics, program)


def normalise(text: str) -> str:
    """The corpus README 1.2 normalisation: trailing blanks, outer blank lines, indentation."""
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    indents = [len(line) - len(line.lstrip()) for line in lines if line]
    cut = min(indents, default=0)
    return "\n".join(line[cut:] for line in lines)
