"""The VM's fast paths give exactly the results of the straightforward ones.

* **Range analysis** (:mod:`chatml.vm.translate`): programs full of int
  arithmetic near the 63-bit bounds, loop counters, comparisons and array
  indexes run identically -- same output, same runtime error at the same
  position -- with the analysis on and off (every result checked).
* **Step tickets** (:class:`chatml.limits.Meter`): whatever the batch size, a
  run that takes ``n`` steps succeeds with a budget of ``n`` and stops with
  ``step limit exceeded`` with ``n - 1``.
* **Hashtbl's cached index** (:mod:`chatml.stdlib.hashtbl`): under random
  ``set``/``get``/``mem``/``remove`` mixed with direct writes into the entry
  array (equal copies, modules, malformed entries, a new array), every answer
  is the first-match linear scan's, and the charges are the scan's.
* **``to_string`` of scalars**: the builtin's fast path returns ``show(v)``
  and charges what ``charge_string`` charges.
* **Intrinsics** (:mod:`chatml.vm.intrinsics`): programs calling
  ``to_string`` and the length builtins behave the same -- output, errors,
  memory-limit failures and their positions -- with the calls inlined and
  with the builtins called (a host's own builtins are never inlined).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatml.build import build_source
from chatml.calls import ChatMLRuntimeError
from chatml.limits import METER, Limits
from chatml.stdlib.checks import charge_string
from chatml.stdlib.render import show
from chatml.values import Module, Ref, Value, Variant
from chatml.vm.loader import LoadedProgram, load
from chatml.vm.run import call, run_boundary, run_program
from tests.chatml.stdlib_support import BUILTINS
from tests.chatml.typed_programs import programs
from tests.chatml.vm_support import core_values

MAX = 2**62 - 1
MIN = -(2**62)

# --------------------------------------------------------------------------- programs


_EDGES = [MAX, MAX - 1, MAX - 2, MIN, MIN + 1, MIN + 2, 2**31, -(2**31), 3037000499,
          2**61, -(2**61), 0, 1, 2, 3, -1, -2, 7, 10, 100, -100]


def _literal(value: int) -> str:
    """ChatML source for ``value`` (min_int has no literal of its own)."""
    if value == MIN:
        return f"({MIN + 1} - 1)"
    return f"({value})" if value < 0 else str(value)


ints = st.one_of(st.sampled_from(_EDGES), st.integers(-12, 12)).map(_literal)
small_steps = st.sampled_from([0, 1, 1, 1, 2, 3, -1, -2, 2**61]).map(_literal)
compare = st.sampled_from(["<", "<=", ">", ">="])
arith = st.sampled_from(["+", "-", "*", "/"])


@st.composite
def condition(draw: st.DrawFn, names: tuple[str, ...]) -> str:
    left = draw(st.sampled_from(names))
    right = draw(st.one_of(ints, st.sampled_from(names)))
    if draw(st.booleans()):
        left, right = right, left
    return f"{left} {draw(compare)} {right}"


@st.composite
def int_term(draw: st.DrawFn, names: tuple[str, ...], depth: int = 2) -> str:
    if depth == 0 or draw(st.integers(0, 2)) == 0:
        return draw(st.one_of(ints, st.sampled_from(names)))
    form = draw(st.sampled_from(["arith", "arith", "neg", "if"]))
    if form == "neg":
        return f"(-{draw(int_term(names, depth - 1))})"
    if form == "if":
        return (f"(if {draw(condition(names))} then {draw(int_term(names, depth - 1))} "
                f"else {draw(int_term(names, depth - 1))})")
    return f"({draw(int_term(names, depth - 1))} {draw(arith)} {draw(int_term(names, depth - 1))})"


@st.composite
def counter_loop(draw: st.DrawFn, index: int) -> str:
    """A function whose ``while`` loop counts ``i`` from a start towards a bound."""
    names = ("!i", "!acc", "n")
    update = draw(int_term(names))
    branch = (f"(if {draw(condition(names))} then acc := {draw(int_term(names))} "
              f"else acc := !acc - {draw(int_term(names, 1))})")
    store = f"a[!i - {draw(ints)}] <- !acc" if draw(st.booleans()) else "()"
    step = draw(small_steps)
    op = draw(st.sampled_from(["+", "+", "-"]))
    return f"""
