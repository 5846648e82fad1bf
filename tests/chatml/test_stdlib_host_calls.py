"""The builtins called from a host with values a well-typed script could never pass.

Typechecked programs cannot reach these errors (stdlib spec 1.3), so they are
exercised the way a host reaches them: through :func:`chatml.vm.run.call`
with hand-built arguments. Arity errors use the short export name, shape
errors the qualified name, callback problems the spec 1.4 messages.
"""

from __future__ import annotations

import pytest

from chatml.calls import ChatMLRuntimeError
from chatml.values import Perform, Pure, Ref, Value, Variant
from chatml.vm.run import call
from tests.chatml.stdlib_support import BUILTINS, closures

JSON_SHAPE = "expected Json.t (`Null/`Bool/`Number/`String/`Array/`Object)"
NULL = Variant("Null")


def failure(name: str, *args: Value) -> str:
    with pytest.raises(ChatMLRuntimeError) as caught:
        call(BUILTINS[name], args)
    return caught.value.message


def result(name: str, *args: Value) -> Value:
    return call(BUILTINS[name], args)


ARITY = [
    ("Option.none", (1,), "none: expected zero arguments"),
    ("Hashtbl.create", (1,), "create: expected zero arguments"),
    ("print", (), "print: expected exactly one argument"),
    ("to_string", (1, 2), "to_string: expected exactly one argument"),
    ("String.concat", ("a",), "concat: expected exactly two arguments"),
    ("String.slice", ("a", 0), "slice: expected exactly three arguments"),
    ("Array.fold", ([], 0), "fold: expected exactly three arguments"),
    ("Json.set_field", (NULL, "k"), "set_field: expected exactly three arguments"),
    ("swap_ref", (Ref(1),), "swap_ref: expected exactly two arguments"),
]


@pytest.mark.parametrize(("name", "args", "message"), ARITY, ids=[a[0] for a in ARITY])
def test_arity_errors_use_the_short_name(name: str, args: tuple[Value, ...], message: str) -> None:
    assert failure(name, *args) == message


