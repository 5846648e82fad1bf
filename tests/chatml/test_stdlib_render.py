"""``show``/``fmt_float`` (language spec 5.10, stdlib spec 1.6-1.7) and runtime equality (5.6)."""

from __future__ import annotations

import math

import pytest

from chatml.stdlib.equality import values_equal
from chatml.stdlib.render import CYCLE_MESSAGE, RenderTooLarge, fmt_float, show
from chatml.values import (
    Bind,
    Catch,
    ChatMLFailure,
    Fail,
    Map,
    Module,
    Perform,
    Pure,
    Ref,
    Spawn,
    Value,
    Variant,
    builtin,
)

FLOATS = [
    (1.0, "1."), (-0.0, "-0."), (100.0, "100."), (2.5, "2.5"), (0.1, "0.1"),
    (1.0 / 3.0, "0.33333333333333331"), (1e20, "1e+20"), (1e-5, "1e-05"), (1e15, "1e+15"),
    (123456789012345.0, "123456789012345."), (math.nan, "nan"), (math.inf, "inf"),
    (-math.inf, "-inf"), (3.75, "3.75"), (-1.25, "-1.25"), (0.1 + 0.2, "0.30000000000000004"),
    (5e-324, "4.94065645841247e-324"), (1.7976931348623157e308, "1.7976931348623157e+308"),
]


@pytest.mark.parametrize(("value", "text"), FLOATS, ids=[t for _, t in FLOATS])
def test_fmt_float_matches_the_reference(value: float, text: str) -> None:
    assert fmt_float(value) == text


def test_fmt_float_reads_back_exactly_for_finite_values() -> None:
    for value, _ in FLOATS:
        if math.isfinite(value):
            assert float(fmt_float(value).rstrip(".")) == value


@builtin("Test.b")
def _a_builtin() -> None:
    return None


def _a_closure() -> None:
    return None


RENDERINGS: list[tuple[Value, str]] = [
    (0, "0"), (-7, "-7"), (2**62 - 1, "4611686018427387903"), (True, "true"), (False, "false"),
    ("raw \"text\"\n", "raw \"text\"\n"), (None, "()"),
    ([], "[||]"), ([1, "a", [2]], "[|1, a, [|2|]|]"),
    ({}, "{  }"), ({"b": 2, "a": 1, "c": {"z": None}}, "{ a = 1; b = 2; c = { z = () } }"),
    ({"é": 1, "z": 2, "B": 3}, "{ B = 3; z = 2; é = 1 }"),
    (Variant("None"), "`None"), (Variant("Some", (1,)), "`Some(1)"),
    (Variant("Pair", ("a", 1.0)), "`Pair(a, 1.)"), (Variant("Unit", (None,)), "`Unit(())"),
    (Ref([1]), "ref([|1|])"), (Ref(Ref("x")), "ref(ref(x))"),
    (_a_closure, "<closure>"), (_a_builtin, "<builtin>"), (Module("M", {"x": 1}), "<module>"),
    (Pure(1), "pure(1)"), (Fail("no luck"), "fail(no luck)"),
    (Bind(Pure(1), _a_closure), "bind(pure(1), <closure>)"),
    (Map(Bind(Pure(None), _a_builtin), _a_closure), "map(bind(pure(()), <builtin>), <closure>)"),
    (Catch(Fail("x"), _a_closure), "catch(fail(x), <closure>)"),
    (Perform("Log.info", ("x",)), "perform({operation = Log.info, args = [x]})"),
    (Perform("Tool.approve", ()), "perform({operation = Tool.approve, args = []})"),
    (Spawn("Tool.spawn", ("t", Variant("Null"))), "spawn({operation = Tool.spawn, args = [t, `Null]})"),
    (Pure({"n": [Variant("A", (Ref(0),))]}), "pure({ n = [|`A(ref(0))|] })"),
    ({"name": "Ann", "tags": ["a", "b"], "st": Variant("Ok", (1.0,))},
     "{ name = Ann; st = `Ok(1.); tags = [|a, b|] }"),
]