let loop{index} n =
  let i = ref({draw(ints)}) in
  let acc = ref({draw(ints)}) in
  let a = Array.make(4, 0) in
  while {draw(condition(("!i", "n")))} do
    acc := {update};
    {branch};
    {store};
    i := !i {op} {step}
  done;
  !acc + a[0]
print(loop{index}({draw(ints)}))
"""


@st.composite
def recursion(draw: st.DrawFn, index: int) -> str:
    """A (tail-)recursive function that stops on a comparison."""
    names = ("n", "acc")
    step = draw(small_steps)
    call = (f"rec{index}(n - {step}, {draw(int_term(names))})" if draw(st.booleans())
            else f"n + rec{index}(n - {step}, acc)")
    return f"""
let rec rec{index} n acc =
  if {draw(condition(names))} then {draw(int_term(names))} else {call}
print(rec{index}({draw(ints)}, {draw(ints)}))
"""


@st.composite
def range_programs(draw: st.DrawFn) -> str:
    parts = [draw(st.one_of(counter_loop(index), recursion(index)))
             for index in range(draw(st.integers(1, 3)))]
    return "".join(parts)


def _outcome(program: LoadedProgram, limits: Limits) -> tuple[str, tuple[Any, ...] | None]:
    output: list[str] = []
    try:
        run_program(program, limits, sink=output.append)
    except ChatMLRuntimeError as error:
        d = error.diagnostic
        if d.code == "chatml.recursion_limit":
            # where CPython's stack runs out is not a ChatML position: a comparison on
            # the way can hit the limit before the call does
            return "".join(output), (d.code, d.message)
        return "".join(output), (d.code, d.message, d.line, d.column, d.end_line, d.end_column,
                                 d.hint)
    return "".join(output), None


def _both_ways(text: str) -> tuple[Any, Any]:
    built = build_source(text, "range.chatml", values=core_values())
    limits = Limits(max_steps=3_000, max_memory=10_000_000, max_depth=300)
    fast = _outcome(load(built.module, core_values(), built.source), limits)
    checked = _outcome(load(built.module, core_values(), built.source, range_analysis=False),
                       limits)
    return fast, checked


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(range_programs())
def test_range_analysis_changes_nothing_near_the_bounds(text: str) -> None:
    fast, checked = _both_ways(text)
    assert fast == checked


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_range_analysis_changes_nothing_in_random_programs(text: str) -> None:
    fast, checked = _both_ways(text)
    assert fast == checked


_PROBES = ["!i + 1", "!i + 2", "!i - 1", "!i - 2", "!i * 2", "!i / 2", "-(!i)", "a[!i]",
           "a[!i - 1]"]
_STARTS = ["s", "0", "(-1)", str(MAX - 1), f"({MIN + 1})"]
_GRID_VALUES = [MAX, MAX - 1, MIN, MIN + 1, 0, 1, -1]


def _grid_program(comparison: str, swapped: bool) -> tuple[str, list[tuple[str, bool]]]:
    """Functions ``s n -> int`` probing every expression of ``_PROBES`` under the
    condition ``!i <cmp> n`` (or ``n <cmp> !i``): in a loop (from each start, with
    each step), in both branches of an ``if``, and after an ``if`` and a loop.
    Returns the source and ``(name, uses_s)`` for each function."""
    condition = f"n {comparison} !i" if swapped else f"!i {comparison} n"
    lines: list[str] = []
    functions: list[tuple[str, bool]] = []
    for p, probe in enumerate(_PROBES):
        for k, start in enumerate(_STARTS):
            for step in ("+ 1", "- 1", "+ 2", "- 2"):
                name = f"loop_{p}_{k}_{len(functions)}"
                lines.append(f"let {name} s n = let i = ref({start}) in let acc = ref(0) in "
                             f"let a = Array.make(3, 0) in "
                             f"while {condition} do acc := {probe}; i := !i {step} done; !acc")
                functions.append((name, start == "s"))
        prelude = "let i = ref(s) in let acc = ref(0) in let a = Array.make(3, 0) in"
        towards = "+" if (comparison in ("<", "<=")) != swapped else "-"
        for name, body in [
            (f"branch_{p}", f"if {condition} then {probe} else {probe}"),
            # what a branch or a loop learnt must not outlive it
            (f"after_if_{p}", f"(if {condition} then acc := 1 else acc := 2); {probe}"),
            (f"after_loop_{p}", f"while {condition} do i := !i {towards} 1 done; {probe}"),
        ]:
            lines.append(f"let {name} s n = {prelude} {body}")
            functions.append((name, True))
    return "\n".join(lines) + "\n", functions


@pytest.mark.parametrize("swapped", [False, True])
@pytest.mark.parametrize("comparison", ["<", "<=", ">", ">="])
def test_range_analysis_on_a_grid_of_conditions_and_counters(comparison: str,
                                                             swapped: bool) -> None:
    text, functions = _grid_program(comparison, swapped)
    built = build_source(text, "grid.chatml", values=core_values())
    programs = [load(built.module, core_values(), built.source, range_analysis=analysed)
                for analysed in (True, False)]
    for program in programs:
        run_program(program)  # defines the functions
    fast, checked = (program.top_level() for program in programs)
    assert len(fast) == len(functions)
    limits = Limits(max_steps=40)

    def outcome(function: Value, s: int, n: int) -> tuple[Any, ...]:
        try:
            return ("value", call(function, [s, n], limits))
        except ChatMLRuntimeError as error:
            d = error.diagnostic
            return (d.code, d.line, d.column, d.end_column)

    for name, uses_s in functions:
        for s in _GRID_VALUES if uses_s else [0]:
            for n in _GRID_VALUES:
                assert outcome(fast[name], s, n) == outcome(checked[name], s, n), (name, s, n)


def _source_of(text: str, range_analysis: bool = True) -> str:
    built = build_source(text, "shape.chatml", values=core_values())
    return load(built.module, core_values(), range_analysis=range_analysis).python_source


def test_range_analysis_leaves_out_the_checks_it_can_prove() -> None:
    counter = ("let f n = let i = ref(0) in let s = ref(0) in\n"
               "  while !i < n do s := !s + !i / 2; i := !i + 1 done; !s\nprint(f(10))")
    fast, checked = _source_of(counter), _source_of(counter, range_analysis=False)
    # `i + 1` under `i < n` and `i / 2` with i >= 0 need nothing; `s + i / 2` only the top
    assert fast.count("_ovf()") == 1 and "-4611686018427387904" not in fast
    assert checked.count("_ovf()") == 3
    # a decreasing counter keeps its upper bound; the else branch of `n < 2` knows n >= 2
    fib = "let rec fib n = if n < 2 then n else fib(n - 1) + fib(n - 2)\nprint(fib(5))"
    assert _source_of(fib).count("_ovf()") == 1


def test_facts_end_with_their_branch_and_with_assignments() -> None:
    # `x < 10` is known only in the then-branch; after `x := !x + m` nothing is
    text = ("let f x0 m = let x = ref(x0) in\n"
            "  (if !x < 10 then x := !x + 1 else x := !x - 1);\n"
            "  x := !x + m; !x + 1\n"
            "print(f(4611686018427387903, 1))")
    fast, checked = _both_ways(text)
    assert fast == checked
    assert fast[1] is not None and fast[1][0] == "chatml.integer_overflow"


# --------------------------------------------------------------------------- steps


@contextmanager
def batch_size(size: int) -> Iterator[None]:
    saved = METER.batch
    METER.batch = (None,) * (size - 1)
    try:
        yield
    finally:
        METER.batch = saved


def _steps_used(program: LoadedProgram) -> tuple[int, bool]:
    """(steps the top level takes, whether it ran to the end) with a large budget."""
    budget = 10**9
    remaining: list[int] = []

    def thunk() -> None:
        try:
            program.main()
        finally:
            remaining.append(METER.steps)

    try:
        run_boundary(thunk, Limits(max_steps=budget), sink=lambda text: None)
    except ChatMLRuntimeError:
        return budget - remaining[0], False
    return budget - remaining[0], True


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.sampled_from([1, 2, 5, 64, 1024]))
def test_step_budget_is_exact_whatever_the_batch(text: str, size: int) -> None:
    built = build_source(text, "steps.chatml", values=core_values())
    program = load(built.module, core_values())
    with batch_size(size):
        used, finished = _steps_used(program)
        if not finished or used == 0:
            return
        run_program(program, Limits(max_steps=used), sink=lambda text: None)
        with pytest.raises(ChatMLRuntimeError) as caught:
            run_program(program, Limits(max_steps=used - 1), sink=lambda text: None)
    assert caught.value.diagnostic.code == "chatml.step_limit"


def test_builtin_step_charges_use_the_tickets_too() -> None:
    # compiled code leaves tickets behind; a builtin's large charge must count them, exactly
    seen: list[tuple[int, int]] = []

    def thunk() -> None:
        METER.refill()  # 1 step now, 99 tickets, 150 left in the reserve
        seen.append((METER.steps, len(METER.tickets)))
        METER.take(249)
        seen.append((METER.steps, len(METER.tickets)))
        METER.take(1)

    with batch_size(100), pytest.raises(ChatMLRuntimeError) as caught:
        run_boundary(thunk, Limits(max_steps=250))
    assert seen == [(249, 99), (0, 0)]
    assert caught.value.diagnostic.code == "chatml.step_limit"


# --------------------------------------------------------------------------- Hashtbl

KEYS = ["a", "b", "c", "", "a\u00e9"]


def _first(entries: list[Value], key: str) -> int:
    """The specification's lookup: the first record with this key and a value."""
    for position, entry in enumerate(entries):
        if type(entry) is dict and "value" in entry and entry.get("key") == key:
            return position
    return -1


