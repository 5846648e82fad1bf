"""The ``Item`` helper module (stdlib spec 6.2): build and inspect ``{id; value}`` items."""

from __future__ import annotations

from chatml import calls
from chatml.install import input_text_message
from chatml.registration import implements
from chatml.values import Value, Variant
from runtime.builtins.checks import (
    RECORD_COST,
    TOOL_CALL_KINDS,
    TOOL_RESULT_KINDS,
    checked_item,
    json_arg,
    kind_of,
    option,
    role_of,
    string_arg,
    text_parts_of,
)


def _s(text: str) -> Variant:
    return Variant("String", (text,))


def _object(*pairs: tuple[str, Value]) -> Variant:
    return Variant("Object", ([{"key": key, "value": value} for key, value in pairs],))


def output_text_message(item_id: str, text: str) -> Variant:
    """The *output-text message* json value of stdlib spec 6.1."""
    part = _object(("type", _s("output_text")), ("text", _s(text)),
                   ("annotations", Variant("Array", ([],))))
    return _object(("type", _s("message")), ("role", _s("assistant")), ("id", _s(item_id)),
                   ("content", Variant("Array", ([part],))), ("status", _s("completed")))


def _item(item_id: str, value: Value) -> dict[str, Value]:
    calls.charge_memory(RECORD_COST)
    return {"id": item_id, "value": value}


@implements("Item.create")
def create(item_id: Value, value: Value) -> dict[str, Value]:
    return _item(string_arg("Item.create", item_id), json_arg("Item.create", value))


@implements("Item.id")
def id_(item: Value) -> str:
    return checked_item("Item.id", item)["id"]


@implements("Item.value")
def value(item: Value) -> Value:
    return checked_item("Item.value", item)["value"]


@implements("Item.kind")
def kind(item: Value) -> Variant:
    return option(kind_of(checked_item("Item.kind", item)["value"]))


@implements("Item.role")
def role(item: Value) -> Variant:
    return option(role_of(checked_item("Item.role", item)["value"]))


@implements("Item.text_parts")
def text_parts(item: Value) -> list[str]:
    parts = text_parts_of(checked_item("Item.text_parts", item)["value"])
    calls.charge_memory(56 + 8 * len(parts))
    return parts


@implements("Item.text")
def text(item: Value) -> Variant:
    parts = text_parts_of(checked_item("Item.text", item)["value"])
    return option(parts[0] if parts else None)


@implements("Item.input_text_message")
def input_text_message_item(item_id: Value, role_name: Value, content: Value) -> dict[str, Value]:
    q = "Item.input_text_message"
    return _item(string_arg(q, item_id),
                 input_text_message(string_arg(q, role_name), string_arg(q, content)))


@implements("Item.output_text_message")
def output_text_message_item(item_id: Value, content: Value) -> dict[str, Value]:
    q = "Item.output_text_message"
    identifier = string_arg(q, item_id)
    return _item(identifier, output_text_message(identifier, string_arg(q, content)))


@implements("Item.user_text")
def user_text(item_id: Value, content: Value) -> dict[str, Value]:
    q = "Item.user_text"
    return _item(string_arg(q, item_id), input_text_message("user", string_arg(q, content)))


@implements("Item.assistant_text")
def assistant_text(item_id: Value, content: Value) -> dict[str, Value]:
    q = "Item.assistant_text"
    identifier = string_arg(q, item_id)
    return _item(identifier, output_text_message(identifier, string_arg(q, content)))


@implements("Item.system_text")
def system_text(item_id: Value, content: Value) -> dict[str, Value]:
    q = "Item.system_text"
    return _item(string_arg(q, item_id), input_text_message("system", string_arg(q, content)))


@implements("Item.notice")
def notice(item_id: Value, content: Value) -> dict[str, Value]:
    q = "Item.notice"
    return _item(string_arg(q, item_id), input_text_message("system", string_arg(q, content)))


def _role_is(qualified: str, item: Value, expected: str) -> bool:
    return (role_of(checked_item(qualified, item)["value"]) or "") == expected


@implements("Item.is_user")
def is_user(item: Value) -> bool:
    return _role_is("Item.is_user", item, "user")


@implements("Item.is_assistant")
def is_assistant(item: Value) -> bool:
    return _role_is("Item.is_assistant", item, "assistant")


@implements("Item.is_system")
def is_system(item: Value) -> bool:
    return _role_is("Item.is_system", item, "system")


@implements("Item.is_tool_call")
def is_tool_call(item: Value) -> bool:
    return kind_of(checked_item("Item.is_tool_call", item)["value"]) in TOOL_CALL_KINDS


@implements("Item.is_tool_result")
def is_tool_result(item: Value) -> bool:
    return kind_of(checked_item("Item.is_tool_result", item)["value"]) in TOOL_RESULT_KINDS
