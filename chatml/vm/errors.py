"""Runtime errors: a Python exception raised while ChatML runs becomes one diagnostic.

The traceback is walked for frames of generated code (known by their file
name, see :mod:`chatml.vm.loader`); each maps through the line table to an
instruction and its ChatML position. The innermost such frame is where the
error is reported; all of them form the ChatML stack trace (function names
and lines, innermost first) given as the diagnostic's hint and ``related``
notes. Messages follow spec 5.11 (and DECISIONS 2 for ``integer overflow``);
Python exception types that well-typed code cannot raise become
``Internal type error: ...`` (defensive, as the spec says), and an unexpected
exception inside a builtin is ``internal error in builtin``. Never a Python
traceback.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from types import TracebackType

from chatcommon.diagnostics import Diagnostic, Related
from chatml.bytecode.opcodes import Op
from chatml.calls import ChatMLRuntimeError
from chatml.limits import METER, LimitExceeded
from chatml.values import ChatMLFailure, Module
from chatml.vm.loader import PROGRAMS, ProgramInfo

_CODES = {
    "integer overflow": "chatml.integer_overflow",
    "Division by zero": "chatml.division_by_zero",
    "Array index out of bounds": "chatml.index_out_of_bounds",
    "Non-exhaustive pattern match": "chatml.match_failure",
    "Function arity mismatch": "chatml.arity_mismatch",
    "Trying to call a non-function value": "chatml.not_a_function",
}

Frame = tuple[ProgramInfo, int, int, TracebackType]


def _frames(error: BaseException) -> tuple[list[Frame], bool]:
    """Generated frames (outermost first) and whether the innermost frame is generated."""
    frames: list[Frame] = []
    innermost_generated = False
    tb = error.__traceback__
    while tb is not None:
        info = PROGRAMS.get(tb.tb_frame.f_code.co_filename)
        if info is not None and 0 < tb.tb_lineno <= len(info.line_map):
            code, instruction = info.line_map[tb.tb_lineno - 1]
            if tb.tb_frame.f_code.co_name.startswith("_mk") and frames \
                    and frames[-1][0] is info:
                # a closure factory (closures made in a loop) runs as part of the ChatML
                # frame that called it: one frame, at the factory's instruction
                frames.pop()
            frames.append((info, code, instruction, tb))
            innermost_generated = True
        else:
            innermost_generated = False
        tb = tb.tb_next
    return frames, innermost_generated


def _field_message(frame: Frame, label: str) -> str:
    info, code, instruction, tb = frame
    line = _generated_line(tb)
    match = re.search(r"= (\w+)\[", line)
    kind = "record"
    if match:
        name = match.group(1)
        value = tb.tb_frame.f_locals.get(name, tb.tb_frame.f_globals.get(name))
        if isinstance(value, Module):
            kind = "module"
        elif not isinstance(value, dict):
            return "Field access on non-record/non-module"
    return f"No field '{label}' in {kind}"


def _generated_line(tb: TracebackType) -> str:
    info = PROGRAMS.get(tb.tb_frame.f_code.co_filename)
    source = tb.tb_frame.f_globals.get("__chatml_source__")
    if isinstance(source, str):
        lines = source.splitlines()
        if 0 < tb.tb_lineno <= len(lines):
            return lines[tb.tb_lineno - 1]
    return "" if info is None else ""


def classify(error: BaseException, frames: list[Frame], innermost_generated: bool
             ) -> tuple[str, str]:
    """(code, message) for ``error``."""
    if isinstance(error, LimitExceeded):
        return error.code, error.message
    if isinstance(error, RecursionError):
        depth = METER.limits.max_depth
        return ("chatml.recursion_limit",
                f"recursion limit exceeded: more than {depth} nested calls "
                "(make the recursive call a tail call, or use a loop)")
    if isinstance(error, MemoryError):
        return "chatml.memory_limit", "memory limit exceeded: the host ran out of memory"
    if isinstance(error, ChatMLFailure):
        return _CODES.get(error.message, "chatml.failure"), error.message
    if not frames or not innermost_generated:
        where = "in builtin" if frames else "in the VM"
        return "chatml.internal_error", f"internal error {where}: {type(error).__name__}: {error}"
    info, code, instruction, _ = frames[-1]
    op = info.module.codes[code].instructions[instruction][0]
    if isinstance(error, ZeroDivisionError):
        return "chatml.division_by_zero", "Division by zero"
    if isinstance(error, IndexError) and op in (Op.ARRAY_GET, Op.ARRAY_SET):
        return "chatml.index_out_of_bounds", "Array index out of bounds"
    if isinstance(error, KeyError) and op in (Op.GET_FIELD, Op.MATCH_ARM):
        label = error.args[0] if error.args else "?"
        return "chatml.no_field", _field_message(frames[-1], str(label))
    if isinstance(error, TypeError) and op in (Op.CALL, Op.CALL_RAW, Op.TAIL_CALL):
        if "not callable" in str(error):
            return "chatml.not_a_function", "Trying to call a non-function value"
        if "argument" in str(error):
            return "chatml.arity_mismatch", "Function arity mismatch"
    return "chatml.internal_type_error", f"Internal type error: {type(error).__name__}: {error}"


def to_runtime_error(error: BaseException, fallback_file: str = "<chatml>") -> ChatMLRuntimeError:
    """The :class:`ChatMLRuntimeError` describing ``error``."""
    if isinstance(error, ChatMLRuntimeError):
        return error
    frames, innermost_generated = _frames(error)
    recorded = getattr(error, "chatml_reference_frames", None)
    if not frames and recorded and recorded[0][0].convert is not None:
        # a program on the reference interpreter (too deep to translate): its own records
        converted: ChatMLRuntimeError = recorded[0][0].convert(error, fallback_file)
        return converted
    code, message = classify(error, frames, innermost_generated)
    limit = error if isinstance(error, LimitExceeded) else None
    return runtime_error(code, message, [(info, index, pc) for info, index, pc, _ in frames],
                         limit, fallback_file)


def runtime_error(code: str, message: str, frames: Sequence[tuple[ProgramInfo, int, int]],
                  limit: LimitExceeded | None, fallback_file: str = "<chatml>"
                  ) -> ChatMLRuntimeError:
    """The runtime error ``code``/``message`` raised with the ChatML ``frames`` active
    (``(program, code index, instruction)``, outermost first): positioned at the innermost
    one, with the others as the stack trace."""
    stack: list[tuple[str, str, int]] = []
    callers: list[_TraceRun] = []
    located = None
    for info, code_index, instruction in reversed(frames):
        code_object = info.module.codes[code_index]
        line, column, end_line, end_column = code_object.positions[instruction]
        file = info.module.source_name
        stack.append((code_object.name, file, line))
        if located is None:
            located = (info, file, line, column, end_line, end_column)
        elif callers and callers[-1].same_place(code_object.name, file, line, column):
            callers[-1].repeats += 1
        else:
            callers.append(_TraceRun(code_object.name, file, line, column))
    if located is None:
        diagnostic = Diagnostic.for_file(fallback_file, code, message, phase="runtime")
    else:
        info, file, line, column, end_line, end_column = located
        hint = None
        if len(stack) > 1:
            hint = "ChatML stack (innermost first): " + " <- ".join(
                [f"{stack[0][0]} (line {line})", *_hint_parts(callers)])
        diagnostic = Diagnostic(
            code=code, message=message, file=file, line=line, column=column,
            end_line=end_line, end_column=end_column, phase="runtime", hint=hint,
            related=tuple(_related(callers)), source=info.source,
        )
    return ChatMLRuntimeError(diagnostic, message, stack, limit)


#: A stack trace shows at most this many distinct call sites at each end (the rest elided).
TRACE_HEAD = 10
TRACE_TAIL = 10


class _TraceRun:
    """One call site of the stack trace, with how many consecutive frames repeat it."""

    __slots__ = ("name", "file", "line", "column", "repeats")

    def __init__(self, name: str, file: str, line: int, column: int) -> None:
        self.name, self.file, self.line, self.column = name, file, line, column
        self.repeats = 1

    def same_place(self, name: str, file: str, line: int, column: int) -> bool:
        return (self.line == line and self.column == column and self.name == name
                and self.file == file)

    def note(self) -> str:
        if self.repeats == 1:
            return f"called from {self.name}"
        return f"called from {self.name} ... {self.name} called itself {self.repeats - 1:,} more times"


def _bounded(runs: list[_TraceRun]) -> tuple[list[_TraceRun], int, list[_TraceRun]]:
    """The first and last call sites to show, and how many frames lie between them."""
    if len(runs) <= TRACE_HEAD + TRACE_TAIL:
        return runs, 0, []
    elided = sum(run.repeats for run in runs[TRACE_HEAD:-TRACE_TAIL])
    return runs[:TRACE_HEAD], elided, runs[-TRACE_TAIL:]


def _related(runs: list[_TraceRun]) -> list[Related]:
    """The stack as ``related`` notes: repeats collapsed, at most TRACE_HEAD + TRACE_TAIL sites."""
    head, elided, tail = _bounded(runs)
    notes = [Related(run.note(), run.file, run.line, run.column) for run in head]
    if elided:
        first = tail[0]
        notes.append(Related(f"... {elided:,} more frames not shown ...", first.file, first.line,
                             first.column))
    notes.extend(Related(run.note(), run.file, run.line, run.column) for run in tail)
    return notes


def _hint_parts(runs: list[_TraceRun]) -> list[str]:
    head, elided, tail = _bounded(runs)

    def part(run: _TraceRun) -> str:
        text = f"{run.name} (line {run.line})"
        return text if run.repeats == 1 else f"{text} x{run.repeats:,}"

    middle = [f"... {elided:,} more frames ..."] if elided else []
    return [part(run) for run in head] + middle + [part(run) for run in tail]
