"""Conversions between JSON (text, neutral trees, host Python data) and ChatML ``json`` values.

The ChatML ``json`` type is an ordinary closed variant (stdlib spec 5.1)::

    json = [ `Null | `Bool(bool) | `Number(float) | `String(string)
           | `Array(json array) | `Object({ key : string; value : json } array) ]

This module owns both directions (language spec 6.2, stdlib spec 5.4):

* :func:`from_tree` / :func:`parse_text` -- a :mod:`chatml.json_text` tree or
  strict JSON text to a ``json`` value (objects keep their order and duplicate
  keys); :func:`from_host` takes ordinary Python data (``dict``, ``list``,
  ``int``...) from a host;
* :func:`to_tree` / :func:`to_text` / :func:`to_host` -- back again, checking
  the shape as the spec requires. Shape problems raise :class:`JsonShapeError`
  whose ``message`` is the spec's text (callers prefix ``"<Q>: "``), with the
  path appended when the problem is below the root, e.g.
  ``expected Json.t (...) (at $[2].key)``.

Everything runs on explicit work lists (no Python recursion), and an array
that contains itself is reported instead of looping.
"""

from __future__ import annotations

from typing import Any

from chatcommon.allocation import gc_paused
from chatml import json_text
from chatml.json_text import JsonObject, JsonTree
from chatml.values import Value, Variant

JSON_SHAPE = "expected Json.t (`Null/`Bool/`Number/`String/`Array/`Object)"
JSON_TAGS = frozenset(("Null", "Bool", "Number", "String", "Array", "Object"))
CYCLE = "the value contains itself (a cyclic array) and cannot be converted to JSON"

NULL = Variant("Null")
TRUE = Variant("Bool", (True,))
FALSE = Variant("Bool", (False,))


class JsonShapeError(ValueError):
    """A ChatML value that is not a well-formed ``json`` value (or host data with no JSON form)."""

    def __init__(self, message: str, path: str = "$") -> None:
        self.message = message if path == "$" else f"{message} (at {path})"
        self.path = path
        super().__init__(self.message)


def is_json(value: Value) -> bool:
    """The spec's "is a JSON value" check: a variant whose tag is one of the six (payload unchecked)."""
    return type(value) is Variant and value.tag in JSON_TAGS


# --------------------------------------------------------------------------- paths

Trail = Any
"""A path as a linked tuple ``(parent_trail, segment)`` (``None`` at the root), spelled out only on errors."""


def spell(trail: Trail) -> str:
    """``$.a[2]`` for the trail of segments ``"a"``, ``2``."""
    segments: list[str] = []
    while trail is not None:
        trail, segment = trail
        segments.append(f"[{segment}]" if type(segment) is int else f".{segment}")
    return "$" + "".join(reversed(segments))


# --------------------------------------------------------------------------- into ChatML


def from_tree(tree: JsonTree) -> Value:
    """The ``json`` value of a JSON tree (also accepts ``dict``/``tuple``/``int`` from hosts)."""
    with gc_paused():
        return _from_tree(tree)


def _from_tree(tree: JsonTree) -> Value:
    value = _from_scalar(tree, None)
    if value is not None:
        return value
    root, frame = _from_container(tree, None)
    stack = [frame]
    while stack:
        iterator, destination, is_object, trail = stack[-1]
        for position, item in iterator:
            if is_object:
                key, item = item
                if type(key) is not str:
                    raise JsonShapeError(
                        f"object keys must be strings, not {type(key).__name__}", spell(trail))
            kind = type(item)
            if kind is str:
                value = Variant("String", (item,))
            elif kind is float:
                value = Variant("Number", (item,))
            elif item is None:
                value = NULL
            elif kind is bool:
                value = TRUE if item else FALSE
            else:
                child_trail = (trail, key if is_object else position)
                value = _from_scalar(item, child_trail)
                if value is None:
                    value, frame = _from_container(item, child_trail)
                    destination.append({"key": key, "value": value} if is_object else value)
                    stack.append(frame)
                    break
            destination.append({"key": key, "value": value} if is_object else value)
        else:
            stack.pop()
    return root


def _from_scalar(item: Any, trail: Trail) -> Value:
    """The ``json`` value of a scalar tree item, or ``None`` when ``item`` is a container."""
    kind = type(item)
    if kind is str:
        return Variant("String", (item,))
    if kind is float:
        return Variant("Number", (item,))
    if item is None:
        return NULL
    if kind is bool:
        return TRUE if item else FALSE
    if kind is int:
        try:
            return Variant("Number", (float(item),))
        except OverflowError:
            raise JsonShapeError(f"the integer {item} does not fit a double",
                                 spell(trail)) from None
    if kind is list or kind is tuple or kind is JsonObject or kind is dict:
        return None
    raise JsonShapeError(f"a Python {kind.__name__} has no JSON form", spell(trail))


