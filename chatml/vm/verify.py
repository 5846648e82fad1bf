"""Bytecode verification: everything a walk of the code shows, before anything runs it.

:func:`verify` checks a :class:`~chatml.bytecode.code.CompiledModule` the way
the compiler's output always is, and raises
:class:`~chatml.bytecode.serialize.BytecodeFormatError` at the first violation:

* **operands and constants** -- local slots, captures, globals, constants in
  range; the constants an instruction reads have its shape (labels, tags,
  closure groups, ``MATCH_ARM`` patterns, module fills);
* **the stack** -- simulated depth: no instruction pops below the start of its
  block; ``IF``/``MATCH_ARM`` blocks have an ``ELSE`` and their falling
  branches leave one value each; a loop body leaves nothing and has exactly
  one ``LOOP_TEST``; nothing follows a ``RETURN``/``TAIL_CALL``/
  ``SELF_TAIL_CALL``/``MATCH_FAIL`` in its block; every code object ends
  with a return;
* **the code-object tree** -- code 0 takes no parameters; every other code
  object is created exactly once, by its parent (``MAKE_CLOSURE``,
  ``MAKE_REC``, ``MAKE_REC_GLOBAL``), and its captures name its parent's
  locals or captures; ``STORE_GLOBAL``/``MAKE_REC_GLOBAL`` only at top level;
  ``SELF_TAIL_CALL`` only in a self-looping code object, outside loops.

It returns the block structure of every code object (:class:`Shape`: where
each block's ``ELSE``/``END`` and each loop's ``END_LOOP`` are), which the
reference interpreter (:mod:`chatml.vm.reference`) jumps by. The translator
(:mod:`chatml.vm.translate`) translates only verified bytecode.
"""

from __future__ import annotations

from typing import Any

import attrs

from chatml.bytecode.code import FREE, LOCAL, MAX_PATTERN_DEPTH, CodeObject, CompiledModule
from chatml.bytecode.opcodes import Op
from chatml.bytecode.serialize import BytecodeFormatError


@attrs.frozen
class Shape:
    """The block structure of one code object (instruction indexes)."""

    else_of: dict[int, int]
    """``IF``/``MATCH_ARM`` -> its ``ELSE``."""
    end_of: dict[int, int]
    """``ELSE`` -> the ``END`` of its block."""
    loop_end: dict[int, int]
    """``LOOP`` and its ``LOOP_TEST`` -> the loop's ``END_LOOP``."""
    loop_start: dict[int, int]
    """``END_LOOP`` -> its ``LOOP``."""


def _fail(message: str) -> BytecodeFormatError:
    return BytecodeFormatError(message)


