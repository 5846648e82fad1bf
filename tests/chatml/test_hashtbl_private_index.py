"""Hashtbl's O(1) index validation (issue 15, part 2) is equivalent to the plain path.

A table made by ``Hashtbl.create`` is a :class:`~chatml.values.TableRef`: its
index is trusted without looking at the array while only ``Hashtbl.*`` has
seen it. The same random operations -- Hashtbl calls, and what a script or
host can do to the array (read ``!t`` and keep it, write into it, assign a new
array) -- run on such a table and on a plain ``ref([])`` (validated against
the whole array on every call): every answer, every step and memory charge,
and the array contents must agree, and answers must be the linear scan's.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatml.limits import METER, Limits
from chatml.values import Module, Ref, TableRef, Value, Variant
from chatml.vm.run import run_boundary
from tests.chatml.stdlib_support import BUILTINS

KEYS = ["a", "b", "c", "", "d\u00e9"]
values_st = st.one_of(st.integers(-3, 3), st.text(max_size=2))
entry_st = st.builds(lambda k, v: {"key": k, "value": v}, st.sampled_from(KEYS), values_st)
odd_st = st.one_of(st.builds(lambda k: {"key": k}, st.sampled_from(KEYS)),
                   st.just(Variant("None")),
                   st.builds(lambda k: Module("M", {"key": k, "value": 0}), st.sampled_from(KEYS)))
operation = st.one_of(
    st.tuples(st.just("set"), st.sampled_from(KEYS), values_st),
    st.tuples(st.just("set"), st.sampled_from(KEYS), values_st),
    st.tuples(st.just("get"), st.sampled_from(KEYS)),
    st.tuples(st.just("get"), st.sampled_from(KEYS)),
    st.tuples(st.just("mem"), st.sampled_from(KEYS)),
    st.tuples(st.just("remove"), st.sampled_from(KEYS)),
    st.tuples(st.just("hold")),                                   # let a = !t (kept)
    st.tuples(st.just("release")),                                # a goes out of scope
    st.tuples(st.just("put"), st.integers(0, 30), st.one_of(entry_st, odd_st)),  # a[i] <- e
    st.tuples(st.just("peek_put"), st.integers(0, 30), entry_st),  # (!t)[i] <- e, not kept
    st.tuples(st.just("assign"), st.lists(st.one_of(entry_st, odd_st), max_size=5)),
)


def _first(entries: list[Value], key: str) -> int:
    for position, entry in enumerate(entries):
        if type(entry) is dict and "value" in entry and entry.get("key") == key:
            return position
    return -1


def _charged(thunk: Callable[[], Value]) -> tuple[Value, int, int]:
    seen: list[tuple[int, int]] = []

    def measured() -> Value:
        before = (METER.steps, METER.memory)
        result = thunk()
        seen.append((before[0] - METER.steps, before[1] - METER.memory))
        return result

    result = run_boundary(measured, Limits(max_steps=10**9, max_memory=10**9))
    return result, seen[0][0], seen[0][1]


def _answer(result: Value) -> Any:
    if type(result) is Variant:
        return (result.tag, result.args)
    return result


class _Side:
    """One table and what a script holds of it."""

    def __init__(self, table: Ref) -> None:
        self.table = table
        self.held: list[Value] | None = None

    def apply(self, op: str, args: list[Any]) -> Any:
        table = self.table
        if op in ("get", "mem", "remove"):
            return _charged(lambda: BUILTINS[f"Hashtbl.{op}"](table, args[0]))
        if op == "set":
            return _charged(lambda: BUILTINS["Hashtbl.set"](table, args[0], args[1]))
        if op == "hold":
            self.held = table.value
        elif op == "release":
            self.held = None
        elif op == "put" and self.held:
            self.held[args[0] % len(self.held)] = args[1]
        elif op == "peek_put":
            current = table.value
            if current:
                current[args[0] % len(current)] = args[1]
        elif op == "assign":
            table.value = list(args[0])
        return None


@settings(max_examples=400, deadline=None)
@given(st.lists(operation, max_size=50), st.integers(0, 140))
def test_the_private_index_answers_like_the_validated_one(operations: list[tuple[Any, ...]],
                                                          padding: int) -> None:
    private = _Side(BUILTINS["Hashtbl.create"]())
    assert type(private.table) is TableRef
    plain = _Side(Ref([]))
    for i in range(padding):  # long enough tables charge scan steps
        private.apply("set", [f"pad{i}", i])
        plain.apply("set", [f"pad{i}", i])
    for op, *args in operations:
        if op in ("get", "mem"):
            position = _first(plain.table.value, args[0])
        got = private.apply(op, args)
        expected = plain.apply(op, args)
        if got is not None:
            assert (_answer(got[0]), got[1:]) == (_answer(expected[0]), expected[1:]), op
        if op == "mem":
            assert got[0] is (position >= 0)
        elif op == "get" and position >= 0:
            assert got[0].args[0] == plain.table.value[position]["value"]
        assert private.table.value == plain.table.value


def test_a_private_table_is_validated_in_constant_time() -> None:
    table = BUILTINS["Hashtbl.create"]()
    for i in range(2000):
        BUILTINS["Hashtbl.set"](table, f"k{i}", i)
    assert table.pairs is not None and table.entries is None  # the dict form so far
    spilled = table.value  # a script's !t: the array form, validated while it is held
    assert table.pairs is None and table.exposed is True
    del spilled
    assert BUILTINS["Hashtbl.get"](table, "k1").args == (1,)  # one validation: private again
    assert table.exposed is False
    snapshot = table.lookup_cache.snapshot

    class Exploding(list):  # type: ignore[type-arg]
        def __eq__(self, other: object) -> bool:
            raise AssertionError("the array was compared")

    table.lookup_cache.snapshot = Exploding(snapshot)
    for i in range(0, 2000, 7):  # no comparison with the snapshot: O(1) validation
        assert BUILTINS["Hashtbl.get"](table, f"k{i}").args == (i,)
        BUILTINS["Hashtbl.set"](table, f"k{i}", -i)
    held = table.value  # a script reads !t: from now on the array is validated
    assert table.exposed is True
    table.lookup_cache.snapshot = list(table.lookup_cache.snapshot)
    held[0] = {"key": "k7", "value": "first"}
    assert BUILTINS["Hashtbl.get"](table, "k7").args == ("first",)
    del held  # nobody holds the array any more: trusted again after one validation
    assert BUILTINS["Hashtbl.get"](table, "k7").args == ("first",)
    assert table.exposed is False


# --------------------------------------------------------------------------- the dict form

dict_operation = st.one_of(
    st.tuples(st.just("set"), st.sampled_from(KEYS), values_st),
    st.tuples(st.just("get"), st.sampled_from(KEYS)),
    st.tuples(st.just("mem"), st.sampled_from(KEYS)),
    st.tuples(st.just("remove"), st.sampled_from(KEYS)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(dict_operation, max_size=60), st.integers(0, 140),
       st.lists(operation, max_size=8))
def test_the_dict_form_answers_like_the_entry_array(operations: list[tuple[Any, ...]],
                                                    padding: int,
                                                    afterwards: list[tuple[Any, ...]]) -> None:
    """A new table keeps its entries as a dict until something but ``Hashtbl.*`` reads
    the cell: every answer and charge is the plain entry array's, the array it spills
    is the one the plain ref holds, and everything after the spill still agrees."""
    table = BUILTINS["Hashtbl.create"]()
    private, plain = _Side(table), _Side(Ref([]))
    for i in range(padding):  # long enough tables charge scan steps
        private.apply("set", [f"pad{i}", i])
        plain.apply("set", [f"pad{i}", i])
    for op, *args in operations:
        got, expected = private.apply(op, args), plain.apply(op, args)
        assert (_answer(got[0]), got[1:]) == (_answer(expected[0]), expected[1:]), op
    assert table.pairs is not None and table.entries is None  # no spill so far
    assert table.value == plain.table.value  # the spilled array: same records, same order
    assert table.pairs is None
    for op, *args in afterwards:
        got, expected = private.apply(op, args), plain.apply(op, args)
        if got is not None:
            assert (_answer(got[0]), got[1:]) == (_answer(expected[0]), expected[1:]), op
        assert private.table.value == plain.table.value


def test_the_dict_form_fails_and_runs_out_like_the_array() -> None:
    """A bad key is the spec's shape error; a budget that runs out inside ``set`` leaves
    the table unchanged, at the same charge as the array form; a transactional run
    journals the array (the dict form spills) and rolls it back."""
    from chatml.calls import ChatMLRuntimeError

    def fresh(cell: Ref) -> Ref:
        for i in range(200):
            BUILTINS["Hashtbl.set"](cell, f"k{i}", i)
        return cell

    for name, args in (("get", [3]), ("set", [3, 1]), ("mem", [3]), ("remove", [3])):
        table = fresh(BUILTINS["Hashtbl.create"]())
        try:
            run_boundary(partial(BUILTINS[f"Hashtbl.{name}"], table, *args), Limits())
        except ChatMLRuntimeError as error:
            assert error.diagnostics[0].message == f"Hashtbl.{name}: expected a string argument"
        else:
            raise AssertionError(name)
    seen = set()
    # set on 200 entries charges 3 scan steps, then an array of 201 slots (208 words)
    for steps, memory in ((2, 8 * 208), (3, 8 * 207), (3, 8 * 208)):
        outcomes = []
        for cell in (BUILTINS["Hashtbl.create"](), Ref([])):
            fresh(cell)
            try:
                run_boundary(partial(BUILTINS["Hashtbl.set"], cell, "new", 1),
                             Limits(max_steps=steps, max_memory=memory))
                outcome = "ok"
            except ChatMLRuntimeError as error:
                outcome = error.diagnostics[0].code
            outcomes.append((outcome, list(cell.value)))
        assert outcomes[0] == outcomes[1]
        seen.add(outcomes[0][0])
    assert seen == {"ok", "chatml.step_limit", "chatml.memory_limit"}
    table = fresh(BUILTINS["Hashtbl.create"]())

    def update_then_fail() -> None:
        BUILTINS["Hashtbl.set"](table, "k1", "changed")
        BUILTINS["Hashtbl.remove"](table, "k2")
        raise ValueError("boom")

    with pytest.raises(ChatMLRuntimeError):
        run_boundary(update_then_fail, Limits(), transactional=True)
    assert table.value == [{"key": f"k{i}", "value": i} for i in range(200)]
