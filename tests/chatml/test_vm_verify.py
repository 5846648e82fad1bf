"""Bytecode verification (chatml.vm.verify) and the range analysis's pieces (chatml.vm.intervals).

* every module the compiler produces verifies, and the recorded block
  structure points each ``IF``/``ELSE``/``LOOP`` at the instruction it pairs with;
* hand-broken modules are rejected with a message naming the problem, before
  any translation (``translate`` and ``load_reference`` both refuse them);
* the interval arithmetic is exact on the corners it is built from, and
  narrowing by a comparison keeps exactly the values that satisfy it.
"""

from __future__ import annotations

import itertools

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatml.build import build_source
from chatml.bytecode.code import CompiledModule, Instruction
from chatml.bytecode.opcodes import Op
from chatml.bytecode.serialize import BytecodeFormatError
from chatml.vm import intervals
from chatml.vm.reference import load_reference
from chatml.vm.translate import translate
from chatml.vm.verify import verify
from tests.chatml.vm_support import core_values

SAMPLE = """let rec fib n = if n < 2 then n else fib(n - 1) + fib(n - 2)
let i = ref(0)
while !i < 3 do i := !i + 1 done
let f x = match x with | `A(y) -> y | `B -> 0
print(fib(5) + f(`A(2)) + f(`B))
"""


def compiled(text: str = SAMPLE) -> CompiledModule:
    return build_source(text, "v.chatml", values=core_values()).module


