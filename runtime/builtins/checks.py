"""Argument checks shared by the helper modules (stdlib spec 6.1 "item check").

Messages follow the spec exactly: ``<Q>: expected a record argument``,
``<Q>: expected field "id"`` (the field name in double quotes, OCaml-escaped),
``<Q>.id: expected a string argument``, ``<Q>.value: expected Json.t (...)``.
Also the small readers every helper needs: a JSON object's first field, the
role, kind and text parts of an item value, and option values.
"""

from __future__ import annotations

from chatml import calls
from chatml.json_values import JSON_SHAPE, is_json
from chatml.limits import COST
from chatml.snapshot import ocaml_quote
from chatml.values import ChatMLFailure, Value, Variant

NONE = Variant("None")
RECORD_COST = COST["record"] + 2 * COST["field"]


def some(value: Value) -> Variant:
    calls.charge_memory(COST["variant"] + COST["slot"])
    return Variant("Some", (value,))


def option(value: Value | None) -> Variant:
    """```Some(value)`` or ```None`` (for a Python ``None``)."""
    return NONE if value is None else some(value)


def string_arg(qualified: str, value: Value) -> str:
    if type(value) is not str:
        raise ChatMLFailure(f"{qualified}: expected a string argument")
    return value


def json_arg(qualified: str, value: Value) -> Value:
    if not is_json(value):
        raise ChatMLFailure(f"{qualified}: {JSON_SHAPE}")
    return value


def record_arg(qualified: str, value: Value) -> dict[str, Value]:
    if type(value) is not dict:
        raise ChatMLFailure(f"{qualified}: expected a record argument")
    return value


def field(qualified: str, record: dict[str, Value], name: str) -> Value:
    if name not in record:
        raise ChatMLFailure(f"{qualified}: expected field {ocaml_quote(name)}")
    return record[name]


def checked_item(qualified: str, value: Value) -> dict[str, Value]:
    """The item check: a record with a string ``id`` and a JSON ``value``."""
    record = record_arg(qualified, value)
    string_arg(f"{qualified}.id", field(qualified, record, "id"))
    json_arg(f"{qualified}.value", field(qualified, record, "value"))
    return record


def array_field(qualified: str, value: Value, name: str) -> list[Value]:
    record = record_arg(qualified, value)
    found = field(qualified, record, name)
    if type(found) is not list:
        raise ChatMLFailure(f"{qualified}.{name}: expected an array argument")
    return found


# --------------------------------------------------------------------------- reading item values


def json_field(value: Value, name: str) -> Value | None:
    """The value of the first entry ``name`` of a ```Object``; None when absent or not an object."""
    if type(value) is not Variant or value.tag != "Object" or len(value.args) != 1:
        return None
    entries = value.args[0]
    if type(entries) is not list:
        return None
    for entry in entries:
        if type(entry) is dict and entry.get("key") == name and "value" in entry:
            return entry["value"]
    return None


def json_string(value: Value | None) -> str | None:
    """The payload of a ```String(s)``, else None."""
    if (type(value) is Variant and value.tag == "String" and len(value.args) == 1
            and type(value.args[0]) is str):
        return value.args[0]
    return None


def string_field(value: Value, name: str) -> str | None:
    """The string payload of the first entry ``name`` of a ```Object``, else None."""
    return json_string(json_field(value, name))


def role_of(item_value: Value) -> str | None:
    return string_field(item_value, "role")


def kind_of(item_value: Value) -> str | None:
    return string_field(item_value, "type")


def _texts_of_parts(parts: Value) -> list[str]:
    if type(parts) is not Variant or parts.tag != "Array" or len(parts.args) != 1:
        return []
    texts = []
    for part in parts.args[0]:
        text = json_string(json_field(part, "text"))
        if text is not None:
            texts.append(text)
    return texts


def text_parts_of(item_value: Value) -> list[str]:
    """The *text parts* of stdlib spec 6.1: ``content`` parts, else ``output``, else none."""
    content = json_field(item_value, "content")
    if content is not None:
        return _texts_of_parts(content)
    output = json_field(item_value, "output")
    if output is None:
        return []
    text = json_string(output)
    if text is not None:
        return [text]
    parts = json_field(output, "parts")
    return _texts_of_parts(parts) if parts is not None else []


TOOL_CALL_KINDS = frozenset(("function_call", "custom_tool_call"))
TOOL_RESULT_KINDS = frozenset(("function_call_output", "custom_tool_call_output"))
