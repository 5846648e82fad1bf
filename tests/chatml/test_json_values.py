"""JSON text / host data <-> ChatML ``json`` values (language spec 6.2, stdlib spec 5.4)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatml import json_values
from chatml.json_text import JsonObject, JsonSyntaxError, JsonValueError
from chatml.json_values import JSON_SHAPE, JsonShapeError
from chatml.stdlib.render import show
from chatml.values import Ref, Value, Variant

NULL = Variant("Null")


def number(x: float) -> Variant:
    return Variant("Number", (x,))


def test_text_to_value_keeps_order_and_duplicates() -> None:
    value = json_values.parse_text('{"b": [1, true, null, "s"], "a": {}, "b": -0.5}')
    assert show(value) == (
        "`Object([|{ key = b; value = `Array([|`Number(1.), `Bool(true), `Null, `String(s)|]) }, "
        "{ key = a; value = `Object([||]) }, { key = b; value = `Number(-0.5) }|])")


def test_parse_errors_pass_through() -> None:
    with pytest.raises(JsonSyntaxError):
        json_values.parse_text("[1,]")


def test_host_data_to_value() -> None:
    value = json_values.from_host({"n": 3, "xs": (1.5, None), "ok": False, "big": 10**20})
    assert show(value) == (
        "`Object([|{ key = n; value = `Number(3.) }, "
        "{ key = xs; value = `Array([|`Number(1.5), `Null|]) }, "
        "{ key = ok; value = `Bool(false) }, { key = big; value = `Number(1e+20) }|])")


@pytest.mark.parametrize(("data", "message"), [
    ({"a": [1, {2}]}, "a Python set has no JSON form (at $.a[1])"),
    ({"a": {1: 2}}, "object keys must be strings, not int (at $.a)"),
    ([10**400], "the integer " + str(10**400) + " does not fit a double (at $[0])"),
    (object(), "a Python object has no JSON form"),
])
def test_host_data_without_a_json_form(data: Any, message: str) -> None:
    with pytest.raises(JsonShapeError) as caught:
        json_values.from_host(data)
    assert caught.value.message == message


def test_value_to_text_and_host() -> None:
    value = Variant("Object", ([
        {"key": "a", "value": number(1.0)},
        {"key": "b", "value": Variant("Array", ([Variant("Bool", (True,)), NULL],))},
        {"key": "a", "value": Variant("String", ("second",))},
        {"key": "extra", "value": NULL, "ignored": 1},
    ],))
    assert json_values.to_text(value) == '{"a":1.0,"b":[true,null],"a":"second","extra":null}'
    assert json_values.to_host(value) == {"a": 1.0, "b": [True, None], "extra": None}
    assert json_values.to_host(number(2.0)) == 2.0
    assert json_values.to_tree(value) == JsonObject([
        ("a", 1.0), ("b", [True, None]), ("a", "second"), ("extra", None)])


@pytest.mark.parametrize(("value", "message"), [
    (1, JSON_SHAPE),
    (Variant("Number", (1,)), JSON_SHAPE),
    (Variant("Bool", (1,)), JSON_SHAPE),
    (Variant("String", ("a", "b")), JSON_SHAPE),
    (Variant("Array", ((NULL,),)), JSON_SHAPE),
    (Variant("Array", ([NULL, Variant("Nil")],)), f"{JSON_SHAPE} (at $[1])"),
    (Variant("Object", ([{"key": "k", "value": Ref(1)}],)), f"{JSON_SHAPE} (at $.k)"),
    (Variant("Object", (["entry"],)), "JSON object entry: expected record (at $[0])"),
    (Variant("Object", ([{"value": NULL}],)), "JSON object entry: missing field 'key' (at $[0])"),
    (Variant("Object", ([{"key": "k"}],)), "JSON object entry: missing field 'value' (at $[0])"),
    (Variant("Object", ([{"key": None, "value": NULL}],)),
     "JSON object entry field 'key': expected string (at $[0])"),
])
def test_malformed_json_values(value: Value, message: str) -> None:
    with pytest.raises(JsonShapeError) as caught:
        json_values.to_text(value)
    assert caught.value.message == message


def test_non_finite_numbers_are_not_json() -> None:
    value = Variant("Array", ([number(1.0), number(math.nan)],))
    with pytest.raises(JsonValueError) as caught:
        json_values.to_text(value)
    assert caught.value.path == "$[1]"
    assert json_values.to_host(value)[1] != json_values.to_host(value)[1]  # Python keeps NaN


def test_deep_values_convert_without_recursion() -> None:
    value: Value = NULL
    for _ in range(20_000):
        value = Variant("Array", ([value],))
    text = json_values.to_text(value)
    assert text == "[" * 20_000 + "null" + "]" * 20_000
    assert show(json_values.parse_text(text)) == show(value)


finite = st.floats(allow_nan=False, allow_infinity=False)
text = st.text(st.characters(exclude_categories=("Cs",)), max_size=10)
host_json = st.recursive(
    st.none() | st.booleans() | finite | text | st.integers(-(2**53), 2**53),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(text, children, max_size=4),
    max_leaves=25,
)


def _as_floats(data: Any) -> Any:
    if isinstance(data, bool) or data is None or isinstance(data, str):
        return data
    if isinstance(data, int | float):
        return float(data)
    if isinstance(data, list):
        return [_as_floats(item) for item in data]
    return {key: _as_floats(item) for key, item in data.items()}


@settings(max_examples=200, deadline=None)
@given(host_json, st.booleans())
def test_host_data_round_trips_through_values_and_text(data: Any, pretty: bool) -> None:
    value = json_values.from_host(data)
    assert json_values.to_host(value) == _as_floats(data)
    assert show(json_values.parse_text(json_values.to_text(value, pretty=pretty))) == show(value)
