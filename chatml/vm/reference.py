"""The reference interpreter: the opcode table executed directly, one instruction at a time.

What the translated VM (:mod:`chatml.vm.translate`) must agree with. A plain
loop over a code object's instructions with an operand stack and a frame of
locals; no analysis, no deferred expressions, no batching: every integer
result is range-checked, every array index bounds-checked, every allocation
charged on its own (:func:`chatml.calls.charge_memory`), every step taken
from the meter on its own (:meth:`chatml.limits.Meter.take`). Jumps follow
the block structure :func:`chatml.vm.verify.verify` records.

The semantics it shares with the translated VM, by construction:

* **values** -- the same runtime values (:mod:`chatml.values`); a closure is
  a Python function with the code object's arity (so :func:`chatml.calls.apply`
  checks its arity the same way) capturing the values of its parent's
  variables when it is created; a ``let rec`` group's closures capture each
  other. ``TAIL_CALL`` returns a :class:`~chatml.calls.TailCall` that ``CALL``
  (and ``apply``) bounce; ``SELF_TAIL_CALL`` restarts the frame.
* **steps** -- one per function entry (every iteration of a self-looping code
  object), one per passed ``LOOP_TEST``; the top level's entry is free.
* **memory** -- the same charges (:data:`chatml.limits.COST`) at the same
  instructions: records, extensions, variants with a payload, arrays, refs,
  closures, concatenations; builtins charge for themselves.
* **errors** -- the same failures with the same messages at the same
  instruction, and the same ChatML stack trace: every frame records the
  instruction it was executing when an exception passes through it, and
  :func:`chatml.vm.errors.runtime_error` builds the diagnostic.

The one thing it does not share is the Python stack: a ChatML call costs the
reference two Python frames (the closure and :meth:`_Interpreter.enter`), so it
counts nested ChatML calls itself and stops past ``Limits.max_depth`` with the
same ``recursion limit exceeded`` error; where exactly the translated VM stops
(Python frames, builtins' frames included) is not the same point. Use
:func:`run_reference` on a large stack (:func:`chatml.vm.run.on_large_stack`)
for deep recursion.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from chatcommon.sources import SourceFile
from chatml.bytecode.code import LOCAL, CodeObject, CompiledModule
from chatml.bytecode.opcodes import Op
from chatml.calls import (
    ChatMLRuntimeError,
    TailCall,
    charge_memory,
    expected_arity,
    is_callable_value,
)
from chatml.journal import journal_item, journal_ref
from chatml.limits import COST, METER, LimitExceeded, Limits
from chatml.stdlib.equality import values_equal
from chatml.values import MAX_INT, MIN_INT, ChatMLFailure, Module, Ref, Value, Variant
from chatml.vm.errors import classify, runtime_error
from chatml.vm.loader import LoadedProgram, ProgramInfo, bind_builtins, set_fallback
from chatml.vm.run import Sink, run_boundary
from chatml.vm.verify import Shape, verify

PYTHON_FRAMES_PER_CALL = 6
"""Python frames the run's recursion limit allows per nested ChatML call (the reference
counts ChatML calls itself; this only keeps Python from stopping it first)."""


class Fault(ChatMLFailure):
    """A failure whose diagnostic code is not the one its message maps to."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def _overflow() -> ChatMLFailure:
    return ChatMLFailure("integer overflow")


def _checked(value: int) -> int:
    if not MIN_INT <= value <= MAX_INT:
        raise _overflow()
    return value


def _divide(left: int, right: int) -> int:
    if right == 0:
        raise ChatMLFailure("Division by zero")
    quotient = abs(left) // abs(right)
    return _checked(quotient if (left >= 0) == (right > 0) else -quotient)


def _fdivide(left: float, right: float) -> float:
    if right == 0:
        raise ChatMLFailure("Division by zero")
    return left / right