SHAPES = [
    ("length", ("abc",), "length: expected an array argument"),
    ("string_length", ([1],), "string_length: expected a string argument"),
    ("string_is_empty", (1,), "string_is_empty: expected a string argument"),
    ("array_copy", ("x",), "array_copy: expected an array argument"),
    ("record_keys", ([1],), "record_keys: expected a record or module argument"),
    ("variant_tag", ({"a": 1},), "variant_tag: expected a variant argument"),
    ("swap_ref", ([1], 2), "swap_ref: expected a ref argument"),
    ("fail", (1,), "fail: expected a string argument"),
    ("hash_md5", (None,), "hash_md5: expected a string argument"),
    ("String.length", (1,), "String.length: expected a string argument"),
    ("String.is_empty", (1,), "String.is_empty: expected a string argument"),
    ("String.concat", ("a", 1), "String.concat: expected a string argument"),
    ("String.equal", (1, "a"), "String.equal: expected a string argument"),
    ("String.contains", ("a", None), "String.contains: expected a string argument"),
    ("String.starts_with", ("a", 1), "String.starts_with: expected a string argument"),
    ("String.ends_with", (1, "a"), "String.ends_with: expected a string argument"),
    ("String.trim", (1,), "String.trim: expected a string argument"),
    ("String.to_upper", (1,), "String.to_upper: expected a string argument"),
    ("String.to_lower", (1,), "String.to_lower: expected a string argument"),
    ("String.slice", (1, 0, 0), "String.slice: expected a string argument"),
    ("String.slice", ("a", "0", 0), "String.slice: expected an int argument"),
    ("String.slice", ("a", 0, True), "String.slice: expected an int argument"),
    ("String.find", ("a", 1), "String.find: expected a string argument"),
    ("String.split", ("a", 1), "String.split: expected a string argument"),
    ("String.replace_all", ("a", "b", 1), "String.replace_all: expected a string argument"),
    ("Array.length", ("x",), "Array.length: expected an array argument"),
    ("Array.copy", ("x",), "Array.copy: expected an array argument"),
    ("Array.get", ("x", 0), "Array.get: expected an array argument"),
    ("Array.get", ([1], 0.0), "Array.get: expected an int argument"),
    ("Array.set", ([1], "0", 1), "Array.set: expected an int argument"),
    ("Array.make", (1.5, 0), "Array.make: expected an int argument"),
    ("Array.append", ([1], (2,)), "Array.append: expected an array argument"),
    ("Array.sub", ([1], 0, None), "Array.sub: expected an int argument"),
    ("Array.reverse", (None,), "Array.reverse: expected an array argument"),
    ("Array.reverse_in_place", ({},), "Array.reverse_in_place: expected an array argument"),
    ("Array.swap", ([1], 0, "0"), "Array.swap: expected an int argument"),
    ("Array.fill", ("x", 0), "Array.fill: expected an array argument"),
    ("Array.init", ("3", None), "Array.init: expected an int argument"),
    ("Array.map", (None, None), "Array.map: expected an array argument"),
    ("Array.filter", ("x", None), "Array.filter: expected an array argument"),
    ("Array.fold", (1, 0, None), "Array.fold: expected an array argument"),
    ("Option.is_none", (1,), "Option.is_none: expected `None or `Some(_)"),
    ("Option.is_some", (Variant("Some", (1, 2)),), "Option.is_some: expected `None or `Some(_)"),
    ("Option.get_or", (Variant("None", (1,)), 0), "Option.get_or: expected `None or `Some(_)"),
    ("Hashtbl.set", ([], "k", 1), "Hashtbl.set: expected a ref argument"),
    ("Hashtbl.set", (Ref(1), "k", 1), "Hashtbl.set: expected an array argument"),
    ("Hashtbl.set", (Ref([]), 1, 1), "Hashtbl.set: expected a string argument"),
    ("Hashtbl.get", (None, "k"), "Hashtbl.get: expected a ref argument"),
    ("Hashtbl.mem", (Ref({}), "k"), "Hashtbl.mem: expected an array argument"),
    ("Hashtbl.remove", (Ref([]), None), "Hashtbl.remove: expected a string argument"),
    ("Task.bind", (1, print), "Task.bind: expected a Task argument"),
    ("Task.map", ("t", print), "Task.map: expected a Task argument"),
    ("Task.catch", (None, print), "Task.catch: expected a Task argument"),
    ("Task.fail", (1,), "Task.fail: expected a string argument"),
    ("Json.parse", (1,), "Json.parse: expected a string argument"),
    ("Json.parse_opt", (None,), "Json.parse_opt: expected a string argument"),
    ("Json.validate", ([],), "Json.validate: expected a string argument"),
    ("Json.stringify", (1,), f"Json.stringify: {JSON_SHAPE}"),
    ("Json.stringify", (Variant("Nul"),), f"Json.stringify: {JSON_SHAPE}"),
    ("Json.stringify", (Variant("Number", (1,)),), f"Json.stringify: {JSON_SHAPE}"),
    ("Json.stringify", (Variant("Null", (1,)),), f"Json.stringify: {JSON_SHAPE}"),
    ("Json.pretty", ({"a": 1},), f"Json.pretty: {JSON_SHAPE}"),
    ("Json.tag", (Variant("Some", (1,)),), f"Json.tag: {JSON_SHAPE}"),
    ("Json.as_bool", (True,), f"Json.as_bool: {JSON_SHAPE}"),
    ("Json.as_number", (1.0,), f"Json.as_number: {JSON_SHAPE}"),
    ("Json.as_string", ("s",), f"Json.as_string: {JSON_SHAPE}"),
    ("Json.as_array", ([],), f"Json.as_array: {JSON_SHAPE}"),
    ("Json.as_object", ([],), f"Json.as_object: {JSON_SHAPE}"),
    ("Json.object_keys", (None,), f"Json.object_keys: {JSON_SHAPE}"),
    ("Json.get_field", (NULL, 1), "Json.get_field: expected a string argument"),
    ("Json.get_field", (1, "k"), f"Json.get_field: {JSON_SHAPE}"),
    ("Json.get_path", (NULL, "a"), "Json.get_path: expected an array argument"),
    ("Json.get_path", (NULL, ["a", 1]), "Json.get_path: path must be a string array"),
    ("Json.get_path", (1, []), f"Json.get_path: {JSON_SHAPE}"),
    ("Json.set_field", (NULL, 1, NULL), "Json.set_field: expected a string argument"),
    ("Json.set_field", (NULL, "k", 1), f"Json.set_field: {JSON_SHAPE}"),
    ("Json.set_field", (1, "k", NULL), f"Json.set_field: {JSON_SHAPE}"),
    ("Json.remove_field", (NULL, None), "Json.remove_field: expected a string argument"),
    ("Json.remove_field", ([], "k"), f"Json.remove_field: {JSON_SHAPE}"),
]


@pytest.mark.parametrize(("name", "args", "message"), SHAPES,
                         ids=[f"{s[0]}-{i}" for i, s in enumerate(SHAPES)])
def test_shape_errors_use_the_qualified_name(name: str, args: tuple[Value, ...],
                                             message: str) -> None:
    assert failure(name, *args) == message


def test_set_field_checks_the_key_then_the_new_value_then_the_object() -> None:
    assert failure("Json.set_field", 1, 2, 3) == "Json.set_field: expected a string argument"
    assert failure("Json.set_field", 1, "k", 3) == f"Json.set_field: {JSON_SHAPE}"
    assert failure("Json.set_field", 1, "k", NULL) == f"Json.set_field: {JSON_SHAPE}"
    assert failure("Json.set_field", NULL, "k", NULL) == "Json.set_field: expected `Object(...)"


