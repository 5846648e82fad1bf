"""Calls in the translated VM: merged ``let rec`` groups (tail calls between members are
jumps, not ``TailCall`` objects) behave exactly as the reference interpreter.

Each program runs through both implementations (:func:`tests.chatml.differential.both`)
and must agree on output, the runtime diagnostic (position and ChatML stack trace),
steps and memory -- under budgets swept across the whole run, so a limit stops both at
every possible step.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import chatml.vm.translate
from chatml.build import build_source
from chatml.limits import Limits
from chatml.vm.loader import load, translation_for
from chatml.vm.run import run_program
from chatml.vm.translate import MAX_MERGED, _bound_slots, merge_groups
from tests.chatml.differential import both
from tests.chatml.vm_support import core_values

MUTUAL = """
let rec is_even n = if n == 0 then true else is_odd(n - 1)
and is_odd n = if n == 0 then false else is_even(n - 1)
print(is_even(10))
print(is_odd(7))
"""

THREE = """
let rec a n acc = if n <= 0 then acc else b(n - 1, acc + 1)
and b n acc = if n <= 0 then acc * 2 else c(acc, n - 1, n)
and c x n k = if n <= 0 then x + k else (if k > 3 then a(n - 1, x) else c(x + 1, n - 1, k))
print(a(20, 0))
print(c(1, 9, 2))
"""

FAILS_INSIDE = """
let rec down n = if n == 0 then 10 / n else across(n - 1)
and across n = if n == 0 then fail("at zero") else down(n - 1)
let go k = 1 + down(k)
print(go(6))
"""

OVERFLOWS = """
let rec grow n acc = if n == 0 then acc else twice(n - 1, acc)
and twice n acc = grow(n, acc * 2 + 1)
print(grow(70, 1))
"""

MIXED = """
let helper x = x + 100
let rec p n = if n > 3 then helper(n) else (if n == 2 then p(n + 3) else q(n + 1))
and q n = match n with | 0 -> p(1) | k -> p(k)
and unused s = s ++ "!"
print(p(0))
print(q(0))
print(unused("x"))
"""

SHADOWED = """
let rec f n = if n == 0 then 1 else g(n - 1)
and g n = if n == 0 then 2 else f(n - 1)
let h = f
let f n = n * 1000
print(h(5))
print(f(5))
print(g(4))
"""

LOCAL = """
let outer k =
  let rec e n = if n == 0 then k else o(n - 1)
  and o n = if n == 0 then 0 - k else (if n > 100 then 1 / (n - n) else e(n - 1)) in
  e(5) + o(5) + e(k)
print(outer(3))
print(outer(101))
"""

IN_A_LOOP = """
let total = ref(0)
let i = ref(0)
let fs = Array.make(4, fun x -> x)
while !i < 4 do
  let j = !i in
  let rec e n = if n == 0 then j else o(n - 1)
  and o n = if n == 0 then 0 - j else e(n - 1) in
  fs[j] <- e;
  total := !total + e(j + 3);
  i := !i + 1
done
print(!total)
print(fs[0](3) + fs[1](3) + fs[2](4) + fs[3](5))
"""

PROGRAMS = {"local": LOCAL, "in_a_loop": IN_A_LOOP, "mutual": MUTUAL, "three": THREE, "fails_inside": FAILS_INSIDE,
            "overflows": OVERFLOWS, "mixed": MIXED, "shadowed": SHADOWED}


def _agree(text: str, limits: Limits) -> tuple[object, ...]:
    outcomes = both(text, "calls.chatml", limits)
    assert outcomes is not None, "the program builds and loads"
    translated, referenced = outcomes
    assert translated.comparable() == referenced.comparable()
    return translated.comparable()


def _module(text: str):  # type: ignore[no-untyped-def]
    return build_source(text, "calls.chatml", surface="core", values=core_values()).module


def test_the_mutual_pair_is_merged_and_jumps() -> None:
    module = _module(MUTUAL)
    merged = merge_groups(module)
    assert len(merged) == 2 and len({id(group) for group in merged.values()}) == 1
    source = translation_for(module, core_values()).source
    assert "_TC(" not in source
    assert source.count("continue") == 4  # each member's function holds both bodies


def test_local_groups_with_captures_are_merged() -> None:
    module = _module(LOCAL)
    assert len(merge_groups(module)) == 2
    source = translation_for(module, core_values()).source
    assert "return _P" not in source


def test_groups_that_do_not_qualify_return_the_pending_tail_call() -> None:
    with_closure = """
