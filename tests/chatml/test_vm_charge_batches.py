"""Batched memory charges and Hashtbl's in-place ``set`` change nothing a run can see.

* **Charge batches** (:mod:`chatml.vm.charges`): programs that build strings
  (``to_string`` of ints near the 63-bit bounds, literals, concatenations),
  records, variants, arrays and refs between int arithmetic that may overflow
  run identically -- output, the error and its position, and the exact memory
  charged -- with the charges batched and made one by one
  (``load(batch_charges=False)``), under budgets small enough to run out at
  every point.
* **Hashtbl** (:mod:`chatml.stdlib.hashtbl`): a ``set`` that changes the entry
  array in place (no one else holds it) and one that copies it give the same
  table; an array a script or host still holds never changes; a failed
  transactional run restores the table.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatml.build import build_source
from chatml.calls import ChatMLRuntimeError
from chatml.limits import METER, Limits
from chatml.stdlib import hashtbl
from chatml.values import ChatMLFailure, Ref, Value
from chatml.vm.loader import LoadedProgram, load
from chatml.vm.run import run_boundary
from tests.chatml.vm_support import core_values

MAX = 2**62 - 1
_INTS = ["0", "7", "-12", "123456789", str(MAX), str(MAX - 1), f"({-MAX})", "2305843009213693952",
         "!n", "(!n * 3)", "(!n + 1)"]

ints = st.sampled_from(_INTS)
words = st.sampled_from(['"a"', '""', '"\u00e9t\u00e9"', '"key="', '"x" ++ "y"'])


@st.composite
def text(draw: st.DrawFn, depth: int = 2) -> str:
    if depth == 0 or draw(st.integers(0, 2)) == 0:
        return draw(st.one_of(words, ints.map(lambda i: f"to_string({i})")))
    form = draw(st.sampled_from(["concat", "concat", "to_string", "length"]))
    if form == "to_string":
        return f"to_string({draw(text(depth - 1))})"
    if form == "length":
        return f"to_string(String.length({draw(text(depth - 1))}) + {draw(ints)})"
    return f"({draw(text(depth - 1))} ++ {draw(text(depth - 1))})"


@st.composite
def statement(draw: st.DrawFn) -> str:
    form = draw(st.sampled_from(["print", "print", "acc", "record", "array", "variant", "ref",
                                 "bump"]))
    if form == "print":
        return f"print({draw(text())})"
    if form == "acc":
        return f"acc := !acc ++ {draw(text())}"
    if form == "record":
        return (f"print(({{ a = {draw(text(1))}; b = {draw(ints)} + 1; "
                f"c = {draw(text(1))} }}).c)")
    if form == "array":
        return f"print([{draw(text(1))}, {draw(text(1))} ++ to_string({draw(ints)} * 2)][1])"
    if form == "variant":
        return (f"print(match `V({draw(text(1))}, {draw(ints)} - 5) with "
                f"| `V(s, k) -> s ++ to_string(k))")
    if form == "ref":
        return f"print(!(ref({draw(text(1))} ++ to_string({draw(ints)} * 4))))"
    return f"n := !n * {draw(st.sampled_from(['2', '3', '1000']))} + 1"


@st.composite
def charge_programs(draw: st.DrawFn) -> str:
    body = draw(st.lists(statement(), min_size=1, max_size=8))
    looped = draw(st.booleans())
    start = draw(ints.filter(lambda i: "!n" not in i))
    lines = ["let acc = ref(\"\")", f"let n = ref({start})"]
    if looped:
        lines.append("let i = ref(0)")
        lines.append(f"while !i < {draw(st.integers(1, 4))} do")
        lines.extend(f"  {line};" for line in body)
        lines.append("  i := !i + 1")
        lines.append("done")
    else:
        lines.extend(body)
    lines.append("print(String.length(!acc))")
    return "\n".join(lines) + "\n"


def _outcome(program: LoadedProgram, limits: Limits) -> tuple[Any, ...]:
    """(output, error or None, memory left at the end) of one run."""
    output: list[str] = []
    left: list[int] = []

    def thunk() -> None:
        try:
            program.main()
        finally:
            left.append(METER.memory)

    try:
        run_boundary(thunk, limits, sink=output.append)
    except ChatMLRuntimeError as error:
        d = error.diagnostic
        return ("".join(output), (d.code, d.message, d.line, d.column, d.end_line,
                                  d.end_column, d.hint), left[0])
    return "".join(output), None, left[0]


def _both_ways(text: str) -> tuple[LoadedProgram, LoadedProgram]:
    built = build_source(text, "charges.chatml", values=core_values())
    return (load(built.module, core_values(), built.source),
            load(built.module, core_values(), built.source, batch_charges=False))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(charge_programs(), st.integers(200, 6000))
def test_batched_charges_behave_like_charges_one_by_one(text: str, memory: int) -> None:
    batched, single = _both_ways(text)
    assert "_M.memory - (" in single.python_source
    for limits in (Limits(max_memory=memory, max_steps=10_000), Limits(max_steps=10_000)):
        assert _outcome(batched, limits) == _outcome(single, limits)


def test_a_line_of_small_strings_is_charged_once() -> None:
    text = ('let f n = let k = n + 0 in "key" ++ to_string(k) ++ "=" ++ to_string(k * 2) ++ ";"\n'
            'print(f(123))\n')
    batched, single = _both_ways(text)
    body = batched.python_source.split("def _c1", 1)[1].split("return t7", 1)[0]
    # one update (a table look-up by the two int texts' lengths); the rest is the slow path
    # replaying the six charges (and the three made before `k * 2` may overflow)
    assert body.count("_M.memory = _m = _M.memory - (_bw") == 1
    assert body.count("_M.memory = _m = _M.memory - (_W[") == 3 + 6
    assert "type(" not in body  # k is known to be an int
    assert single.python_source.count("_M.memory = _m = _M.memory -") >= 6
    budget = Limits(max_memory=1_000_000)
    assert _outcome(batched, budget) == _outcome(single, budget)
    assert _outcome(batched, budget)[0] == "key123=246;\n"


def test_memory_failure_inside_a_batch_is_at_the_allocation_that_runs_out() -> None:
    # the third string of the line is the one that no longer fits
    text = 'let f n = "abc" ++ to_string(n) ++ "defgh" ++ to_string(n)\nprint(f(5))\n'
    batched, single = _both_ways(text)
    outcomes = {_outcome(program, Limits(max_memory=limit))
                for program in (batched, single) for limit in range(0, 400, 8)}
    failures = {outcome[1][:4] for outcome in outcomes if outcome[1] is not None}
    assert len(failures) > 1  # different budgets fail at different allocations
    for limit in range(0, 400, 8):
        assert (_outcome(batched, Limits(max_memory=limit))
                == _outcome(single, Limits(max_memory=limit)))


def test_an_overflow_after_pending_charges_still_fails_on_memory_first() -> None:
    text = ('let f n = let s = "abc" ++ to_string(n) in s ++ to_string(n * 4)\n'
            f'print(f({MAX // 2}))\n')
    batched, single = _both_ways(text)
    roomy = _outcome(batched, Limits())
    assert roomy[1] is not None and roomy[1][0] == "chatml.integer_overflow"
    tight = _outcome(batched, Limits(max_memory=16))
    assert tight[1] is not None and tight[1][0] == "chatml.memory_limit"
    for limits in (Limits(), Limits(max_memory=16), Limits(max_memory=0)):
        assert _outcome(batched, limits) == _outcome(single, limits)


# --------------------------------------------------------------------------- Hashtbl

KEYS = ["a", "b", "c", "d"]
operation = st.one_of(
    st.tuples(st.just("set"), st.sampled_from(KEYS), st.integers(0, 9)),
    st.tuples(st.just("get"), st.sampled_from(KEYS)),
    st.tuples(st.just("remove"), st.sampled_from(KEYS)),
    st.tuples(st.just("hold")),      # a script keeps !t
    st.tuples(st.just("drop")),      # ... and lets it go
)


def _model_set(model: list[dict[str, Value]], key: str, value: Value) -> list[dict[str, Value]]:
    for position, entry in enumerate(model):
        if entry["key"] == key:
            return [*model[:position], {"key": key, "value": value}, *model[position + 1:]]
    return [*model, {"key": key, "value": value}]


@settings(max_examples=300, deadline=None)
@given(st.lists(operation, max_size=60))
def test_hashtbl_set_in_place_is_invisible(operations: list[tuple[Any, ...]]) -> None:
    table = hashtbl.create()
    model: list[dict[str, Value]] = []
    held: list[tuple[list[Value], list[Value]]] = []  # (array a script holds, what it held)
    for op, *args in operations:
        if op == "set":
            hashtbl.set_(table, args[0], args[1])
            model = _model_set(model, args[0], args[1])
        elif op == "get":
            found = hashtbl.get(table, args[0])
            expected = [e["value"] for e in model if e["key"] == args[0]]
            assert (found.args == (expected[0],)) if expected else found.tag == "None"
        elif op == "remove":
            hashtbl.remove(table, args[0])
            model = [entry for entry in model if entry["key"] != args[0]]
        elif op == "hold":
            held.append((table.value, [dict(entry) for entry in table.value]))
        elif held:
            held.pop(0)
        assert table.value == model
        for array, contents in held:
            assert array == contents  # what a script holds never changes
            assert table.value is not array or op not in ("set", "remove")


def test_hashtbl_set_changes_an_array_no_one_holds_in_place() -> None:
    table = hashtbl.create()
    hashtbl.set_(table, "a", 1)
    hashtbl.get(table, "a")  # indexed
    first = id(table.value)
    hashtbl.set_(table, "a", 2)
    hashtbl.set_(table, "b", 3)
    assert id(table.value) == first and table.value == [{"key": "a", "value": 2},
                                                        {"key": "b", "value": 3}]
    kept = table.value
    hashtbl.set_(table, "a", 4)
    assert table.value is not kept and kept[0] == {"key": "a", "value": 2}


def test_hashtbl_set_copies_for_the_journal_and_a_failed_run_restores_the_table() -> None:
    table = hashtbl.create()
    for key in KEYS:
        hashtbl.set_(table, key, 1)
    before = [dict(entry) for entry in table.value]

    def run() -> None:
        hashtbl.set_(table, "a", 2)      # would be in place, but the journal holds the array
        hashtbl.set_(table, "z", 3)
        raise ChatMLFailure("boom")

    with pytest.raises(ChatMLRuntimeError):
        run_boundary(run, Limits(), transactional=True)
    assert table.value == before
    assert hashtbl.get(table, "a").args == (1,) and hashtbl.get(table, "z").tag == "None"


def test_hashtbl_set_in_place_keeps_the_charges() -> None:
    table = Ref([])
    for i in range(100):
        hashtbl.set_(table, f"k{i}", i)
    seen: list[tuple[int, int]] = []

    def measured() -> None:
        before = (METER.steps, METER.memory)
        hashtbl.set_(table, "k5", 0)      # in place
        hashtbl.set_(table, "new", 0)     # in place, appended
        seen.append((before[0] - METER.steps, before[1] - METER.memory))

    run_boundary(measured, Limits(max_steps=10**9, max_memory=10**9))
    # each set scans 100 entries (1 step) and charges a new array of 100 + 1 slots
    assert seen == [(2, 2 * ((56 + 8 * 101 + 7) // 8))]