values_st = st.one_of(st.integers(-3, 3), st.text(max_size=2))
entry_st = st.builds(lambda k, v: {"key": k, "value": v}, st.sampled_from(KEYS), values_st)
odd_entry_st = st.one_of(
    st.builds(lambda k: {"key": k}, st.sampled_from(KEYS)),                  # no value
    st.builds(lambda v: {"key": 1, "value": v}, values_st),                  # non-string key
    st.builds(lambda k, v: Module("M", {"key": k, "value": v}), st.sampled_from(KEYS), values_st),
    st.just(Variant("None")),
    st.just([1]),
)
operation = st.one_of(
    st.tuples(st.just("set"), st.sampled_from(KEYS), values_st),
    st.tuples(st.just("get"), st.sampled_from(KEYS)),
    st.tuples(st.just("mem"), st.sampled_from(KEYS)),
    st.tuples(st.just("remove"), st.sampled_from(KEYS)),
    st.tuples(st.just("put"), st.integers(0, 30), entry_st),         # (!t)[i] <- entry
    st.tuples(st.just("copy"), st.integers(0, 30)),                  # an equal, new record
    st.tuples(st.just("module"), st.integers(0, 30)),                # an equal module
    st.tuples(st.just("odd"), st.integers(0, 30), odd_entry_st),
    st.tuples(st.just("assign"), st.lists(st.one_of(entry_st, odd_entry_st), max_size=6)),
)