let rec e n = if n == 0 then (fun x -> x + 1)(0) else o(n - 1)
and o n = if n == 0 then 0 else e(n - 1)
print(e(6))
"""
    module = _module(with_closure)
    assert merge_groups(module) == {}
    assert "return _P" in translation_for(module, core_values()).source
    _agree(with_closure, Limits())
    for steps in range(1, 40):
        _agree(with_closure, Limits(max_steps=steps))


def test_big_groups_are_not_merged() -> None:
    names = [f"m{i}" for i in range(MAX_MERGED + 1)]
    lines = [f"{'let rec' if i == 0 else 'and'} {name} n = "
             f"if n <= 0 then {i} else {names[(i + 1) % len(names)]}(n - 1)"
             for i, name in enumerate(names)]
    text = "\n".join(lines) + "\nprint(m0(23))\n"
    assert merge_groups(_module(text)) == {}
    _agree(text, Limits())


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_merged_groups_agree_with_the_reference(name: str) -> None:
    _agree(PROGRAMS[name], Limits())


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_every_step_budget_stops_both_at_the_same_point(name: str) -> None:
    """Sweep the step limit over the whole run: both stop at the same step, instruction,
    position and stack, whichever member the limit falls in."""
    full = _agree(PROGRAMS[name], Limits())
    assert full
    for steps in range(1, 160):
        _agree(PROGRAMS[name], Limits(max_steps=steps))


def test_failures_inside_a_merged_group_report_the_members_stack() -> None:
    outcomes = both(FAILS_INSIDE, "calls.chatml", Limits())
    assert outcomes is not None
    error = outcomes[0].error
    assert error is not None and error["code"] == "chatml.division_by_zero"
    assert error["line"] == 2  # inside `down`, reached through tail calls from `across`
    assert "down" in (error["hint"] or "") and "go" in (error["hint"] or "")


def test_a_long_chain_of_tail_calls_runs_in_constant_stack() -> None:
    text = """
let rec ping n = if n == 0 then 0 else pong(n - 1)
and pong n = if n == 0 then 1 else ping(n - 1)
print(ping(1000001))
"""
    values = core_values()
    built = build_source(text, "chain.chatml", surface="core", values=values)
    program = load(built.module, values, built.source)
    printed: list[str] = []
    run_program(program, Limits(max_depth=50), sink=printed.append)
    assert "".join(printed).strip() == "1"


def test_non_tail_recursion_through_a_group_still_hits_the_depth_limit() -> None:
    text = """
let rec deep n = if n == 0 then 0 else 1 + other(n - 1)
and other n = deep(n)
print(deep(100000))
"""
    outcomes = both(text, "calls.chatml", Limits(max_depth=200))
    assert outcomes is not None
    assert outcomes[0].comparable() == outcomes[1].comparable() == ("recursion limit",)


@settings(max_examples=60, deadline=None)
@given(
    size=st.integers(2, MAX_MERGED),
    edges=st.lists(st.tuples(st.integers(0, MAX_MERGED - 1), st.integers(1, 3),
                             st.booleans()), min_size=MAX_MERGED, max_size=MAX_MERGED),
    start=st.integers(0, 40),
    steps=st.integers(1, 200),
)
def test_random_groups_agree(size: int, edges: list[tuple[int, int, bool]], start: int,
                             steps: int) -> None:
    """Random groups of members that tail-call each other (or themselves, or call a member
    in a non-tail position), under a step budget that may run out anywhere."""
    lines = []
    for i in range(size):
        target, step, tail = edges[i]
        callee = f"m{target % size}"
        call = f"{callee}(n - {step}, acc + {i + 1})"
        body = call if tail else f"1 + {call}"
        lines.append(f"{'let rec' if i == 0 else 'and'} m{i} n acc = "
                     f"if n <= 0 then acc * {i + 2} else {body}")
    text = "\n".join(lines) + f"\nprint(m0({start}, 0))\nprint(m{size - 1}({start // 2}, 5))\n"
    _agree(text, Limits(max_steps=steps))
    _agree(text, Limits())


def _nested(depth: int) -> str:
    body = "o(n - 1)"
    for level in range(depth):
        body = f"(if n > {level} then {body} else {level})"
    return (f"let rec e n = if n < 0 then 0 else {body}\n"
            "and o n = if n == 0 then 1 else e(n - 1)\n"
            "print(e(500))\n")


def _loads(text: str) -> bool:
    values = core_values()
    built = build_source(text, "deep.chatml", surface="core", values=values)
    return not load(built.module, values, built.source).interpreted  # else: too deep


def test_a_group_too_deep_to_merge_is_not_merged(monkeypatch: pytest.MonkeyPatch) -> None:
    """A member nested so deeply that the two extra blocks of a merged body pass Python's
    limit still loads (unmerged) wherever it loaded before merging existed."""
    monkeypatch.setattr(chatml.vm.translate, "MAX_MERGED_INSTRUCTIONS", 100_000)
    with monkeypatch.context() as patch:
        patch.setattr(chatml.vm.translate, "merge_groups", lambda module: {})
        deepest = max(depth for depth in range(60, 100) if _loads(_nested(depth)))
    text = _nested(deepest)
    assert merge_groups(_module(text))  # it qualifies, but cannot be merged
    assert _loads(text)
    _agree(text, Limits())


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_every_program_here_has_a_merged_group(name: str) -> None:
    """(So the agreement tests above exercise merged groups, not the fallback.)"""
    assert merge_groups(_module(PROGRAMS[name]))


def test_pattern_bindings_count_as_assignments() -> None:
    arm = (0, ("variant", "A", (("var", 3), ("record", (("x", ("var", 4)),), False), ("_",))))
    assert sorted(_bound_slots(arm)) == [3, 4]
    assert _bound_slots((0, ("lit", 5))) == []
