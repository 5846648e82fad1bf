"""Data-only snapshots (language spec 6.1, moderator-runtime spec 6.2): encoding, rejection, decoding."""

from __future__ import annotations

import json
import math
import struct
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatml import snapshot
from chatml.snapshot import SnapshotError
from chatml.stdlib.equality import values_equal
from chatml.stdlib.render import show
from chatml.values import (
    MAX_INT,
    MIN_INT,
    Bind,
    Module,
    Perform,
    Pure,
    Ref,
    Value,
    Variant,
    builtin,
)
from tests.chatml.stdlib_support import closures


def test_the_encoding_of_each_kind() -> None:
    value = {"count": 3, "tags": ["a"], "last": Variant("Some", (1.5,)), "ok": True,
             "none": None, "weird": [math.nan, math.inf, -math.inf, -0.0]}
    assert snapshot.encode(value) == {"record": [
        ["count", {"int": 3}],
        ["last", {"variant": {"tag": "Some", "args": [{"float": 1.5}]}}],
        ["none", {"unit": None}],
        ["ok", {"bool": True}],
        ["tags", {"array": [{"string": "a"}]}],
        ["weird", {"array": [{"float": "nan"}, {"float": "inf"}, {"float": "-inf"},
                             {"float": -0.0}]}],
    ]}


def test_the_versioned_text_form() -> None:
    text = snapshot.dumps(Variant("Done"))
    assert json.loads(text) == {"format": "chatml-snapshot", "version": 1,
                                "value": {"variant": {"tag": "Done", "args": []}}}
    assert show(snapshot.loads(text)) == "`Done"
    assert snapshot.loads(snapshot.dumps(MAX_INT)) == MAX_INT
    assert snapshot.loads(snapshot.dumps(MIN_INT)) == MIN_INT


TOP = closures("let f x = x\nlet r = ref(1)\nmodule M = struct let a = 1 end")


@builtin("Test.builtin")
def _a_builtin() -> None:
    return None


REJECTED: list[tuple[Value, str]] = [
    ({"state": {"tasks": [1, TOP["f"]]}},
     "root.state.tasks[1]: closures are not serializable in ChatML snapshots"),
    (Ref(1), "root: refs are not serializable in ChatML snapshots"),
    ([1, Variant("Some", (TOP["r"],))], "root[1]<Some>[0]: refs are not serializable in ChatML snapshots"),
    ({"m": TOP["M"]}, "root.m: modules are not serializable in ChatML snapshots"),
    (Module("N"), "root: modules are not serializable in ChatML snapshots"),
    ([_a_builtin], "root[0]: builtins are not serializable in ChatML snapshots"),
    (Variant("Pair", (1, Pure(1))), "root<Pair>[1]: tasks are not serializable in ChatML snapshots"),
    ({"a": Bind(Perform("Log.info", ()), TOP["f"])},
     "root.a: tasks are not serializable in ChatML snapshots"),
    # the first offender in encoding order: records in ascending label order
    ({"z": Ref(0), "a": [TOP["f"]]}, "root.a[0]: closures are not serializable in ChatML snapshots"),
    ({"n": 2**62}, "root.n: integer 4611686018427387904 is outside the 63-bit range of ChatML ints"),
    ([(1, 2)], "root[0]: values of the Python type tuple (not ChatML values) are not "
               "serializable in ChatML snapshots"),
]


@pytest.mark.parametrize(("value", "message"), REJECTED, ids=[m.split(":")[0] for _, m in REJECTED])
def test_runtime_only_values_are_rejected_with_their_path(value: Value, message: str) -> None:
    with pytest.raises(SnapshotError) as caught:
        snapshot.encode(value)
    assert caught.value.message == message
    assert str(caught.value) == message


def test_a_hashtbl_is_not_serializable() -> None:
    table = closures('let t = Hashtbl.create()\nHashtbl.set(t, "a", 1)')["t"]
    with pytest.raises(SnapshotError, match="refs are not serializable in ChatML snapshots$"):
        snapshot.encode({"state": table})


