"""The ``Tool_call`` helper module (stdlib spec 6.3): read a ``{id; name; args}`` call."""

from __future__ import annotations

from chatml.registration import implements
from chatml.values import ChatMLFailure, Value, Variant
from runtime.builtins.checks import (
    NONE,
    field,
    json_arg,
    json_field,
    record_arg,
    some,
    string_arg,
)


def _arg(qualified: str, call: Value, key: Value) -> Value | None:
    """The first ``args`` entry named ``key`` (None when args is not an object or lacks it)."""
    name = string_arg(qualified, key)
    record = record_arg(qualified, call)
    args = json_arg(f"{qualified}.args", field(qualified, record, "args"))
    return json_field(args, name)


def _payload(value: Value | None, tag: str) -> Variant:
    """```Some(payload)`` when ``value`` is the json variant ``tag``, else ```None``."""
    if type(value) is Variant and value.tag == tag and len(value.args) == 1:
        return some(value.args[0])
    return NONE


@implements("Tool_call.arg")
def arg(call: Value, key: Value) -> Variant:
    found = _arg("Tool_call.arg", call, key)
    return NONE if found is None else some(found)


@implements("Tool_call.arg_string")
def arg_string(call: Value, key: Value) -> Variant:
    return _payload(_arg("Tool_call.arg_string", call, key), "String")


@implements("Tool_call.arg_bool")
def arg_bool(call: Value, key: Value) -> Variant:
    return _payload(_arg("Tool_call.arg_bool", call, key), "Bool")


@implements("Tool_call.arg_array")
def arg_array(call: Value, key: Value) -> Variant:
    return _payload(_arg("Tool_call.arg_array", call, key), "Array")


def _name(qualified: str, call: Value) -> str:
    record = record_arg(qualified, call)
    return string_arg(f"{qualified}.name", field(qualified, record, "name"))


@implements("Tool_call.is_named")
def is_named(call: Value, name: Value) -> bool:
    actual = _name("Tool_call.is_named", call)
    return actual == string_arg("Tool_call.is_named", name)


@implements("Tool_call.is_one_of")
def is_one_of(call: Value, names: Value) -> bool:
    q = "Tool_call.is_one_of"
    actual = _name(q, call)
    if type(names) is not list:
        raise ChatMLFailure(f"{q}: expected an array argument")
    found = False
    for candidate in names:
        if string_arg(q, candidate) == actual:
            found = True
    return found