_BINARY: dict[Op, Callable[[Any, Any], Value]] = {
    Op.ADD: lambda x, y: _checked(x + y), Op.SUB: lambda x, y: _checked(x - y),
    Op.MUL: lambda x, y: _checked(x * y), Op.DIV: _divide,
    Op.FADD: lambda x, y: x + y, Op.FSUB: lambda x, y: x - y, Op.FMUL: lambda x, y: x * y,
    Op.FDIV: _fdivide, Op.EQ: values_equal, Op.NE: lambda x, y: not values_equal(x, y),
    Op.EQ_PRIM: lambda x, y: x == y, Op.NE_PRIM: lambda x, y: x != y,
    Op.LT: lambda x, y: x < y, Op.GT: lambda x, y: x > y, Op.LE: lambda x, y: x <= y,
    Op.GE: lambda x, y: x >= y, Op.FLT: lambda x, y: x < y, Op.FGT: lambda x, y: x > y,
    Op.FLE: lambda x, y: x <= y, Op.FGE: lambda x, y: x >= y,
}
"""Binary instructions: pop two operands, push the result (``CONCAT`` charges, apart)."""


@functools.cache
def _closure_maker(arity: int) -> Callable[..., Callable[..., Value]]:
    """``make(enter, index, cells)``: a function of exactly ``arity`` parameters that runs
    code object ``index`` (so ``chatml.calls`` sees the arity a compiled closure has)."""
    params = ", ".join(f"p{i}" for i in range(arity))
    packed = f"({params},)" if arity else "()"
    source = (f"def make(enter, index, cells):\n"
              f"    def closure({params}):\n"
              f"        return enter(index, cells, {packed})\n"
              f"    return closure\n")
    namespace: dict[str, Any] = {}
    exec(compile(source, "<chatml reference closure>", "exec"), namespace)
    maker: Callable[..., Callable[..., Value]] = namespace["make"]
    return maker


def _matches(value: Value, pattern: tuple[Any, ...], bindings: list[tuple[int, Value]]) -> bool:
    """Whether ``value`` matches a ``MATCH_ARM`` pattern (the variables bound go into
    ``bindings``); the tests are the translated VM's, in its order (depth first, left to
    right), walked with an explicit stack so that a pattern of any depth matches."""
    pending: list[tuple[Value, tuple[Any, ...]]] = [(value, pattern)]
    while pending:
        value, pattern = pending.pop()
        kind = pattern[0]
        if kind == "_":
            continue
        if kind == "var":
            bindings.append((pattern[1], value))
        elif kind == "unit":
            if value is not None:
                return False
        elif kind == "lit":
            literal = pattern[1]
            if not (value is literal if isinstance(literal, bool) else bool(value == literal)):
                return False
        elif kind == "variant":
            args = pattern[2]
            if value.tag != pattern[1] or len(value.args) != len(args):
                return False
            pending.extend(reversed(list(zip(value.args, args, strict=True))))
        else:
            fields = pattern[1]
            if type(value) is not dict or not all(label in value for label, _ in fields):
                return False
            if not pattern[2] and len(value) != len(fields):
                return False
            pending.extend(reversed([(value[label], sub) for label, sub in fields]))
    return True