def test_an_array_that_contains_itself_is_rejected() -> None:
    array: list[Value] = [1]
    array.append(Variant("Node", (array,)))
    with pytest.raises(SnapshotError) as caught:
        snapshot.encode({"graph": array})
    assert caught.value.path == "root.graph[1]<Node>[0]"
    shared = [1]
    assert snapshot.decode(snapshot.encode([shared, shared])) == [[1], [1]]  # sharing is fine


BAD_NODES: list[tuple[Any, str]] = [
    ({"record": [["a", {"int": 1}], ["a", {"int": 2}]]},
     'root: duplicate record field "a" in ChatML snapshot'),
    ({"record": [["q\"\n", {"int": 1}], ["q\"\n", {"int": 2}]]},
     'root: duplicate record field "q\\"\\n" in ChatML snapshot'),
    ({"array": [{"int": 1}, {"variant": {"tag": "A", "args": [{"int": 1.5}]}}]},
     "root[1]<A>[0]: an int node holds an integer in the 63-bit range, not 1.5"),
    ({"int": 2**62}, "root: an int node holds an integer in the 63-bit range, not 4611686018427387904"),
    ({"int": True}, "root: an int node holds an integer in the 63-bit range, not true"),
    ({"float": "NaN"}, 'root: a float node holds a JSON number or "nan", "inf", "-inf", not "NaN"'),
    ({"bool": 1}, "root: a bool node holds true or false, not 1"),
    ({"string": None}, "root: a string node holds a JSON string, not null"),
    ({"unit": 0}, "root: a unit node holds null, not 0"),
    ({"array": {}}, "root: an array node holds a JSON array of nodes, not {}"),
    ({"record": [["a"]]}, 'root: a record node holds a JSON array of ["label", node] pairs, not ["a"]'),
    ({"record": {"a": 1}}, 'root: a record node holds a JSON array of ["label", node] pairs, not {"a":1}'),
    ({"variant": {"tag": "A"}}, 'root: a variant node holds {"tag": string, "args": [node, ...]}, '
                                'not {"tag":"A"}'),
    ({"record": [["x", {"tuple": []}]]}, "root.x: expected a snapshot node: an object with exactly "
     "one of the keys int, float, bool, string, unit, array, record, variant; found the key \"tuple\""),
    ({"int": 1, "float": 1.0}, "root: expected a snapshot node: an object with exactly one of the "
     "keys int, float, bool, string, unit, array, record, variant"),
    ([1], "root: expected a snapshot node: an object with exactly one of the keys int, float, "
     "bool, string, unit, array, record, variant"),
]


@pytest.mark.parametrize(("node", "message"), BAD_NODES, ids=[m.split(":")[0] + str(i)
                                                             for i, (_, m) in enumerate(BAD_NODES)])
def test_decoding_checks_everything(node: Any, message: str) -> None:
    with pytest.raises(SnapshotError) as caught:
        snapshot.decode(node)
    assert caught.value.message == message


@pytest.mark.parametrize(("text", "message"), [
    ("{", "snapshot: not valid JSON: line 1, column 2: expected a string key in double quotes, "
          "found the end of the input"),
    ('{"format": "other", "version": 1}', 'snapshot: expected an object with "format": '
                                          '"chatml-snapshot"'),
    ('{"format": "chatml-snapshot", "version": 2, "value": null}',
     "snapshot: unsupported ChatML snapshot version 2 (this build reads version 1)"),
    ('{"format": "chatml-snapshot", "version": 1}', 'snapshot: missing "value"'),
    ('{"format": "chatml-snapshot", "version": 1, "value": {"int": 1, "int": 2}}',
     'snapshot: not valid JSON: line 1, column 65: duplicate key "int" in an object'),
])
def test_loading_bad_text(text: str, message: str) -> None:
    with pytest.raises(SnapshotError) as caught:
        snapshot.loads(text)
    assert caught.value.message == message


