"""Data-only snapshots of ChatML values: a versioned, JSON-compatible encoding and its inverse.

A value is *data-only* (language spec 6.1) when it is built solely from ints,
floats, bools, strings, unit, arrays, records and variants (``json`` values
are variants, so they are included). Refs, closures, builtins, modules and
tasks are runtime-only: :func:`encode` rejects them, even nested, with a
:class:`SnapshotError` naming the path to the first one in encoding order::

    root.state.tasks[0]: closures are not serializable in ChatML snapshots

(paths grow by ``.label`` for a record field, ``[i]`` for an array element
and ``<Tag>[i]`` for a variant's i-th payload; records are walked in
ascending label order).

Encoding (the data-value form of moderator-runtime spec 6.2; every node is a
one-key JSON object)::

    {"int": 3}   {"float": 1.5}   {"float": "nan" | "inf" | "-inf"}
    {"bool": true}   {"string": "s"}   {"unit": null}
    {"array": [node, ...]}   {"record": [["label", node], ...]}   (labels ascending)
    {"variant": {"tag": "Some", "args": [node, ...]}}

:func:`dump`/:func:`load` wrap a node in the versioned envelope
``{"format": "chatml-snapshot", "version": 1, "value": node}``;
:func:`dumps`/:func:`loads` go to and from strict JSON text. Decoding checks
everything (it reads files from disk): a malformed node, a duplicate record
label or an int outside the 63-bit range is a :class:`SnapshotError` with its
path, never a crash. Arrays decode to fresh lists (aliasing is not kept);
``decode(encode(v))`` is structurally equal to ``v`` and prints identically.
NaN keeps no sign or payload (ChatML cannot observe either).

Encoding and decoding run on explicit work lists, so deep values (a long
variant-encoded list) need no Python recursion; an array that contains itself
is reported rather than followed forever.
"""

from __future__ import annotations

import math
from typing import Any

from chatcommon.allocation import gc_paused
from chatml import json_text
from chatml.values import MAX_INT, MIN_INT, REF_TYPES, Module, Task, Value, Variant, is_builtin

FORMAT = "chatml-snapshot"
VERSION = 1
NODE_KINDS = ("int", "float", "bool", "string", "unit", "array", "record", "variant")


class SnapshotError(ValueError):
    """A value that cannot be snapshotted, or snapshot data that cannot be decoded."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        self.message = f"{path}: {reason}"
        super().__init__(self.message)


# A path is a linked tuple (parent, segment), spelled out only for errors:
# an int segment is ``[i]``, a str ``.label``, a (tag, i) pair ``<tag>[i]``.
Trail = Any


def spell(trail: Trail) -> str:
    segments: list[str] = []
    while trail is not None:
        trail, segment = trail
        if type(segment) is int:
            segments.append(f"[{segment}]")
        elif type(segment) is str:
            segments.append(f".{segment}")
        else:
            segments.append(f"<{segment[0]}>[{segment[1]}]")
    return "root" + "".join(reversed(segments))


# --------------------------------------------------------------------------- encoding


def _runtime_only(value: Value) -> str:
    """The plural kind name of a value that cannot be snapshotted."""
    if type(value) in REF_TYPES:
        return "refs"
    if type(value) is Module:
        return "modules"
    if isinstance(value, Task):
        return "tasks"
    if is_builtin(value):
        return "builtins"
    if callable(value):
        return "closures"
    return f"values of the Python type {type(value).__name__} (not ChatML values)"


_SIMPLE = {str: "string", bool: "bool"}
"""Payload types a one-payload variant may have to be encoded inline (no range or NaN check)."""

# Frame modes of the encoder and the decoder.
_ITEMS, _RECORD, _VARIANT = range(3)


def encode(value: Value) -> Any:
    """The snapshot node of a data-only value (JSON-compatible Python data)."""
    with gc_paused():
        return _encode(value)


def _encode(value: Value) -> Any:
    active: set[int] = set()  # ids of the arrays being encoded (a cycle check)
    node, frame = _encode_node(value, None, active)
    stack = [frame] if frame is not None else []
    while stack:
        # [iterator, destination, mode, record or variant tag, trail, array id or 0]
        iterator, destination, mode, owner, trail, _ = stack[-1]
        emit = destination.append
        label = ""
        for position, child in iterator:
            if mode == _RECORD:
                label = child
                child = owner[label]
            kind = type(child)
            if kind is int:
                if MIN_INT <= child <= MAX_INT:
                    encoded: Any = {"int": child}
                else:
                    raise SnapshotError(spell(_child(trail, mode, owner, position, label)),
                                        f"integer {child} is outside the 63-bit range of ChatML ints")
            elif kind is str:
                encoded = {"string": child}
            elif kind is float:
                encoded = {"float": child if child - child == 0 else _non_finite(child)}
            elif kind is bool:
                encoded = {"bool": child}
            elif child is None:
                encoded = {"unit": None}
            elif kind is Variant and len(child.args) == 1 and type(child.args[0]) in _SIMPLE:
                payload = child.args[0]  # a common shape (`Some(1)`, `String("x")`), inline
                encoded = {"variant": {"tag": child.tag,
                                       "args": [{_SIMPLE[type(payload)]: payload}]}}
            else:
                encoded, frame = _encode_node(child, _child(trail, mode, owner, position, label), active)
                emit([label, encoded] if mode == _RECORD else encoded)
                if frame is not None:
                    stack.append(frame)
                    break
                continue
            emit([label, encoded] if mode == _RECORD else encoded)
        else:
            leave = stack.pop()[5]
            if leave:
                active.discard(leave)
    return node


def _child(trail: Trail, mode: int, owner: Any, position: int, label: str) -> Trail:
    """The trail of a frame's child: a record field, a variant payload or an array element."""
    if mode == _RECORD:
        return (trail, label)
    if mode == _VARIANT:
        return (trail, (owner, position))
    return (trail, position)