class _Frame:
    """One activation of a code object."""

    __slots__ = ("vm", "index", "code", "shape", "locals", "cells", "stack", "pc", "result")

    def __init__(self, vm: _Interpreter, index: int, cells: list[Value],
                 args: tuple[Value, ...]) -> None:
        self.vm = vm
        self.index = index
        self.code: CodeObject = vm.module.codes[index]
        self.shape: Shape = vm.shapes[index]
        self.locals: list[Value] = list(args) + [None] * (self.code.n_locals - len(args))
        self.cells = cells
        self.stack: list[Value] = []
        self.pc = 0
        self.result: Value = None

    def execute(self) -> Value:
        instructions = self.code.instructions
        counts_entry = self.code.self_loop or self.index != 0
        at = 0
        try:
            while True:
                at = self.pc
                if at == 0 and counts_entry:
                    METER.take(1)  # entering the function (or its next self-loop iteration)
                op, a, b = instructions[at]
                self.pc = at + 1
                if _STEPS[op](self, a, b):
                    return self.result
        except BaseException as error:
            frames = error.__dict__.setdefault("chatml_reference_frames", [])
            frames.append((self.vm.info, self.index, at))
            raise

    def pop(self, n: int) -> list[Value]:
        if n == 0:
            return []
        taken = self.stack[-n:]
        del self.stack[-n:]
        return taken

    def const(self, k: int) -> Any:
        return self.vm.module.consts[k]

    def closures(self, group: list[tuple[int, int | None]], global_targets: bool) -> Value:
        """Create the closures of ``group`` (code index, target slot or None) together,
        store them, then give each the values it captures (so they see each other)."""
        made = [self.vm.closure(code_index) for code_index, _ in group]
        for (_, slot), (closure, _cells) in zip(group, made, strict=True):
            if slot is not None:
                if global_targets:
                    self.vm.globals[slot] = closure
                else:
                    self.locals[slot] = closure
            charge_memory(COST["closure"])
        for (code_index, _), (_closure, cells) in zip(group, made, strict=True):
            for kind, source in self.vm.module.codes[code_index].captures:
                cells.append(self.locals[source] if kind == LOCAL else self.cells[source])
        return made[0][0]


Step = Callable[[_Frame, int, int], bool | None]


def _const(f: _Frame, a: int, b: int) -> None:
    f.stack.append(f.const(a))


def _load_local(f: _Frame, a: int, b: int) -> None:
    f.stack.append(f.locals[a])


def _store_local(f: _Frame, a: int, b: int) -> None:
    f.locals[a] = f.stack.pop()


def _load_free(f: _Frame, a: int, b: int) -> None:
    f.stack.append(f.cells[a])


def _load_global(f: _Frame, a: int, b: int) -> None:
    f.stack.append(f.vm.globals[a])


def _store_global(f: _Frame, a: int, b: int) -> None:
    f.vm.globals[a] = f.stack.pop()


def _pop(f: _Frame, a: int, b: int) -> None:
    f.stack.pop()


def _binary(operation: Callable[[Any, Any], Value]) -> Step:
    def step(f: _Frame, a: int, b: int) -> None:
        right = f.stack.pop()
        f.stack[-1] = operation(f.stack[-1], right)

    return step


def _neg(f: _Frame, a: int, b: int) -> None:
    f.stack[-1] = _checked(-f.stack[-1])


def _fneg(f: _Frame, a: int, b: int) -> None:
    f.stack[-1] = -f.stack[-1]


def _concat(f: _Frame, a: int, b: int) -> None:
    right = f.stack.pop()
    text = f.stack[-1] + right
    f.stack[-1] = text
    charge_memory(COST["string"] + len(text))


def _make_record(f: _Frame, a: int, b: int) -> None:
    labels = f.const(a)
    values = f.pop(len(labels))
    f.stack.append(dict(zip(labels, values, strict=True)))
    charge_memory(COST["record"] + COST["field"] * len(labels))


def _extend(f: _Frame, a: int, b: int) -> None:
    labels = f.const(a)
    values = f.pop(len(labels))
    record = {**f.stack.pop(), **dict(zip(labels, values, strict=True))}
    f.stack.append(record)
    charge_memory(COST["record"] + COST["field"] * len(record))


def _get_field(f: _Frame, a: int, b: int) -> None:
    label = f.const(a)
    value = f.stack[-1]
    if isinstance(value, dict) and label in value:
        f.stack[-1] = value[label]
        return
    if not isinstance(value, dict):
        raise Fault("chatml.no_field", "Field access on non-record/non-module")
    kind = "module" if isinstance(value, Module) else "record"
    raise Fault("chatml.no_field", f"No field '{label}' in {kind}")


def _make_variant(f: _Frame, a: int, b: int) -> None:
    f.stack.append(Variant(f.const(a), tuple(f.pop(b))))
    if b:
        charge_memory(COST["variant"] + COST["slot"] * b)