def with_code(module: CompiledModule, index: int, instructions: list[Instruction]
              ) -> CompiledModule:
    code = module.codes[index]
    positions = (code.positions * (len(instructions) // max(1, len(code.positions)) + 1))
    changed = attrs.evolve(code, instructions=tuple(instructions),
                           positions=positions[:len(instructions)])
    return attrs.evolve(module, codes=module.codes[:index] + (changed,)
                        + module.codes[index + 1:])


def test_compiled_modules_verify_and_their_shapes_pair_the_blocks() -> None:
    module = compiled()
    shapes = verify(module)
    assert len(shapes) == len(module.codes)
    for code, shape in zip(module.codes, shapes, strict=True):
        ops = [Op(op) for op, _, _ in code.instructions]
        for start, else_pc in shape.else_of.items():
            assert ops[start] in (Op.IF, Op.MATCH_ARM) and ops[else_pc] is Op.ELSE
            assert ops[shape.end_of[else_pc]] is Op.END
        for start, end in shape.loop_end.items():
            assert ops[start] in (Op.LOOP, Op.LOOP_TEST) and ops[end] is Op.END_LOOP
        assert all(ops[loop] is Op.LOOP for loop in shape.loop_start.values())
        assert sum(op in (Op.IF, Op.MATCH_ARM) for op in ops) == len(shape.else_of)
    assert any(shape.loop_start for shape in shapes)


def _broken(module: CompiledModule, index: int, change: str) -> CompiledModule:
    instructions = list(module.codes[index].instructions)
    ops = [Op(op) for op, _, _ in instructions]
    if change == "no_else":
        instructions.pop(ops.index(Op.ELSE))
    elif change == "underflow":
        instructions.insert(0, (Op.POP, 0, 0))
    elif change == "unreachable":
        at = ops.index(Op.RETURN)
        instructions.insert(at + 1, (Op.CONST, 0, 0))
    elif change == "bad_opcode":
        instructions[0] = (999, 0, 0)
    elif change == "local_range":
        instructions.insert(0, (Op.LOAD_LOCAL, 500, 0))
    elif change == "const_range":
        instructions.insert(0, (Op.CONST, 10_000, 0))
    elif change == "store_global":
        instructions.insert(0, (Op.CONST, 0, 0))
        instructions.insert(1, (Op.STORE_GLOBAL, 0, 0))
    elif change == "no_loop_test":
        instructions.pop(ops.index(Op.LOOP_TEST))
    return with_code(module, index, instructions)


@pytest.mark.parametrize("index, change, message", [
    (1, "no_else", "IF block without ELSE|unreachable instruction 6 in code 1"),
    (1, "underflow", "stack underflow at instruction 0 of code 1"),
    (1, "unreachable", "unreachable instruction"),
    (0, "bad_opcode", "unknown opcode 999"),
    (1, "local_range", "local slot 500 out of range in code 1"),
    (0, "const_range", "constant 10000 out of range"),
    (1, "store_global", "STORE_GLOBAL outside the top level"),
    (0, "no_loop_test", "LOOP_TEST|stack"),
])
def test_broken_modules_are_rejected_before_translation(index: int, change: str,
                                                        message: str) -> None:
    broken = _broken(compiled(), index, change)
    for check in (verify, translate, lambda m: load_reference(m, core_values())):
        with pytest.raises(BytecodeFormatError, match=message):
            check(broken)


def test_code_objects_are_created_exactly_once_by_their_parent() -> None:
    module = compiled("let f x = x + 1\nprint(f(1))\n")
    top = list(module.codes[0].instructions)
    make = next(i for i, (op, _, _) in enumerate(top) if op in (Op.MAKE_CLOSURE,
                                                                Op.MAKE_REC_GLOBAL))
    without = top[:make] + top[make + 1:]
    if top[make][0] == Op.MAKE_CLOSURE:
        without.insert(make, (Op.CONST, 0, 0))
    with pytest.raises(BytecodeFormatError, match="never created|underflow"):
        verify(with_code(module, 0, without))
    orphan = attrs.evolve(module, codes=module.codes + (module.codes[1],))
    with pytest.raises(BytecodeFormatError, match="never created: \\[2\\]"):
        verify(orphan)
    top_with_params = attrs.evolve(module.codes[0], arity=1, n_locals=1)
    with pytest.raises(BytecodeFormatError, match="top-level code takes no parameters"):
        verify(attrs.evolve(module, codes=(top_with_params,) + module.codes[1:]))


def test_captures_must_name_the_parents_variables() -> None:
    module = compiled("let g y = let h z = y + z in h(1)\nprint(g(2))\n")
    child = next(i for i, code in enumerate(module.codes) if code.captures)
    bad = attrs.evolve(module.codes[child], captures=((0, 99),))
    with pytest.raises(BytecodeFormatError, match="local slot 99 out of range"):
        verify(attrs.evolve(module, codes=module.codes[:child] + (bad,)
                            + module.codes[child + 1:]))
    kind = attrs.evolve(module.codes[child], captures=((7, 0),))
    with pytest.raises(BytecodeFormatError, match="bad capture kind"):
        verify(attrs.evolve(module, codes=module.codes[:child] + (kind,)
                            + module.codes[child + 1:]))


# --------------------------------------------------------------------------- intervals

bounds = st.integers(-(2**63), 2**63)


@st.composite
def interval(draw: st.DrawFn) -> tuple[int, int]:
    a, b = draw(bounds), draw(bounds)
    return (min(a, b), max(a, b))


def _corners(left: tuple[int, int], right: tuple[int, int]) -> list[tuple[int, int]]:
    return list(itertools.product(left, right))


@settings(max_examples=200, deadline=None)
@given(interval(), interval())
def test_arithmetic_intervals_hold_every_corner_result(left: tuple[int, int],
                                                      right: tuple[int, int]) -> None:
    for function, apply in ((intervals.add, lambda x, y: x + y),
                            (intervals.sub, lambda x, y: x - y),
                            (intervals.mul, lambda x, y: x * y)):
        lo, hi = function(left, right)
        results = [apply(x, y) for x, y in _corners(left, right)]
        assert lo == min(results) and hi == max(results)
    assert intervals.neg(left) == (-left[1], -left[0])


@settings(max_examples=200, deadline=None)
@given(interval(), st.integers(1, 50), st.integers(0, 50), st.integers(-60, 60))
def test_division_by_a_positive_interval_contains_every_quotient(
        left: tuple[int, int], rlo: int, width: int, pick: int) -> None:
    right = (rlo, rlo + width)
    lo, hi = intervals.divide(left, right)
    for x in (left[0], left[1], (left[0] + left[1]) // 2):
        for y in (right[0], right[1]):
            assert lo <= intervals.truncated_division(x, y) <= hi
    assert intervals.truncated_division(-7, 2) == -3 and intervals.truncated_division(7, -2) == -3


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([Op.LT, Op.LE, Op.GT, Op.GE]), interval(), interval(),
       st.integers(-5, 5), st.integers(-5, 5))
def test_narrowing_keeps_exactly_the_values_that_satisfy_the_test(
        op: Op, left: tuple[int, int], right: tuple[int, int], dx: int, dy: int) -> None:
    compare = {Op.LT: lambda x, y: x < y, Op.LE: lambda x, y: x <= y,
               Op.GT: lambda x, y: x > y, Op.GE: lambda x, y: x >= y}[op]
    narrowed_left, narrowed_right = intervals.narrow(op, left, right)
    x = min(max(left[0] + dx, left[0]), left[1])
    y = min(max(right[1] + dy, right[0]), right[1])
    if compare(x, y):
        assert narrowed_left[0] <= x <= narrowed_left[1]
        assert narrowed_right[0] <= y <= narrowed_right[1]


def test_loop_steps_recognise_counters() -> None:
    module = compiled("let f n = let i = ref(0) in let j = ref(n) in "
                      "(while !i < n do i := !i + 1; j := !j - 2; j := !i * 2 done; !j)\n"
                      "print(f(3))\n")
    code = module.codes[1]
    start = next(pc for pc, (op, _, _) in enumerate(code.instructions) if op == Op.LOOP)
    steps = intervals.loop_steps(code, module.consts, start)
    assert sorted(steps.values(), key=len) == [[1], [-2, None]]