def test_json_conversion_errors_name_the_entry_and_path() -> None:
    bad_entry = Variant("Object", ([{"key": "a", "value": NULL}, {"value": NULL}],))
    assert (failure("Json.stringify", bad_entry)
            == "Json.stringify: JSON object entry: missing field 'key' (at $[1])")
    no_value = Variant("Object", ([{"key": "a"}],))
    assert (failure("Json.stringify", no_value)
            == "Json.stringify: JSON object entry: missing field 'value' (at $[0])")
    key_type = Variant("Array", ([Variant("Object", ([{"key": 1, "value": NULL}],))],))
    assert (failure("Json.stringify", key_type)
            == "Json.stringify: JSON object entry field 'key': expected string (at $[0][0])")
    not_record = Variant("Object", ([1],))
    assert (failure("Json.pretty", not_record)
            == "Json.pretty: JSON object entry: expected record (at $[0])")
    nested = Variant("Object", ([{"key": "n", "value": Variant("Number", (1,))}],))
    assert failure("Json.stringify", nested) == f"Json.stringify: {JSON_SHAPE} (at $.n)"


def test_cyclic_json_is_reported_not_followed() -> None:
    elements: list[Value] = []
    cyclic = Variant("Array", (elements,))
    elements.append(cyclic)
    assert failure("Json.stringify", cyclic) == (
        "Json.stringify: the value contains itself (a cyclic array) and cannot be converted "
        "to JSON (at $[0])")


def test_json_readers_examine_payloads_lazily() -> None:
    # "is a JSON value" looks at the tag only (spec 5.1)
    odd = Variant("Bool", ("not a bool", 2))
    assert result("Json.tag", odd) == "Bool"
    assert result("Json.as_bool", odd).tag == "None"
    entries = [1, {"key": 2, "value": NULL}, {"key": "k", "value": NULL}, {"key": "z"}]
    obj = Variant("Object", (entries,))
    assert result("Json.object_keys", obj) == ["k", "z"]
    assert result("Json.get_field", obj, "z").tag == "None"
    kept = result("Json.remove_field", obj, "k").args[0]
    assert kept == [1, {"key": 2, "value": NULL}, {"key": "z"}]


def test_hashtbl_skips_malformed_entries_and_remove_keeps_them() -> None:
    junk = [1, {"key": 3, "value": "x"}, {"key": "a"}]
    table = Ref(junk + [{"key": "a", "value": 7}])
    assert result("Hashtbl.get", table, "a").args == (7,)
    result("Hashtbl.set", table, "a", 8)
    assert table.value == junk + [{"key": "a", "value": 8}]
    result("Hashtbl.remove", table, "a")
    assert table.value == junk


def test_hashtbl_set_gives_the_cell_a_new_array() -> None:
    table = Ref([])
    result("Hashtbl.set", table, "a", 1)
    first = table.value
    result("Hashtbl.set", table, "a", 2)
    assert first == [{"key": "a", "value": 1}]
    assert table.value == [{"key": "a", "value": 2}] and table.value is not first


TOP = closures("""
let pair a b = a + b
let unit_fn () = 1
let answer = 42
let not_bool x = 1
let bad_option x = `Maybe(x)
""")


CALLBACKS = [
    ("Array.map", ([1], TOP["pair"]), "Array.map: function arity mismatch"),
    ("Array.init", (2, TOP["unit_fn"]), "Array.init: function arity mismatch"),
    ("Array.fold", ([1], 0, TOP["not_bool"]), "Array.fold: function arity mismatch"),
    ("Array.mapi", ([1], TOP["not_bool"]), "Array.mapi: function arity mismatch"),
    ("Array.iteri", ([1], BUILTINS["print"]), "Array.iteri: function arity mismatch"),
    ("Array.iter", ([1], TOP["answer"]), "Array.iter: expected a function"),
    ("Array.find", ([1], "f"), "Array.find: expected a function"),
    ("Array.filter", ([1], TOP["not_bool"]), "Array.filter: predicate must return bool"),
    ("Array.exists", ([1], TOP["not_bool"]), "Array.exists: predicate must return bool"),
    ("Array.for_all", ([1], TOP["not_bool"]), "Array.for_all: predicate must return bool"),
    ("Array.find", ([1], TOP["not_bool"]), "Array.find: predicate must return bool"),
    ("Array.find_map", ([1], TOP["bad_option"]),
     "Array.find_map: function must return `None or `Some(x)"),
    ("Array.find_map", ([1], TOP["not_bool"]),
     "Array.find_map: function must return `None or `Some(x)"),
]


@pytest.mark.parametrize(("name", "args", "message"), CALLBACKS,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CALLBACKS)])
def test_callback_failures(name: str, args: tuple[Value, ...], message: str) -> None:
    assert failure(name, *args) == message


def test_callbacks_are_not_checked_when_there_is_nothing_to_call() -> None:
    assert result("Array.map", [], TOP["pair"]) == []
    assert result("Array.init", 0, "not a function") == []
    assert result("Array.fold", [], 5, None) == 5


def test_task_builders_check_only_the_task_argument() -> None:
    bound = result("Task.bind", Pure(1), "not a function")
    assert bound.task.value == 1 and bound.continuation == "not a function"
    assert isinstance(result("Task.catch", Perform("Log.info", ("x",)), 3).task, Perform)


def test_fail_raises_its_argument_verbatim() -> None:
    assert failure("fail", "boom: with details") == "boom: with details"
    assert failure("fail", "") == ""