class _Block:
    __slots__ = ("kind", "depth", "start", "else_pc", "fell", "tested")

    def __init__(self, kind: str, depth: int, start: int) -> None:
        self.kind = kind
        self.depth = depth
        self.start = start
        self.else_pc = -1
        self.fell = False
        self.tested = False


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class _Code:
    """Verifies one code object (see the module docstring for what)."""

    def __init__(self, module: CompiledModule, index: int, created: list[int]) -> None:
        self.module = module
        self.index = index
        self.code: CodeObject = module.codes[index]
        self.created = created
        self.made: set[int] = set()
        """The children this code object has created (only its parent may create a code
        object, so this is what "created twice" is checked against: constant time)."""
        self.depth = 0
        self.blocks: list[_Block] = []
        self.terminated = False
        self.pc = 0
        self.shape = Shape({}, {}, {}, {})

    # ------------------------------------------------------------------ operands

    def local(self, slot: int, code: int | None = None) -> None:
        code = self.index if code is None else code
        if not _int(slot) or not 0 <= slot < self.module.codes[code].n_locals:
            raise _fail(f"local slot {slot} out of range in code {code}")

    def const(self, k: int) -> Any:
        if not 0 <= k < len(self.module.consts):
            raise _fail(f"constant {k} out of range")
        return self.module.consts[k]

    def labels(self, k: int) -> tuple[str, ...]:
        value = self.const(k)
        if not isinstance(value, tuple) or not all(isinstance(v, str) for v in value):
            raise _fail("bad label tuple")
        return value

    def global_slot(self, g: int) -> None:
        if not _int(g) or not 0 <= g < len(self.module.global_names):
            raise _fail("global slot out of range")

    def count(self, n: int) -> int:
        if not _int(n) or n < 0:
            raise _fail(f"bad count {n} at instruction {self.pc} of code {self.index}")
        return n

    # ------------------------------------------------------------------ stack

    def pop(self, n: int = 1) -> None:
        floor = self.blocks[-1].depth if self.blocks else 0
        if self.depth - n < floor:
            raise _fail(f"stack underflow at instruction {self.pc} of code {self.index}")
        self.depth -= n

    def push(self) -> None:
        self.depth += 1

    # ------------------------------------------------------------------ closures

    def child(self, code_index: int) -> None:
        codes = self.module.codes
        if not _int(code_index) or not 0 < code_index < len(codes) \
                or codes[code_index].parent != self.index:
            raise _fail(f"code {code_index} is not a child of code {self.index}")
        if code_index in self.made:
            raise _fail(f"code {code_index} is created twice")
        self.made.add(code_index)
        self.created.append(code_index)
        for kind, source in codes[code_index].captures:
            if kind == LOCAL:
                self.local(source)
            elif kind == FREE:
                if not _int(source) or not 0 <= source < len(self.code.captures) \
                        or self.index == 0:
                    raise _fail(f"capture {source} out of range in code {self.index}")
            else:
                raise _fail("bad capture kind")

    def group(self, k: int, global_targets: bool) -> None:
        value = self.const(k)
        if not isinstance(value, tuple) or not value:
            raise _fail("bad closure group")
        for item in value:
            if not isinstance(item, tuple) or len(item) != 2 or not all(_int(x) for x in item):
                raise _fail("bad closure group entry")
        for code_index, _ in value:
            self.child(code_index)
        for _, slot in value:
            if global_targets:
                self.global_slot(slot)
            else:
                self.local(slot)

    # ------------------------------------------------------------------ patterns

    def pattern(self, root: Any) -> None:
        """Check a ``MATCH_ARM`` pattern (explicit stack: any depth up to the limit)."""
        pending: list[tuple[Any, int]] = [(root, 0)]
        while pending:
            pattern, depth = pending.pop()
            if depth > MAX_PATTERN_DEPTH or not isinstance(pattern, tuple) or not pattern:
                raise _fail("bad pattern")
            pending.extend((sub, depth + 1) for sub in self.sub_patterns(pattern))

    def sub_patterns(self, pattern: tuple[Any, ...]) -> tuple[Any, ...]:
        """Check one pattern node; its sub-patterns."""
        kind = pattern[0]
        if kind in ("_", "unit") and len(pattern) == 1:
            return ()
        if kind == "var" and len(pattern) == 2 and isinstance(pattern[1], int):
            self.local(pattern[1])
            return ()
        if kind == "lit" and len(pattern) == 2:
            if not isinstance(pattern[1], (bool, int, str, float)):
                raise _fail("bad literal pattern")
            return ()
        if kind == "variant" and len(pattern) == 3 and isinstance(pattern[1], str) \
                and isinstance(pattern[2], tuple):
            return pattern[2]
        if kind == "record" and len(pattern) == 3 and isinstance(pattern[1], tuple):
            for field in pattern[1]:
                if not isinstance(field, tuple) or len(field) != 2 or not isinstance(field[0], str):
                    raise _fail("bad record pattern")
            return tuple(sub for _, sub in pattern[1])
        raise _fail(f"bad pattern {kind!r}")

    # ------------------------------------------------------------------ blocks

    def open(self, kind: str) -> None:
        self.blocks.append(_Block(kind, self.depth, self.pc))

    def close_branch(self, block: _Block) -> None:
        if self.terminated:
            if self.depth != block.depth:
                raise _fail("a returning branch leaves values on the stack")
            return
        self.pop()
        if self.depth != block.depth:
            raise _fail("branches leave different stack depths")
        block.fell = True

    def else_(self) -> None:
        if not self.blocks or self.blocks[-1].kind == "loop" or self.blocks[-1].else_pc >= 0:
            raise _fail("ELSE without IF")
        block = self.blocks[-1]
        self.close_branch(block)
        block.else_pc = self.pc
        self.shape.else_of[block.start] = self.pc
        self.terminated = False

    def end(self) -> None:
        if not self.blocks or self.blocks[-1].kind == "loop":
            raise _fail("END without IF")
        block = self.blocks.pop()
        if block.else_pc < 0:
            raise _fail("IF block without ELSE")
        self.close_branch(block)
        self.shape.end_of[block.else_pc] = self.pc
        self.terminated = not block.fell
        if block.fell:
            self.push()

    def loop_test(self) -> None:
        if not self.blocks or self.blocks[-1].kind != "loop" or self.blocks[-1].tested:
            raise _fail("LOOP_TEST outside a loop, or twice in one")
        self.blocks[-1].tested = True
        self.blocks[-1].else_pc = self.pc
        self.pop()

    def end_loop(self) -> None:
        if not self.blocks or self.blocks[-1].kind != "loop":
            raise _fail("END_LOOP without LOOP")
        block = self.blocks.pop()
        if self.depth != block.depth:
            raise _fail("loop body leaves values on the stack")
        if not block.tested:
            raise _fail("loop without LOOP_TEST (it could never stop or count steps)")
        self.shape.loop_end[block.start] = self.shape.loop_end[block.else_pc] = self.pc
        self.shape.loop_start[self.pc] = block.start
        self.push()

    # ------------------------------------------------------------------ driver

    def run(self) -> Shape:
        code = self.code
        if not _int(code.arity) or not 0 <= code.arity <= code.n_locals:
            raise _fail(f"local slot {code.arity - 1} out of range in code {self.index}")
        for self.pc, (opcode, a, b) in enumerate(code.instructions):
            try:
                op = Op(opcode)
            except ValueError:
                raise _fail(f"unknown opcode {opcode!r}") from None
            if self.terminated and op not in (Op.ELSE, Op.END):
                raise _fail(f"unreachable instruction {self.pc} in code {self.index}")
            _CHECKS[op](self, a, b)
        if self.blocks or not self.terminated:
            raise _fail(f"code {self.index} does not end with a return")
        return self.shape