@pytest.mark.parametrize(("value", "text"), RENDERINGS, ids=[t for _, t in RENDERINGS])
def test_show(value: Value, text: str) -> None:
    assert show(value) == text


def test_show_of_a_shared_array_is_not_a_cycle() -> None:
    shared = [1]
    assert show([shared, shared, {"a": shared}]) == "[|[|1|], [|1|], { a = [|1|] }|]"


def test_show_reports_a_value_that_contains_itself() -> None:
    cell = Ref(None)
    cell.value = [cell]
    with pytest.raises(ChatMLFailure, match="contains itself"):
        show(cell)
    array: list[Value] = []
    array.append(Variant("Node", (array,)))
    with pytest.raises(ChatMLFailure) as caught:
        show({"root": array})
    assert caught.value.message == CYCLE_MESSAGE


def test_show_renders_very_deep_values_without_recursion() -> None:
    value: Value = Variant("Nil")
    for i in range(100_000):
        value = Variant("Cons", (i, value))
    text = show(value)
    assert text.startswith("`Cons(99999, `Cons(99998, ")
    assert text.endswith("`Cons(0, `Nil)" + ")" * 99_999)


def test_show_stops_at_max_chars() -> None:
    doubling: Value = ["x"]
    for _ in range(40):  # 2**40 leaves: far too big to render
        doubling = [doubling, doubling]
    with pytest.raises(RenderTooLarge) as caught:
        show(doubling, max_chars=100_000)
    assert 100_000 < caught.value.size < 1_000_000
    assert show([1, 2], max_chars=8) == "[|1, 2|]"
    with pytest.raises(RenderTooLarge):
        show([1, 2], max_chars=7)


# --------------------------------------------------------------------------- equality

EQUAL: list[tuple[Value, Value]] = [
    (1, 1), ("a", "a"), (None, None), (True, True), (0.0, -0.0),
    (Variant("Some", (1,)), Variant("Some", (1,))),
    ({"a": 1, "b": 2}, {"b": 2, "a": 1}),
    ({"a": Variant("X", ({"k": "v"},))}, {"a": Variant("X", ({"k": "v"},))}),
]
UNEQUAL: list[tuple[Value, Value]] = [
    (1, 2), (1, 1.0), (True, 1), (0, False), ("a", "b"), (None, 0), (math.nan, math.nan),
    (Variant("Some", (1,)), Variant("Some", (2,))), (Variant("A"), Variant("B")),
    (Variant("A", (1,)), Variant("A", (1, 1))), (Variant("A"), Variant("A", (None,))),
    ({"a": 1}, {"a": 1, "b": 2}), ({"a": 1}, {"b": 1}),
    ([1], [1]), (Ref(1), Ref(1)), (Module("M"), Module("M")), (Pure(1), Pure(1)),
    ({"a": [1]}, {"a": [1]}), ({"a": 1}, Module("M", {"a": 1})),
]


@pytest.mark.parametrize(("left", "right"), EQUAL)
def test_structurally_equal(left: Value, right: Value) -> None:
    assert values_equal(left, right) and values_equal(right, left)


@pytest.mark.parametrize(("left", "right"), UNEQUAL)
def test_unequal(left: Value, right: Value) -> None:
    assert not values_equal(left, right) and not values_equal(right, left)


def test_identity_for_mutable_and_opaque_values() -> None:
    array = [1]
    cell = Ref(1)
    for value in (array, cell, _a_closure, _a_builtin, Module("M"), Pure(1)):
        assert values_equal(value, value)
        assert values_equal({"x": value}, {"x": value})


def test_nan_inside_the_same_value_is_still_unequal() -> None:
    value = Variant("A", (math.nan,))
    assert not values_equal(value, value)


def test_equality_of_very_deep_values() -> None:
    left: Value = Variant("Nil")
    right: Value = Variant("Nil")
    for i in range(100_000):
        left = Variant("Cons", ({"head": i}, left))
        right = Variant("Cons", ({"head": i}, right))
    assert values_equal(left, right)
    assert not values_equal(left, Variant("Cons", ({"head": 99_999}, Variant("Nil"))))