def _call(name: str, *args: Value) -> Value:
    return BUILTINS[f"Hashtbl.{name}"](*args)


def _charges(thunk: Callable[[], Value]) -> tuple[Value, int, int]:
    """(result, steps charged, memory charged) of ``thunk`` inside a run."""
    seen: list[tuple[int, int]] = []

    def measured() -> Value:
        before = (METER.steps, METER.memory)
        result = thunk()
        seen.append((before[0] - METER.steps, before[1] - METER.memory))
        return result

    result = run_boundary(measured, Limits(max_steps=10**9, max_memory=10**9))
    return result, seen[0][0], seen[0][1]


@settings(max_examples=300, deadline=None)
@given(st.lists(entry_st, max_size=8), st.lists(operation, max_size=40), st.integers(0, 70))
def test_hashtbl_index_answers_like_the_linear_scan(initial: list[Value],
                                                    operations: list[tuple[Any, ...]],
                                                    padding: int) -> None:
    # padding makes some tables long enough for the scan to charge steps
    table = Ref([{"key": f"pad{i}", "value": i} for i in range(padding)] + initial)
    for op, *args in operations:
        entries = table.value
        scan_steps = len(entries) // 64
        if op in ("get", "mem"):
            (key,) = args
            position = _first(entries, key)
            result, steps, memory = _charges(lambda op=op, key=key: _call(op, table, key))
            if op == "mem":
                assert result is (position >= 0)
            elif position < 0:
                assert result.tag == "None"
            else:
                assert result.tag == "Some" and result.args[0] is entries[position]["value"]
            assert (steps, memory) == (scan_steps, 0)
        elif op in ("set", "remove"):
            key = args[0]
            before = list(entries)
            position = _first(entries, key)
            if op == "set":
                _, steps, memory = _charges(lambda key=key, v=args[1]: _call("set", table, key, v))
                expected = list(before)
                if position < 0:
                    expected.append({"key": key, "value": args[1]})
                else:
                    expected[position] = {"key": key, "value": args[1]}
                assert memory == (56 + 8 * (len(before) + 1) + 7) // 8
            else:
                _, steps, memory = _charges(lambda key=key: _call("remove", table, key))
                expected = [e for e in before
                            if not (type(e) is dict and "value" in e and e.get("key") == key)]
                assert memory == (56 + 8 * len(before) + 7) // 8
            assert steps == scan_steps
            assert table.value is not entries and entries == before  # a new array
            assert table.value == expected
        elif op == "assign":
            table.value = list(args[0])
        elif entries:
            index = args[0] % len(entries)
            old = entries[index]
            if op in ("put", "odd"):
                entries[index] = args[1]
            elif type(old) is dict:
                entries[index] = dict(old) if op == "copy" else Module("M", old)