# ---------------------------------------------------------------------- one check per opcode


def _effect(pops: int, pushes: int) -> Any:
    def check(v: _Code, a: int, b: int) -> None:
        v.pop(pops)
        v.depth += pushes

    return check


def _const(v: _Code, a: int, b: int) -> None:
    v.const(a)
    v.push()


def _load_local(v: _Code, a: int, b: int) -> None:
    v.local(a)
    v.push()


def _store_local(v: _Code, a: int, b: int) -> None:
    v.local(a)
    v.pop()


def _load_free(v: _Code, a: int, b: int) -> None:
    if v.index == 0 or not _int(a) or not 0 <= a < len(v.code.captures):
        raise _fail(f"capture {a} out of range in code {v.index}")
    v.push()


def _load_global(v: _Code, a: int, b: int) -> None:
    v.global_slot(a)
    v.push()


def _store_global(v: _Code, a: int, b: int) -> None:
    if v.index != 0:
        raise _fail("STORE_GLOBAL outside the top level")
    v.global_slot(a)
    v.pop()


def _make_record(v: _Code, a: int, b: int) -> None:
    v.pop(len(v.labels(a)))
    v.push()


def _extend(v: _Code, a: int, b: int) -> None:
    v.pop(len(v.labels(a)) + 1)
    v.push()


def _get_field(v: _Code, a: int, b: int) -> None:
    if not isinstance(v.const(a), str):
        raise _fail("GET_FIELD needs a string constant")
    v.pop()
    v.push()


def _make_variant(v: _Code, a: int, b: int) -> None:
    if not isinstance(v.const(a), str):
        raise _fail("MAKE_VARIANT needs a string tag")
    v.pop(v.count(b))
    v.push()


def _make_array(v: _Code, a: int, b: int) -> None:
    v.pop(v.count(a))
    v.push()


def _make_closure(v: _Code, a: int, b: int) -> None:
    v.child(a)
    v.push()


def _make_rec(v: _Code, a: int, b: int) -> None:
    v.group(a, global_targets=False)


def _make_rec_global(v: _Code, a: int, b: int) -> None:
    if v.index != 0:
        raise _fail("MAKE_REC_GLOBAL outside the top level")
    v.group(a, global_targets=True)


def _call(v: _Code, a: int, b: int) -> None:
    v.pop(v.count(a) + 1)
    v.push()


def _tail_call(v: _Code, a: int, b: int) -> None:
    v.pop(v.count(a) + 1)
    v.terminated = True


def _self_tail_call(v: _Code, a: int, b: int) -> None:
    if not v.code.self_loop or a != v.code.arity or any(
            block.kind == "loop" for block in v.blocks):
        raise _fail("SELF_TAIL_CALL outside a self-looping function")
    v.pop(a)
    v.terminated = True