def _make_array(f: _Frame, a: int, b: int) -> None:
    f.stack.append(f.pop(a))
    charge_memory(COST["array"] + COST["slot"] * a)


def _index(array: list[Value], index: int) -> int:
    if not 0 <= index < len(array):
        raise ChatMLFailure("Array index out of bounds")
    return index


def _array_get(f: _Frame, a: int, b: int) -> None:
    array, index = f.pop(2)
    f.stack.append(array[_index(array, index)])


def _array_set(f: _Frame, a: int, b: int) -> None:
    array, index, value = f.pop(3)
    _index(array, index)
    journal_item(array, index)
    array[index] = value
    f.stack.append(None)


def _make_ref(f: _Frame, a: int, b: int) -> None:
    f.stack[-1] = Ref(f.stack[-1])
    charge_memory(COST["ref"])


def _deref(f: _Frame, a: int, b: int) -> None:
    f.stack[-1] = f.stack[-1].value


def _set_ref(f: _Frame, a: int, b: int) -> None:
    ref, value = f.pop(2)
    journal_ref(ref)
    ref.value = value
    f.stack.append(None)


def _make_closure(f: _Frame, a: int, b: int) -> None:
    f.stack.append(f.closures([(a, None)], False))


def _make_rec(global_targets: bool) -> Step:
    def step(f: _Frame, a: int, b: int) -> None:
        f.closures([(code, slot) for code, slot in f.const(a)], global_targets)

    return step


def _call(trampoline: bool) -> Step:
    def step(f: _Frame, a: int, b: int) -> None:
        args = f.pop(a)
        fn = f.stack.pop()
        if not is_callable_value(fn):
            raise ChatMLFailure("Trying to call a non-function value")
        expected = expected_arity(fn)
        if expected is not None and expected != len(args):
            raise ChatMLFailure("Function arity mismatch")
        result = fn(*args)
        while trampoline and type(result) is TailCall:
            result = result.fn(*result.args)
        f.stack.append(result)

    return step


def _tail_call(f: _Frame, a: int, b: int) -> bool:
    args = f.pop(a)
    f.result = TailCall(f.stack.pop(), tuple(args))
    return True


def _self_tail_call(f: _Frame, a: int, b: int) -> None:
    f.locals[:a] = f.pop(a)
    f.stack.clear()
    f.pc = 0


def _return(f: _Frame, a: int, b: int) -> bool:
    f.result = f.stack.pop()
    return True


def _if(f: _Frame, a: int, b: int) -> None:
    if not f.stack.pop():
        f.pc = f.shape.else_of[f.pc - 1] + 1


def _match_arm(f: _Frame, a: int, b: int) -> None:
    slot, pattern = f.const(a)
    bindings: list[tuple[int, Value]] = []
    if not _matches(f.locals[slot], pattern, bindings):
        f.pc = f.shape.else_of[f.pc - 1] + 1
        return
    for target, value in bindings:
        f.locals[target] = value


def _else(f: _Frame, a: int, b: int) -> None:
    f.pc = f.shape.end_of[f.pc - 1] + 1  # the taken branch ends here: skip the other


def _end(f: _Frame, a: int, b: int) -> None:
    pass


def _match_fail(f: _Frame, a: int, b: int) -> None:
    raise ChatMLFailure("Non-exhaustive pattern match")


def _loop_test(f: _Frame, a: int, b: int) -> None:
    if f.stack.pop():
        METER.take(1)  # one more iteration
        return
    f.pc = f.shape.loop_end[f.pc - 1] + 1
    f.stack.append(None)


def _end_loop(f: _Frame, a: int, b: int) -> None:
    f.pc = f.shape.loop_start[f.pc - 1] + 1


def _module_new(f: _Frame, a: int, b: int) -> None:
    f.stack.append(Module(f.const(a)))


def _module_fill(f: _Frame, a: int, b: int) -> None:
    module = f.stack.pop()
    module.update({name: f.vm.globals[slot] for name, slot in f.const(a)})


