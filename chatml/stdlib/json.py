"""The ``Json`` module (stdlib spec 5.5) with the strict JSON of DECISIONS 3.

``Json.parse``/``parse_opt``/``validate`` accept exactly RFC 8259 JSON
(:mod:`chatml.json_text`): ``validate(s)`` is true exactly when ``parse(s)``
succeeds, so the reference's ``validate("1.2.3") = true`` and its lenient
numbers (``.5``, ``1.``, ``+1``, ``01``) are gone. ``Json.stringify`` and
``Json.pretty`` write strict JSON (``7.0``; NaN and infinities are runtime
errors). ``Json.get_path`` reads array indices as plain decimal digits (the
latitude of stdlib spec 12.6; no sign, underscores or ``0x`` prefixes).

"Is a JSON value" checks only the top-level tag (spec 5.1); shape errors are
``<Q>: expected Json.t (`Null/`Bool/`Number/`String/`Array/`Object)``.
"""

from __future__ import annotations

from chatcommon.numbers import parse_int
from chatml import json_text, json_values
from chatml.json_values import JSON_SHAPE, JSON_TAGS, JsonShapeError
from chatml.registration import implements
from chatml.stdlib.checks import charge_array, charge_scan, charge_string, charge_text, shape
from chatml.values import ChatMLFailure, Value, Variant

NONE = Variant("None")

PARSE_BYTES_PER_CHAR = 8
"""Memory charged per input character by ``Json.parse`` (an estimate of the values it builds)."""


def _json(qualified: str, value: Value) -> Variant:
    if type(value) is not Variant or value.tag not in JSON_TAGS:
        raise ChatMLFailure(f"{qualified}: {JSON_SHAPE}")
    return value


def _payload(value: Variant, tag: str) -> Value:
    """The single payload of ``value`` when it is ```tag(x)``, else ``None``."""
    if value.tag == tag and len(value.args) == 1:
        return value.args[0]
    return None


def _some(value: Value) -> Variant:
    return Variant("Some", (value,))


def _key_of(entry: Value) -> str | None:
    """The key of a well-formed object entry record, else ``None``."""
    if type(entry) is dict:
        key = entry.get("key")
        if type(key) is str:
            return key
    return None


def _parse(qualified: str, text: Value) -> Value:
    if type(text) is not str:
        raise shape(qualified, "a string")
    charge_text(len(text) * PARSE_BYTES_PER_CHAR)
    return json_values.parse_text(text)


@implements("Json.parse")
def parse(text: Value) -> Value:
    try:
        return _parse("Json.parse", text)
    except json_text.JsonSyntaxError as error:
        raise ChatMLFailure(f"Json.parse: {error}") from None


@implements("Json.parse_opt")
def parse_opt(text: Value) -> Variant:
    try:
        return _some(_parse("Json.parse_opt", text))
    except json_text.JsonSyntaxError:
        return NONE


@implements("Json.validate")
def validate(text: Value) -> bool:
    if type(text) is not str:
        raise shape("Json.validate", "a string")
    charge_scan(len(text))
    return json_text.is_valid(text)


def _write(qualified: str, value: Value, pretty: bool) -> str:
    try:
        return charge_string(json_values.to_text(value, pretty=pretty))
    except JsonShapeError as error:
        raise ChatMLFailure(f"{qualified}: {error.message}") from None
    except json_text.JsonValueError as error:
        raise ChatMLFailure(f"{qualified}: {error}") from None


@implements("Json.stringify")
def stringify(value: Value) -> str:
    return _write("Json.stringify", value, pretty=False)


@implements("Json.pretty")
def pretty(value: Value) -> str:
    return _write("Json.pretty", value, pretty=True)


@implements("Json.tag")
def tag(value: Value) -> str:
    return _json("Json.tag", value).tag


def _as(qualified: str, value: Value, tag: str, payload_type: type) -> Variant:
    payload = _payload(_json(qualified, value), tag)
    return _some(payload) if type(payload) is payload_type else NONE


@implements("Json.as_bool")
def as_bool(value: Value) -> Variant:
    return _as("Json.as_bool", value, "Bool", bool)


@implements("Json.as_number")
def as_number(value: Value) -> Variant:
    return _as("Json.as_number", value, "Number", float)


@implements("Json.as_string")
def as_string(value: Value) -> Variant:
    return _as("Json.as_string", value, "String", str)


@implements("Json.as_array")
def as_array(value: Value) -> Variant:
    return _as("Json.as_array", value, "Array", list)


@implements("Json.as_object")
def as_object(value: Value) -> Variant:
    return _as("Json.as_object", value, "Object", list)


def _entries(value: Variant) -> list[Value] | None:
    entries = _payload(value, "Object")
    return entries if type(entries) is list else None


@implements("Json.object_keys")
def object_keys(value: Value) -> list[str]:
    entries = _entries(_json("Json.object_keys", value))
    if entries is None:
        return []
    charge_array(len(entries))
    return [key for key in map(_key_of, entries) if key is not None]


def _field(entries: list[Value], key: str) -> Variant:
    for entry in entries:
        if _key_of(entry) == key and "value" in entry:
            return _some(entry["value"])
    return NONE


@implements("Json.get_field")
def get_field(value: Value, key: Value) -> Variant:
    if type(key) is not str:
        raise shape("Json.get_field", "a string")
    entries = _entries(_json("Json.get_field", value))
    if entries is None:
        return NONE
    charge_scan(len(entries))
    return _field(entries, key)


@implements("Json.get_path")
def get_path(value: Value, path: Value) -> Variant:
    if type(path) is not list:
        raise shape("Json.get_path", "an array")
    if any(type(segment) is not str for segment in path):
        raise ChatMLFailure("Json.get_path: path must be a string array")
    node = _json("Json.get_path", value)
    for segment in path:
        if node.tag == "Object":
            entries = _entries(node)
            if entries is None:
                return NONE
            charge_scan(len(entries))
            found = _field(entries, segment)
            if found is NONE:
                return NONE
            node = _json("Json.get_path", found.args[0])
        elif node.tag == "Array":
            elements = _payload(node, "Array")
            index = parse_int(segment) if segment.isascii() and segment.isdigit() else None
            if type(elements) is not list or index is None or index >= len(elements):
                return NONE
            node = _json("Json.get_path", elements[index])
        else:
            return NONE
    return _some(node)


def _object_entries(qualified: str, value: Value) -> list[Value]:
    entries = _entries(_json(qualified, value))
    if entries is None:
        raise ChatMLFailure(f"{qualified}: expected `Object(...)")
    return entries


@implements("Json.set_field")
def set_field(value: Value, key: Value, new: Value) -> Variant:
    if type(key) is not str:
        raise shape("Json.set_field", "a string")
    _json("Json.set_field", new)
    entries = _object_entries("Json.set_field", value)
    charge_array(len(entries) + 1)
    updated: list[Value] = []
    replaced = False
    for entry in entries:
        if _key_of(entry) != key:
            updated.append(entry)
        elif not replaced:
            updated.append({"key": key, "value": new})
            replaced = True
    if not replaced:
        updated.append({"key": key, "value": new})
    return Variant("Object", (updated,))


@implements("Json.remove_field")
def remove_field(value: Value, key: Value) -> Variant:
    if type(key) is not str:
        raise shape("Json.remove_field", "a string")
    entries = _object_entries("Json.remove_field", value)
    charge_array(len(entries))
    return Variant("Object", ([entry for entry in entries if _key_of(entry) != key],))