def _terminate(pops: int) -> Any:
    def check(v: _Code, a: int, b: int) -> None:
        v.pop(pops)
        v.terminated = True

    return check


def _if(v: _Code, a: int, b: int) -> None:
    v.pop()
    v.open("if")


def _match_arm(v: _Code, a: int, b: int) -> None:
    value = v.const(a)
    if not isinstance(value, tuple) or len(value) != 2 or not isinstance(value[0], int):
        raise _fail("bad MATCH_ARM constant")
    v.local(value[0])
    v.pattern(value[1])
    v.open("arm")


def _loop(v: _Code, a: int, b: int) -> None:
    v.open("loop")


def _module_new(v: _Code, a: int, b: int) -> None:
    if not isinstance(v.const(a), str):
        raise _fail("MODULE_NEW needs a string name")
    v.push()


def _module_fill(v: _Code, a: int, b: int) -> None:
    fill = v.const(a)
    n_globals = len(v.module.global_names)
    if not isinstance(fill, tuple) or not all(
            isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)
            and type(item[1]) is int and 0 <= item[1] < n_globals for item in fill):
        raise _fail("bad MODULE_FILL constant")
    v.pop()


_CHECKS: dict[Op, Any] = {
    Op.CONST: _const, Op.LOAD_LOCAL: _load_local, Op.STORE_LOCAL: _store_local,
    Op.LOAD_FREE: _load_free, Op.LOAD_GLOBAL: _load_global, Op.STORE_GLOBAL: _store_global,
    Op.POP: _effect(1, 0), Op.NEG: _effect(1, 1), Op.FNEG: _effect(1, 1),
    Op.MAKE_RECORD: _make_record, Op.EXTEND: _extend, Op.GET_FIELD: _get_field,
    Op.MAKE_VARIANT: _make_variant, Op.MAKE_ARRAY: _make_array, Op.ARRAY_GET: _effect(2, 1),
    Op.ARRAY_SET: _effect(3, 1), Op.MAKE_REF: _effect(1, 1), Op.DEREF: _effect(1, 1),
    Op.SET_REF: _effect(2, 1), Op.MAKE_CLOSURE: _make_closure, Op.MAKE_REC: _make_rec,
    Op.MAKE_REC_GLOBAL: _make_rec_global, Op.CALL: _call, Op.CALL_RAW: _call,
    Op.TAIL_CALL: _tail_call, Op.SELF_TAIL_CALL: _self_tail_call, Op.RETURN: _terminate(1),
    Op.IF: _if, Op.MATCH_ARM: _match_arm, Op.ELSE: lambda v, a, b: v.else_(),
    Op.END: lambda v, a, b: v.end(), Op.MATCH_FAIL: _terminate(0), Op.LOOP: _loop,
    Op.LOOP_TEST: lambda v, a, b: v.loop_test(), Op.END_LOOP: lambda v, a, b: v.end_loop(),
    Op.MODULE_NEW: _module_new, Op.MODULE_FILL: _module_fill,
}
for _op in (Op.ADD, Op.SUB, Op.MUL, Op.DIV, Op.FADD, Op.FSUB, Op.FMUL, Op.FDIV, Op.CONCAT,
            Op.EQ, Op.NE, Op.EQ_PRIM, Op.NE_PRIM, Op.LT, Op.GT, Op.LE, Op.GE,
            Op.FLT, Op.FGT, Op.FLE, Op.FGE):
    _CHECKS[_op] = _effect(2, 1)
assert set(_CHECKS) == set(Op), "every opcode has its check"


def verify(module: CompiledModule) -> tuple[Shape, ...]:
    """Check ``module`` (``BytecodeFormatError`` at the first violation); the block
    structure of each code object, by index."""
    if not module.codes:
        raise _fail("no code objects")
    if module.codes[0].arity != 0:
        raise _fail("the top-level code takes no parameters")
    created = [0]
    shapes: dict[int, Shape] = {}
    position = 0
    try:
        while position < len(created):  # every code object once, parents first
            index = created[position]
            shapes[index] = _Code(module, index, created).run()
            position += 1
    except (TypeError, ValueError, IndexError, KeyError) as error:
        raise _fail(f"malformed bytecode ({type(error).__name__}: {error})") from None
    missing = set(range(len(module.codes))) - set(created)
    if missing:
        raise _fail(f"code objects never created: {sorted(missing)[:5]}")
    return tuple(shapes[index] for index in range(len(module.codes)))