def _from_container(container: Any, trail: Trail) -> tuple[Value, list[Any]]:
    """The (still empty) ``json`` value of a container and the frame that fills it."""
    elements: list[Value] = []
    kind = type(container)
    is_object = kind is JsonObject or kind is dict
    value = Variant("Object" if is_object else "Array", (elements,))
    children = container.items() if kind is dict else container
    return value, [iter(enumerate(children)), elements, is_object, trail]


def parse_text(text: str) -> Value:
    """Strict JSON text to a ``json`` value; raises :class:`json_text.JsonSyntaxError`."""
    return from_tree(json_text.parse(text))


def from_host(data: Any) -> Value:
    """Python JSON data from a host (``json.loads`` output, dicts, lists, ints...) to ``json``."""
    return from_tree(data)


# --------------------------------------------------------------------------- out of ChatML


def to_tree(value: Value) -> JsonTree:
    """The JSON tree of a ``json`` value, checking its shape (spec 5.4)."""
    with gc_paused():
        return _to_tree(value)


def _to_tree(value: Value) -> JsonTree:
    active: set[int] = set()  # ids of the arrays being converted (a cycle check)
    tree, frame = _to_node(value, None, active)
    if frame is None:
        return tree
    active.add(frame[4])
    stack = [frame]
    while stack:
        iterator, destination, is_object, trail, _ = stack[-1]
        for position, item in iterator:
            if is_object:
                key, item = _entry(item, trail, position)
            if type(item) is Variant and len(item.args) == 1:
                payload = item.args[0]
                tag = item.tag
                kind = type(payload)
                if (tag == "String" and kind is str) or (tag == "Number" and kind is float) or (
                        tag == "Bool" and kind is bool):
                    destination.append((key, payload) if is_object else payload)
                    continue
            child_trail = (trail, key if is_object else position)
            node, frame = _to_node(item, child_trail, active)
            destination.append((key, node) if is_object else node)
            if frame is not None:
                active.add(frame[4])
                stack.append(frame)
                break
        else:
            active.discard(stack.pop()[4])
    return tree


def _to_node(value: Value, trail: Trail, active: set[int]) -> tuple[Any, list[Any] | None]:
    """A ``json`` value's tree node, and for a non-empty container the frame that fills it."""
    if type(value) is not Variant:
        raise JsonShapeError(JSON_SHAPE, spell(trail))
    tag = value.tag
    args = value.args
    if tag == "Null" and not args:
        return None, None
    if len(args) != 1:
        raise JsonShapeError(JSON_SHAPE, spell(trail))
    payload = args[0]
    kind = type(payload)
    if (tag == "String" and kind is str) or (tag == "Number" and kind is float) or (
            tag == "Bool" and kind is bool):
        return payload, None
    if (tag != "Array" and tag != "Object") or kind is not list:
        raise JsonShapeError(JSON_SHAPE, spell(trail))
    if id(payload) in active:
        raise JsonShapeError(CYCLE, spell(trail))
    is_object = tag == "Object"
    node: list[Any] = JsonObject() if is_object else []
    if not payload:
        return node, None
    return node, [iter(enumerate(payload)), node, is_object, trail, id(payload)]


def _entry(entry: Value, trail: Trail, position: int) -> tuple[str, Value]:
    """An object entry record's key and value, checked as spec 5.4 says."""
    if type(entry) is not dict:
        raise JsonShapeError("JSON object entry: expected record", spell((trail, position)))
    if "key" not in entry:
        raise JsonShapeError("JSON object entry: missing field 'key'", spell((trail, position)))
    key = entry["key"]
    if type(key) is not str:
        raise JsonShapeError("JSON object entry field 'key': expected string",
                             spell((trail, position)))
    if "value" not in entry:
        raise JsonShapeError("JSON object entry: missing field 'value'", spell((trail, position)))
    return key, entry["value"]


def to_text(value: Value, *, pretty: bool = False) -> str:
    """Strict JSON text of a ``json`` value (``Json.stringify``/``Json.pretty``).

    Raises :class:`JsonShapeError` for a malformed value and
    :class:`json_text.JsonValueError` for NaN/infinities.
    """
    return json_text.dumps(to_tree(value), pretty=pretty)


def to_host(value: Value) -> Any:
    """A ``json`` value as plain Python data: ``dict`` (first of duplicate keys wins), ``list``..."""
    tree = to_tree(value)
    if type(tree) is not list and type(tree) is not JsonObject:
        return tree
    root: list[Any] = [tree]
    pending: list[tuple[Any, Any]] = [(root, 0)]
    while pending:
        holder, slot = pending.pop()
        node = holder[slot]
        if type(node) is JsonObject:
            converted: dict[str, Any] = {}
            for key, child in node:
                converted.setdefault(key, child)
            holder[slot] = converted
            pending.extend((converted, key) for key, child in converted.items()
                           if type(child) is list or type(child) is JsonObject)
        elif type(node) is list:
            pending.extend((node, position) for position, child in enumerate(node)
                           if type(child) is list or type(child) is JsonObject)
    return root[0]
