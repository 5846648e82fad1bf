"""The ``Context`` helper module (stdlib spec 6.4): searches over ``ctx.items`` and tools.

Searches from the end stop at the first match, so earlier malformed items
are never item-checked (as the spec says).
"""

from __future__ import annotations

from collections.abc import Callable

from chatml import calls
from chatml.json_values import JSON_TAGS
from chatml.registration import implements
from chatml.values import ChatMLFailure, Value, Variant
from runtime.builtins.checks import (
    NONE,
    TOOL_CALL_KINDS,
    TOOL_RESULT_KINDS,
    array_field,
    checked_item,
    field,
    record_arg,
    role_of,
    some,
    string_arg,
    string_field,
)


def _items(qualified: str, ctx: Value) -> list[Value]:
    return array_field(qualified, ctx, "items")


def _last(qualified: str, ctx: Value, keep: Callable[[Value], bool]) -> Variant:
    for item in reversed(_items(qualified, ctx)):
        # The item check of checked_item, inlined for well-formed items (the
        # common case); anything else goes through it to raise its error.
        value = item.get("value") if type(item) is dict else None
        if not (type(value) is Variant and value.tag in JSON_TAGS
                and type(item.get("id")) is str):
            value = checked_item(qualified, item)["value"]
        if keep(value):
            return some(item)
    return NONE


def _string_field_in(name: str, accepted: frozenset[str]) -> Callable[[Value], bool]:
    """A test that an item value's string field ``name`` is one of ``accepted``."""
    return lambda value: string_field(value, name) in accepted


def _role_is(expected: str) -> Callable[[Value], bool]:
    return _string_field_in("role", frozenset((expected,)))


def _new_array(items: list[Value]) -> list[Value]:
    calls.charge_memory(56 + 8 * len(items))
    return items


@implements("Context.last_item")
def last_item(ctx: Value) -> Variant:
    items = _items("Context.last_item", ctx)
    return some(items[-1]) if items else NONE


@implements("Context.last_user_item")
def last_user_item(ctx: Value) -> Variant:
    return _last("Context.last_user_item", ctx, _role_is("user"))


@implements("Context.last_assistant_item")
def last_assistant_item(ctx: Value) -> Variant:
    return _last("Context.last_assistant_item", ctx, _role_is("assistant"))


@implements("Context.last_system_item")
def last_system_item(ctx: Value) -> Variant:
    return _last("Context.last_system_item", ctx, _role_is("system"))


@implements("Context.last_tool_call")
def last_tool_call(ctx: Value) -> Variant:
    return _last("Context.last_tool_call", ctx, _string_field_in("type", TOOL_CALL_KINDS))


@implements("Context.last_tool_result")
def last_tool_result(ctx: Value) -> Variant:
    return _last("Context.last_tool_result", ctx, _string_field_in("type", TOOL_RESULT_KINDS))


@implements("Context.find_item")
def find_item(ctx: Value, item_id: Value) -> Variant:
    q = "Context.find_item"
    wanted = string_arg(q, item_id)
    for item in _items(q, ctx):
        if checked_item(q, item)["id"] == wanted:
            return some(item)
    return NONE


def _since_last(qualified: str, ctx: Value, role: str) -> list[Value]:
    items = _items(qualified, ctx)
    for index in range(len(items) - 1, -1, -1):
        if (role_of(checked_item(qualified, items[index])["value"]) or "") == role:
            return _new_array(items[index:])
    return _new_array(list(items))


@implements("Context.items_since_last_user_turn")
def items_since_last_user_turn(ctx: Value) -> list[Value]:
    return _since_last("Context.items_since_last_user_turn", ctx, "user")


@implements("Context.items_since_last_assistant_turn")
def items_since_last_assistant_turn(ctx: Value) -> list[Value]:
    return _since_last("Context.items_since_last_assistant_turn", ctx, "assistant")


@implements("Context.items_by_role")
def items_by_role(ctx: Value, role: Value) -> list[Value]:
    q = "Context.items_by_role"
    wanted = string_arg(q, role)
    return _new_array([item for item in _items(q, ctx)
                       if (role_of(checked_item(q, item)["value"]) or "") == wanted])


def _find_tool(qualified: str, ctx: Value, name: Value) -> Value | None:
    wanted = string_arg(qualified, name)
    for tool in array_field(qualified, ctx, "available_tools"):
        record = record_arg(qualified, tool)
        tool_name = field(qualified, record, "name")
        if type(tool_name) is not str:
            raise ChatMLFailure(f"{qualified}.name: expected a string argument")
        if tool_name == wanted:
            return tool
    return None


@implements("Context.find_tool")
def find_tool(ctx: Value, name: Value) -> Variant:
    found = _find_tool("Context.find_tool", ctx, name)
    return NONE if found is None else some(found)


@implements("Context.has_tool")
def has_tool(ctx: Value, name: Value) -> bool:
    return _find_tool("Context.has_tool", ctx, name) is not None