def _non_finite(x: float) -> str:
    return "nan" if x != x else "inf" if x > 0 else "-inf"


def _encode_node(value: Value, trail: Trail, active: set[int]) -> tuple[Any, list[Any] | None]:
    """A value's node, and for a non-empty container the frame that fills it."""
    kind = type(value)
    if kind is int:
        if not MIN_INT <= value <= MAX_INT:
            raise SnapshotError(spell(trail),
                                f"integer {value} is outside the 63-bit range of ChatML ints")
        return {"int": value}, None
    if kind is str:
        return {"string": value}, None
    if kind is float:
        return {"float": value if value - value == 0 else _non_finite(value)}, None
    if kind is bool:
        return {"bool": value}, None
    if value is None:
        return {"unit": None}, None
    if kind is list:
        key = id(value)
        if key in active:
            raise SnapshotError(spell(trail), "the array contains itself (a cycle) and is not "
                                              "serializable in ChatML snapshots")
        elements: list[Any] = []
        if not value:
            return {"array": elements}, None
        active.add(key)
        return {"array": elements}, [iter(enumerate(value)), elements, _ITEMS, None, trail, key]
    if kind is dict:
        fields: list[Any] = []
        if not value:
            return {"record": fields}, None
        return {"record": fields}, [iter(enumerate(sorted(value))), fields, _RECORD, value,
                                    trail, 0]
    if kind is Variant:
        args: list[Any] = []
        node = {"variant": {"tag": value.tag, "args": args}}
        if not value.args:
            return node, None
        return node, [iter(enumerate(value.args)), args, _VARIANT, value.tag, trail, 0]
    raise SnapshotError(spell(trail),
                        f"{_runtime_only(value)} are not serializable in ChatML snapshots")


def check(value: Value) -> None:
    """Raise :class:`SnapshotError` unless ``value`` is data-only."""
    encode(value)


# --------------------------------------------------------------------------- decoding

_NODE_SHAPE = ("expected a snapshot node: an object with exactly one of the keys "
               + ", ".join(NODE_KINDS))


def decode(data: Any) -> Value:
    """The value of a snapshot node (the inverse of :func:`encode`)."""
    with gc_paused():
        return _decode(data)


def _decode(data: Any) -> Value:
    value, frame = _decode_node(data, None)
    stack = [frame] if frame is not None else []
    while stack:
        # [iterator, destination list/dict, mode, variant (to finish) or tag, trail]
        iterator, destination, mode, owner, trail = stack[-1]
        for position, child in iterator:
            if mode == _RECORD:
                label, child = _field(child, destination, trail)
                child_trail: Trail = (trail, label)
            else:
                child_trail = (trail, (owner.tag, position) if mode == _VARIANT else position)
            if type(child) is dict and len(child) == 1:
                # the scalar kinds inline; containers (and errors) in _decode_node
                if "string" in child and type(child["string"]) is str:
                    decoded: Any = child["string"]
                elif "int" in child and type(child["int"]) is int and (
                        MIN_INT <= child["int"] <= MAX_INT):
                    decoded = child["int"]
                elif "float" in child and type(child["float"]) is float:
                    decoded = child["float"]
                elif "bool" in child and type(child["bool"]) is bool:
                    decoded = child["bool"]
                else:
                    decoded, frame = _decode_node(child, child_trail)
                    if frame is not None:
                        if mode == _RECORD:
                            destination[label] = decoded
                        else:
                            destination.append(decoded)
                        stack.append(frame)
                        break
            else:
                decoded, frame = _decode_node(child, child_trail)
            if mode == _RECORD:
                destination[label] = decoded
            else:
                destination.append(decoded)
        else:
            stack.pop()
            if mode == _VARIANT:
                owner.args = tuple(destination)
    return value


