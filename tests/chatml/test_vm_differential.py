"""The translated VM and the reference interpreter agree (tests.chatml.differential).

Every program runs through both :mod:`chatml.vm.translate` (with its range
analysis, batched charges and inlined builtins) and :mod:`chatml.vm.reference`
(the opcode table, one instruction at a time), and the runs must agree on:

* the printed output;
* the runtime diagnostic, every field (code, message, position, stack trace);
* the steps taken and the memory charged (words), read from the meter when
  the top level returns or fails -- so when a limit stops a run, both stop at
  the same allocation or step, at the same instruction.

A run that hits the recursion limit is compared by its code only (the two
stop at different depths, see :mod:`chatml.vm.reference`). Programs: the
run and stdlib testdata (with their limits), the conformance corpus's run
cases, and hypothesis-generated programs (the generators of the VM property
and fast-path tests), under budgets small enough to run out mid-program.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatml.build import build_source
from chatml.bytecode.opcodes import Op
from chatml.limits import COST, Limits
from chatml.vm import reference
from chatml.vm.loader import load
from tests.chatml.deep_programs import (
    NESTED,
    else_if_chain,
    else_if_output,
    match_arms,
    match_arms_output,
    nested_output,
)
from tests.chatml.differential import both
from tests.chatml.harness import TESTDATA, case_files, parse_expectations
from tests.chatml.test_vm_charge_batches import charge_programs
from tests.chatml.test_vm_fast_paths import range_programs, string_programs
from tests.chatml.typed_programs import programs
from tests.chatml.vm_support import core_values
from tests.support import load_cases

FILES = case_files("run") + case_files("stdlib")
RUN_CASES = [case for case in load_cases("chatml/cases.jsonl") if case["mode"] == "run"]


def _agree(text: str, name: str, limits: Limits) -> None:
    outcomes = both(text, name, limits)
    assert outcomes is not None, "the program builds and loads"
    translated, referenced = outcomes
    assert translated.comparable() == referenced.comparable()


def _limits(options: dict[str, str]) -> Limits:
    defaults = Limits()
    return Limits(
        max_steps=int(options.get("max-steps", defaults.max_steps or 0)),
        max_memory=int(options.get("max-memory", defaults.max_memory or 0)),
        max_depth=int(options.get("max-depth", defaults.max_depth)),
    )


def test_there_are_programs_of_every_source() -> None:
    assert len(FILES) >= 60 and len(RUN_CASES) >= 50


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(TESTDATA)))
def test_testdata(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    _agree(text, path.name, _limits(dict(parse_expectations(text).options)))


@pytest.mark.parametrize("case", RUN_CASES, ids=lambda case: case["id"])
def test_conformance_corpus(case: dict[str, Any]) -> None:
    outcomes = both(case["source"], "case.chatml", Limits())
    if outcomes is None:  # a parse or type error case: nothing runs
        assert case["expect"] in ("parse_error", "type_error")
        return
    translated, referenced = outcomes
    assert translated.comparable() == referenced.comparable()


_SETTINGS = settings(max_examples=40, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@_SETTINGS
@given(programs(), st.sampled_from([40, 400, 200_000]), st.sampled_from([3_000, 50_000_000]))
def test_random_well_typed_programs(text: str, steps: int, memory: int) -> None:
    _agree(text, "random.chatml", Limits(max_steps=steps, max_memory=memory))


@_SETTINGS
@given(charge_programs(), st.integers(300, 4000))
def test_programs_that_allocate_under_small_budgets(text: str, memory: int) -> None:
    _agree(text, "charges.chatml", Limits(max_steps=100_000, max_memory=memory))


@_SETTINGS
@given(st.one_of(range_programs(), string_programs()), st.sampled_from([30, 300, 100_000]))
def test_arithmetic_near_the_bounds_and_inlined_builtins(text: str, steps: int) -> None:
    _agree(text, "ranges.chatml", Limits(max_steps=steps, max_memory=50_000_000))


def test_a_difference_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    """A reference that charges strings differently disagrees (the comparison can fail)."""
    text = 'let s = "a" ++ "b"\nprint(s)\n'
    outcomes = both(text, "s.chatml", Limits())
    assert outcomes is not None and outcomes[0].comparable() == outcomes[1].comparable()
    assert outcomes[0].memory == (COST["string"] + 2 + 7) // 8

    def concat_uncharged(frame: Any, a: int, b: int) -> None:
        right = frame.stack.pop()
        frame.stack[-1] = frame.stack[-1] + right

    monkeypatch.setitem(reference._STEPS, Op.CONCAT, concat_uncharged)
    translated, referenced = both(text, "s.chatml", Limits()) or (None, None)
    assert translated is not None and referenced is not None
    assert translated.stdout == referenced.stdout == "ab\n"
    assert translated.memory != referenced.memory


def test_the_failure_point_is_compared() -> None:
    """Under a budget that runs out mid-loop both stop at the same step and instruction."""
    text = "let i = ref(0)\nwhile !i < 100 do i := !i + 1 done\nprint(!i)\n"
    translated, referenced = both(text, "loop.chatml", Limits(max_steps=37)) or (None, None)
    assert translated is not None and referenced is not None
    assert translated.error is not None and translated.error["code"] == "chatml.step_limit"
    assert translated.steps == 38  # the 38th step is the one that fails
    assert translated.comparable() == referenced.comparable()


# ---------------------------------------------------------------- deep and flat programs
# A module nested too deeply for generated Python runs on the reference interpreter
# (``load`` falls back, see chatml.vm.loader): these compare that path -- loaded by
# ``load``, run by ``run_program``, errors converted by the program's own records --
# with ``run_reference``; an else-if chain is translated flat (``elif``, or gated links).

_DEEP = 1000


def _loaded_interpreted(text: str) -> bool:
    values = core_values()
    built = build_source(text, "deep.chatml", surface="core", values=values)
    return load(built.module, values, built.source).interpreted


@pytest.mark.parametrize("shape", sorted(NESTED))
@pytest.mark.parametrize(("steps", "memory"), [(3, 10**9), (700, 10**9), (200_000, 2_000),
                                               (200_000, 10**9)])
def test_deep_programs_agree(shape: str, steps: int, memory: int) -> None:
    text = NESTED[shape](_DEEP)
    _agree(text, "deep.chatml", Limits(max_steps=steps, max_memory=memory))
    if (steps, memory) == (200_000, 10**9):
        outcomes = both(text, "deep.chatml", Limits(max_steps=steps, max_memory=memory))
        assert outcomes is not None and outcomes[0].stdout == nested_output(shape, _DEEP)


def test_the_deep_shapes_that_python_cannot_nest_fall_back() -> None:
    interpreted = {shape for shape in NESTED if _loaded_interpreted(NESTED[shape](_DEEP))}
    assert interpreted == {"if", "fun", "match"}
    assert not any(_loaded_interpreted(NESTED[shape](20)) for shape in NESTED)


_FAILING_DEEP = {
    "division": "let f n = " + "if n > 0 then " * 300 + "7 / (n - n)" + " else 0" * 300
                + "\nlet g n = f(n) + 1\nprint(to_string(g(5)))\n",
    "overflow": "let f = " + "fun x -> " * 200 + "x * 4611686018427387903\n"
                "print(to_string(f" + "(3)" * 200 + "))\n",
    "index": "let a = [1]\nlet f n = " + "match n with | 0 -> 0 | _ -> (" * 150 + "a[n]"
             + ")" * 150 + "\nprint(to_string(f(4)))\n",
    "fail": "let rec h n = if n == 0 then fail(\"bottom\") else " + "if true then " * 150
            + "h(n - 1)" + " else 0" * 150 + "\nprint(to_string(h(3)))\n",
    "recursion": "let rec h n = " + "if true then " * 150 + "1 + h(n + 1)" + " else 0" * 150
                 + "\nprint(to_string(h(0)))\n",
}


@pytest.mark.parametrize("name", sorted(_FAILING_DEEP))
def test_failures_in_deep_programs_agree_on_position_and_stack(name: str) -> None:
    text = _FAILING_DEEP[name]
    assert _loaded_interpreted(text)
    outcomes = both(text, "deep.chatml", Limits(max_depth=300))
    assert outcomes is not None
    translated, referenced = outcomes
    assert translated.error is not None
    if name != "recursion":
        assert translated.error["line"] >= 1 and translated.error["column"] > 1
    assert translated.comparable() == referenced.comparable()


@pytest.mark.parametrize("impure", [False, True])
@pytest.mark.parametrize("count", [3, 5_000])
def test_else_if_chains_agree(count: int, impure: bool) -> None:
    text = else_if_chain(count, impure)
    assert not _loaded_interpreted(text)  # translated, flat
    outcomes = both(text, "chain.chatml", Limits(max_steps=10**6, max_memory=10**9))
    assert outcomes is not None and outcomes[0].stdout == else_if_output(count)
    assert outcomes[0].comparable() == outcomes[1].comparable()


def test_match_arms_agree() -> None:
    text = match_arms(5_000)
    assert not _loaded_interpreted(text)
    outcomes = both(text, "arms.chatml", Limits(max_steps=10**6, max_memory=10**9))
    assert outcomes is not None and outcomes[0].stdout == match_arms_output(5_000)
    assert outcomes[0].comparable() == outcomes[1].comparable()


_CONDITIONS = st.sampled_from(["x == {i}", "x < {i}", "g(x) == {i}", "100 / (x - {i}) > 3",
                               "x * x > {i} * 9", "(s ++ \"a\") == \"{i}a\"",
                               "a[x - {i}] == {i}"])
_BRANCHES = st.sampled_from(["{i} * 2", "x + {i}", "g(x) - {i}", "x * 4611686018427387",
                             "(let y = x + {i} in y * y)", "fail(\"b{i}\")", "a[{i}]",
                             "length([x, {i}])"])


@st.composite
def chain_programs(draw: st.DrawFn) -> str:
    """An else-if chain of pure and impure links (conditions and branches that may fail,
    allocate or overflow), in a function's tail, in a ``let``, or in a loop body."""
    count = draw(st.integers(1, 12))
    links = "".join(
        f"if {draw(_CONDITIONS).format(i=i)} then {draw(_BRANCHES).format(i=i)} else "
        for i in range(count))
    chain = f"{links}{draw(_BRANCHES).format(i=count)}"
    context = draw(st.sampled_from([
        "let f x = {c}\nlet r = ref(0)\nlet i = ref(0)\n"
        "while !i < 12 do r := !r + f(!i); i := !i + 1 done\nprint(to_string(!r))\n",
        "let f x = let v = {c} in v + 1\nprint(to_string(f(3) + f(9)))\n",
        "let r = ref(0)\nlet i = ref(0)\n"
        "while !i < 12 do (let x = !i in r := !r + ({c})); i := !i + 1 done\n"
        "print(to_string(!r))\n",
    ]))
    return ("let a = [0, 1, 2, 3, 4, 5, 6, 7]\nlet s = \"3\"\nlet g x = x + 1\n"
            + context.format(c=chain))


@_SETTINGS
@given(chain_programs(), st.sampled_from([20, 200, 200_000]), st.sampled_from([600, 10**9]))
def test_random_else_if_chains_agree(text: str, steps: int, memory: int) -> None:
    _agree(text, "chains.chatml", Limits(max_steps=steps, max_memory=memory))


@pytest.mark.parametrize("memory", [1000, 1500, 2000, 3000])
def test_a_limit_inside_a_loop_closure_factory_is_one_frame(memory: int) -> None:
    """A closure made in a self-tail-call loop is made by a factory function; running out
    of memory inside it reports the loop's one ChatML frame (found by hypothesis)."""
    text = ("let rec loop n acc = if n <= 0 then acc else "
            "loop(n - 1, acc + ({ {f = 0; g = 0} with g = ((fun v1 -> n)(0)) }.g))\n"
            "print(loop(9, 0))\n")
    _agree(text, "factory.chatml", Limits(max_steps=40, max_memory=memory))