_STEPS: dict[int, Step] = {
    Op.CONST: _const, Op.LOAD_LOCAL: _load_local, Op.STORE_LOCAL: _store_local,
    Op.LOAD_FREE: _load_free, Op.LOAD_GLOBAL: _load_global, Op.STORE_GLOBAL: _store_global,
    Op.POP: _pop, Op.NEG: _neg, Op.FNEG: _fneg, Op.CONCAT: _concat,
    Op.MAKE_RECORD: _make_record, Op.EXTEND: _extend, Op.GET_FIELD: _get_field,
    Op.MAKE_VARIANT: _make_variant, Op.MAKE_ARRAY: _make_array, Op.ARRAY_GET: _array_get,
    Op.ARRAY_SET: _array_set, Op.MAKE_REF: _make_ref, Op.DEREF: _deref, Op.SET_REF: _set_ref,
    Op.MAKE_CLOSURE: _make_closure, Op.MAKE_REC: _make_rec(False),
    Op.MAKE_REC_GLOBAL: _make_rec(True), Op.CALL: _call(True), Op.CALL_RAW: _call(False),
    Op.TAIL_CALL: _tail_call, Op.SELF_TAIL_CALL: _self_tail_call, Op.RETURN: _return,
    Op.IF: _if, Op.MATCH_ARM: _match_arm, Op.ELSE: _else, Op.END: _end,
    Op.MATCH_FAIL: _match_fail, Op.LOOP: _end, Op.LOOP_TEST: _loop_test,
    Op.END_LOOP: _end_loop, Op.MODULE_NEW: _module_new, Op.MODULE_FILL: _module_fill,
}
_STEPS.update({op: _binary(operation) for op, operation in _BINARY.items()})
assert set(_STEPS) == set(Op), "every opcode has its step"
"""What each opcode does (a step returns True when the frame returns)."""


class _Interpreter:
    """The state of one loaded program: its module, shapes and globals."""

    def __init__(self, module: CompiledModule, shapes: tuple[Shape, ...],
                 globals_: list[Value], info: ProgramInfo) -> None:
        self.module = module
        self.shapes = shapes
        self.globals = globals_
        self.info = info
        self.depth = 0
        self.max_depth = Limits().max_depth

    def enter(self, index: int, cells: list[Value], args: tuple[Value, ...]) -> Value:
        """Run code object ``index`` (a closure's body, or the top level)."""
        self.depth += 1
        try:
            if self.depth > self.max_depth:
                raise RecursionError("ChatML call depth exceeded")
            return _Frame(self, index, cells, args).execute()
        finally:
            self.depth -= 1

    def closure(self, index: int) -> tuple[Callable[..., Value], list[Value]]:
        """A new closure of code ``index`` and the (still empty) list of its captures."""
        cells: list[Value] = []
        code = self.module.codes[index]
        closure = _closure_maker(code.arity)(self.enter, index, cells)
        closure.__name__ = closure.__qualname__ = f"chatml_{code.name}"
        return closure, cells

    def runtime_error(self, error: BaseException, file: str) -> ChatMLRuntimeError:
        """The runtime error of a failed run (``run_boundary``'s ``convert``)."""
        if isinstance(error, ChatMLRuntimeError):
            return error
        frames = list(reversed(getattr(error, "chatml_reference_frames", [])))
        if isinstance(error, Fault):
            code, message = error.code, error.message
        elif isinstance(error, RecursionError):
            code, message = ("chatml.recursion_limit",
                             f"recursion limit exceeded: more than {self.max_depth} nested calls "
                             "(make the recursive call a tail call, or use a loop)")
        else:  # a non-ChatML exception here came out of a builtin
            code, message = classify(error, [], False)
            if not isinstance(error, (LimitExceeded, MemoryError, ChatMLFailure)):
                code = "chatml.internal_error"
                message = f"internal error in builtin: {type(error).__name__}: {error}"
        limit = error if isinstance(error, LimitExceeded) else None
        return runtime_error(code, message, frames, limit, file)