def _decode_node(node: Any, trail: Trail) -> tuple[Value, list[Any] | None]:
    """A node's value, and for a non-empty container the frame that fills it."""
    if type(node) is not dict or len(node) != 1:
        raise SnapshotError(spell(trail), _NODE_SHAPE)
    ((kind, payload),) = node.items()
    if kind == "int":
        if type(payload) is not int or not MIN_INT <= payload <= MAX_INT:
            raise SnapshotError(spell(trail), "an int node holds an integer in the 63-bit "
                                              f"range, not {_show_json(payload)}")
        return payload, None
    if kind == "string":
        if type(payload) is not str:
            raise SnapshotError(spell(trail), "a string node holds a JSON string, not "
                                              f"{_show_json(payload)}")
        return payload, None
    if kind == "float":
        return _decode_float(payload, trail), None
    if kind == "bool":
        if type(payload) is not bool:
            raise SnapshotError(spell(trail), "a bool node holds true or false, not "
                                              f"{_show_json(payload)}")
        return payload, None
    if kind == "unit":
        if payload is not None:
            raise SnapshotError(spell(trail), f"a unit node holds null, not {_show_json(payload)}")
        return None, None
    if kind == "array":
        if type(payload) is not list:
            raise SnapshotError(spell(trail), "an array node holds a JSON array of nodes, not "
                                              f"{_show_json(payload)}")
        elements: list[Value] = []
        return elements, ([iter(enumerate(payload)), elements, _ITEMS, None, trail]
                          if payload else None)
    if kind == "record":
        if type(payload) is not list:
            raise SnapshotError(spell(trail), 'a record node holds a JSON array of ["label", '
                                              f"node] pairs, not {_show_json(payload)}")
        record: dict[str, Value] = {}
        return record, ([iter(enumerate(payload)), record, _RECORD, None, trail]
                        if payload else None)
    if kind == "variant":
        if (type(payload) is not dict or set(payload) != {"tag", "args"}
                or type(payload["tag"]) is not str or type(payload["args"]) is not list):
            raise SnapshotError(spell(trail), 'a variant node holds {"tag": string, "args": '
                                              f"[node, ...]}}, not {_show_json(payload)}")
        variant = Variant(payload["tag"])
        args = payload["args"]
        return variant, ([iter(enumerate(args)), [], _VARIANT, variant, trail] if args else None)
    raise SnapshotError(spell(trail), f"{_NODE_SHAPE}; found the key {_show_json(kind)}")


def _field(field: Any, record: dict[str, Value], trail: Trail) -> tuple[str, Any]:
    """A record node's ``["label", node]`` pair, checked (shape, duplicate labels)."""
    if type(field) is not list or len(field) != 2 or type(field[0]) is not str:
        raise SnapshotError(spell(trail), 'a record node holds a JSON array of ["label", node] '
                                          f"pairs, not {_show_json(field)}")
    label = field[0]
    if label in record:
        raise SnapshotError(spell(trail),
                            f"duplicate record field {ocaml_quote(label)} in ChatML snapshot")
    return label, field[1]


def _decode_float(payload: Any, trail: Trail) -> float:
    if type(payload) is float:
        return payload
    if type(payload) is int:
        try:
            return float(payload)
        except OverflowError:
            pass
    elif payload == "nan":
        return math.nan
    elif payload == "inf":
        return math.inf
    elif payload == "-inf":
        return -math.inf
    raise SnapshotError(spell(trail), 'a float node holds a JSON number or "nan", "inf", "-inf", '
                                      f"not {_show_json(payload)}")


def _show_json(value: Any) -> str:
    try:
        text = json_text.dumps(value)
    except ValueError:
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def ocaml_quote(text: str) -> str:
    """``text`` in double quotes with OCaml string escaping (as the reference's messages show it)."""
    out = ['"']
    for char in text:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif char == "\r":
            out.append("\\r")
        elif char == "\b":
            out.append("\\b")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\{code:03d}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


# --------------------------------------------------------------------------- envelope and text


def dump(value: Value) -> dict[str, Any]:
    """``value`` in the versioned envelope ``{"format", "version", "value"}``."""
    return {"format": FORMAT, "version": VERSION, "value": encode(value)}


def load(envelope: Any) -> Value:
    """The value inside a versioned envelope made by :func:`dump`."""
    if type(envelope) is not dict or envelope.get("format") != FORMAT:
        raise SnapshotError("snapshot", f'expected an object with "format": "{FORMAT}"')
    version = envelope.get("version")
    if version != VERSION:
        raise SnapshotError("snapshot", f"unsupported ChatML snapshot version {_show_json(version)} "
                                        f"(this build reads version {VERSION})")
    if "value" not in envelope:
        raise SnapshotError("snapshot", 'missing "value"')
    return decode(envelope["value"])


def dumps(value: Value) -> str:
    """Strict JSON text of :func:`dump` (floats are written so that they read back exactly)."""
    return json_text.dumps(dump(value))


def loads(text: str) -> Value:
    """The value of JSON text made by :func:`dumps`; malformed text is a :class:`SnapshotError`."""
    try:
        envelope = json_text.parse(text, exact_integers=True, unique_keys=True)
    except json_text.JsonSyntaxError as error:
        raise SnapshotError("snapshot", f"not valid JSON: {error}") from None
    return load(envelope)