def test_hashtbl_sees_writes_into_its_array() -> None:
    table = _call("create")
    _call("set", table, "a", 1)
    _call("set", table, "b", 2)
    assert _call("get", table, "b").args == (2,)
    table.value[0] = {"key": "b", "value": 0}  # an earlier entry with the same key wins
    assert _call("get", table, "b").args == (0,)
    table.value[0] = Module("M", {"key": "b", "value": 0})  # equal, but not a record
    assert _call("get", table, "b").args == (2,)
    assert _call("mem", table, "a") is False


# --------------------------------------------------------------------------- to_string

scalars = st.one_of(st.integers(MIN, MAX), st.sampled_from(_EDGES), st.floats(), st.booleans(),
                    st.text(max_size=5))


@settings(max_examples=300, deadline=None)
@given(scalars)
def test_to_string_of_scalars_is_show_and_charges_like_charge_string(value: Value) -> None:
    result, steps, memory = _charges(lambda: BUILTINS["to_string"](value))
    assert result == show(value)
    if type(value) is str:
        expected = (0, 0)
    else:
        _, *reference = _charges(lambda: charge_string(show(value)))
        expected = tuple(reference)  # type: ignore[assignment]
    assert (steps, memory) == expected


# --------------------------------------------------------------------------- intrinsics


def _called_builtins() -> dict[str, Value]:
    """The core values with every inlinable builtin replaced by a wrapper (so not inlined)."""
    from chatml.values import builtin
    from chatml.vm.intrinsics import INTRINSICS

    def wrap(name: str, implementation: Callable[[Value], Value]) -> Callable[[Value], Value]:
        @builtin(name)
        def wrapper(value: Value) -> Value:
            return implementation(value)

        return wrapper

    values = dict(core_values())
    for name in INTRINSICS:
        module_name, _, export = name.rpartition(".")
        if module_name:
            module = values[module_name]
            values[module_name] = Module(module.name, {**module,
                                                       export: wrap(name, module[export])})
        else:
            values[name] = wrap(name, values[name])
    return values


shown = st.one_of(ints, st.sampled_from(['"abc"', '""', '"\u00e9t\u00e9"', "1.5", "true", "()",
                                         "[1, 2]", "{ a = 1 }", "`A(3)"]))


@st.composite
def string_programs(draw: st.DrawFn) -> str:
    lines = ["let total = ref(0)", "let xs = [1, 2, 3]"]
    for _ in range(draw(st.integers(1, 6))):
        value = draw(shown)
        text = f"to_string({value})"
        lines.append(f"print({text} ++ \"|\" ++ to_string({draw(ints)} * 2))")
        lines.append(f"total := !total + String.length({text}) + string_length({text}) "
                     f"+ length(xs) + Array.length(xs)")
    lines.append("print(!total)")
    return "\n".join(lines) + "\n"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(string_programs(), st.integers(300, 3000))
def test_intrinsics_behave_like_the_builtin_calls(text: str, memory: int) -> None:
    built = build_source(text, "intrinsics.chatml", values=core_values())
    inlined = load(built.module, core_values(), built.source)
    called = load(built.module, _called_builtins(), built.source)
    assert "_str(" in inlined.python_source and "_str(" not in called.python_source
    for limits in (Limits(), Limits(max_memory=memory)):
        assert _outcome(inlined, limits) == _outcome(called, limits)