@attrs.define(eq=False)
class ReferenceProgram:
    """A program loaded into the reference interpreter; ``main`` runs the top level."""

    module: CompiledModule
    interpreter: _Interpreter
    main: Callable[[], Value]


def load_reference(module: CompiledModule, builtins: Mapping[str, Value],
                   source: SourceFile | None = None) -> ReferenceProgram:
    """Prepare ``module`` for the reference interpreter (``BytecodeFormatError`` when it
    is malformed, ``DiagnosticError`` when a builtin it needs is missing)."""
    shapes = verify(module)
    bound = bind_builtins(module, builtins)
    globals_: list[Value] = [None] * len(module.global_names)
    for slot, value in bound.items():
        globals_[slot] = value
    interpreter = _Interpreter(module, shapes, globals_, ProgramInfo(module, (), source))
    return ReferenceProgram(module, interpreter, lambda: interpreter.enter(0, [], ()))


def run_reference(program: ReferenceProgram, limits: Limits | None = None, *,
                  sink: Sink | None = None, transactional: bool = False) -> None:
    """Run the top level of ``program`` as one run (as :func:`chatml.vm.run.run_program`
    runs a translated program): failures raise :class:`ChatMLRuntimeError`."""
    limits = limits or Limits()
    program.interpreter.max_depth = limits.max_depth
    python = attrs.evolve(limits, max_depth=limits.max_depth * PYTHON_FRAMES_PER_CALL + 200)
    run_boundary(program.main, python, sink=sink, transactional=transactional,
                 file=program.module.source_name, convert=program.interpreter.runtime_error)


def _python_depth() -> int:
    frame, depth = sys._getframe(), 0
    while frame is not None:
        depth += 1
        frame = frame.f_back  # type: ignore[assignment]  # None only past the outermost frame
    return depth


def _top_level_globals(module: CompiledModule) -> list[int]:
    """The global slots the top level assigns (what ``LoadedProgram.top_level`` shows)."""
    slots: set[int] = set()
    for op, a, _ in module.codes[0].instructions:
        if op == Op.STORE_GLOBAL:
            slots.add(a)
        elif op == Op.MAKE_REC_GLOBAL:
            group: Any = module.consts[a]  # verified: ((code, slot), ...)
            slots.update(slot for _, slot in group)
    return sorted(slots)


def load_fallback(module: CompiledModule, builtins: Mapping[str, Value],
                  source: SourceFile | None = None) -> LoadedProgram:
    """``module`` as a :class:`~chatml.vm.loader.LoadedProgram` that runs on this interpreter:
    what :func:`chatml.vm.loader.load` returns for a module nested too deeply to translate.

    Its ``main`` runs the top level under the limits of the run it is called in (the
    nested-call limit is ``Limits.max_depth`` ChatML calls, counted here); when the top
    level ends (or fails) the globals it assigned are copied into ``namespace``, so
    ``top_level()`` reads them. Failures convert through the program's frame records
    (``ProgramInfo.convert``), so every run boundary reports their positions.
    """
    program = load_reference(module, builtins, source)
    interpreter = program.interpreter
    interpreter.info.convert = interpreter.runtime_error
    namespace: dict[str, Any] = {}
    assigned = _top_level_globals(module)

    def main() -> Value:
        limit = METER.limits.max_depth
        interpreter.max_depth = limit
        wanted = _python_depth() + limit * PYTHON_FRAMES_PER_CALL + 200
        if sys.getrecursionlimit() < wanted:
            sys.setrecursionlimit(wanted)  # the run boundary restores it
        try:
            return interpreter.enter(0, [], ())
        finally:
            namespace.update((f"g{slot}", interpreter.globals[slot]) for slot in assigned)

    return LoadedProgram(module, namespace, main, interpreter.info, "", interpreted=True)


set_fallback(load_fallback)

__all__ = ["Fault", "ReferenceProgram", "load_fallback", "load_reference", "run_reference"]