def test_floats_given_as_json_integers_are_accepted() -> None:
    assert snapshot.decode({"float": 3}) == 3.0 and type(snapshot.decode({"float": 3})) is float


def test_deep_values_round_trip_without_recursion() -> None:
    value: Value = Variant("Nil")
    for i in range(3_000):  # 9,000 levels of JSON: past the C decoder's fast path
        value = Variant("Cons", ({"head": i, "tail": [value]},))
    back = snapshot.loads(snapshot.dumps(value))
    assert show(back) == show(value)


# --------------------------------------------------------------------------- round trip property

labels = st.text(st.characters(exclude_categories=("Cs",)), min_size=0, max_size=6)
tags = st.from_regex(r"[A-Z][A-Za-z0-9_]{0,5}", fullmatch=True)
data_values = st.recursive(
    st.integers(MIN_INT, MAX_INT) | st.floats() | st.booleans() | st.none()
    | st.text(st.characters(exclude_categories=("Cs",)), max_size=8),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(labels, children, max_size=4)
    | st.builds(lambda tag, args: Variant(tag, tuple(args)), tags, st.lists(children, max_size=3)),
    max_leaves=30,
)


def identical(left: Value, right: Value) -> bool:
    """Same shape and the very same floats (NaN equals NaN, 0.0 differs from -0.0)."""
    if type(left) is not type(right):
        return False
    if type(left) is float:
        return (math.isnan(left) and math.isnan(right)) or (
            struct.pack("<d", left) == struct.pack("<d", right))
    if type(left) is list:
        return len(left) == len(right) and all(map(identical, left, right))
    if type(left) is dict:
        return left.keys() == right.keys() and all(identical(left[k], right[k]) for k in left)
    if type(left) is Variant:
        return (left.tag == right.tag and len(left.args) == len(right.args)
                and all(map(identical, left.args, right.args)))
    return bool(left == right)


def _comparable_with_equality(value: Value) -> bool:
    """No NaN (unequal to itself) and no array (compared by identity) inside (spec 5.6)."""
    if type(value) is float:
        return not math.isnan(value)
    if type(value) is list:
        return False
    children = (value.values() if type(value) is dict
                else value.args if type(value) is Variant else ())
    return all(_comparable_with_equality(child) for child in children)


@settings(max_examples=300, deadline=None)
@given(data_values)
def test_every_data_value_round_trips_exactly(value: Value) -> None:
    back = snapshot.loads(snapshot.dumps(value))
    assert identical(back, value)
    assert show(back) == show(value)
    if _comparable_with_equality(value):
        assert values_equal(back, value)
    assert identical(snapshot.decode(json.loads(json.dumps(snapshot.encode(value)))), value)


runtime_only = st.sampled_from([Ref(1), TOP["f"], _a_builtin, Module("M"), Pure(1)])
kind_names = {Ref: "refs", Module: "modules", Pure: "tasks"}


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_a_runtime_only_value_anywhere_is_rejected_with_its_path(data: st.DataObject) -> None:
    offender = data.draw(runtime_only)
    # wrap the offender in random containers, remembering the path the encoder must report
    value: Value = offender
    path = ""
    for _ in range(data.draw(st.integers(0, 4))):
        kind = data.draw(st.sampled_from(["array", "record", "variant"]))
        if kind == "array":
            before = data.draw(st.lists(st.integers(0, 9), max_size=2))
            value, path = before + [value, 1], f"[{len(before)}]" + path
        elif kind == "record":
            label = data.draw(st.from_regex(r"[a-m][a-z]{0,3}", fullmatch=True))
            value, path = {label: value, "zz": 0}, f".{label}" + path
        else:
            tag = data.draw(tags)
            value, path = Variant(tag, (0, value)), f"<{tag}>[1]" + path
    with pytest.raises(SnapshotError) as caught:
        snapshot.encode(value)
    kind = kind_names.get(type(offender)) or (
        "builtins" if offender is _a_builtin else "closures")
    assert caught.value.message == f"root{path}: {kind} are not serializable in ChatML snapshots"
