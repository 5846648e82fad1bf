"""The versioned on-disk bytecode format: serialise and (strictly) deserialise.

Layout: the magic ``b"CHATMLBC"``, the format version as two big-endian
bytes, then zlib-compressed UTF-8 JSON of the module. Constants are JSON
values with three extensions: a float is ``{"f": repr}`` (so ``1.0`` stays a
float and NaN/infinities survive), a tuple is a JSON array (constants
have no lists), and a tuple nested deeper than :data:`NESTED_CONST_DEPTH` is
``{"postfix": [...]}``, a flat postfix list (scalars pushed, ``{"t": n}``
makes a tuple of the last ``n`` values), so no reader or writer recurses with
the program's nesting. Reading validates everything -- magic, version, field
types, opcodes, operand ranges, the line table -- and raises
:class:`BytecodeFormatError` for anything else, so a corrupt or foreign file
is never half-loaded.
"""

from __future__ import annotations

import json
import math
import zlib
from typing import Any

from chatcommon.numbers import int_or_raise
from chatml.bytecode.code import FORMAT_VERSION, CodeObject, CompiledModule
from chatml.bytecode.opcodes import OPERANDS, Op

MAGIC = b"CHATMLBC"


class BytecodeFormatError(Exception):
    """The bytes are not a valid bytecode file of this format version."""


#: Tuple constants nested at most this deep are written as nested JSON arrays; deeper ones
#: (a pattern nested thousands of levels) as one flat postfix array, so that neither
#: writing nor reading the JSON recurses with the program's nesting.
NESTED_CONST_DEPTH = 32
_POSTFIX = "postfix"
_TUPLE = "t"


def _tuple_depth(value: tuple[Any, ...], limit: int) -> int:
    """How deep tuples nest in ``value`` (1 for a flat tuple), counting no further than ``limit``."""
    deepest = 0
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                return deepest
        pending.extend((child, depth + 1) for child in item if isinstance(child, tuple))
    return deepest


def _encode_scalar(value: object) -> Any:
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return {"f": repr(value)}
    raise TypeError(f"constant of unsupported type {type(value).__name__}")


def _encode_nested(value: object) -> Any:
    """Nested JSON arrays (recursion bounded by :data:`NESTED_CONST_DEPTH`)."""
    if isinstance(value, tuple):
        return [_encode_nested(item) for item in value]
    return _encode_scalar(value)


def _encode_postfix(value: tuple[Any, ...]) -> list[Any]:
    """``value`` in postfix: scalars are pushed; ``{"t": n}`` pops ``n`` items into a tuple."""
    out: list[Any] = []
    pending: list[tuple[bool, Any]] = [(False, value)]
    while pending:
        done, item = pending.pop()
        if done:
            out.append({_TUPLE: len(item)})
        elif isinstance(item, tuple):
            pending.append((True, item))
            pending.extend((False, child) for child in reversed(item))
        else:
            out.append(_encode_scalar(item))
    return out


def _encode_const(value: object) -> Any:
    if not isinstance(value, tuple):
        return _encode_scalar(value)
    if _tuple_depth(value, NESTED_CONST_DEPTH) <= NESTED_CONST_DEPTH:
        return _encode_nested(value)
    return {_POSTFIX: _encode_postfix(value)}


def _decode_float(text: Any) -> float:
    if not isinstance(text, str):
        raise BytecodeFormatError(f"bad float constant {text!r}")
    try:
        number = float(text)
    except ValueError:
        raise BytecodeFormatError(f"bad float constant {text!r}") from None
    if repr(number) != text and not math.isnan(number):
        raise BytecodeFormatError(f"bad float constant {text!r}")
    return number


def _decode_postfix(items: Any) -> object:
    _expect(isinstance(items, list), "bad postfix constant")
    stack: list[object] = []
    for item in items:
        if isinstance(item, dict) and set(item) == {_TUPLE}:
            count = _int(item[_TUPLE], "postfix tuple size", 0, len(stack) + 1)
            values = tuple(stack[len(stack) - count:])
            del stack[len(stack) - count:]
            stack.append(values)
        elif isinstance(item, list):
            raise BytecodeFormatError("bad postfix constant: nested array")
        else:
            stack.append(_decode_const(item))
    _expect(len(stack) == 1 and isinstance(stack[0], tuple), "bad postfix constant")
    return stack[0]


def _decode_const(value: Any) -> object:
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, list):
        return tuple(_decode_const(item) for item in value)
    if isinstance(value, dict) and set(value) == {"f"}:
        return _decode_float(value["f"])
    if isinstance(value, dict) and set(value) == {_POSTFIX}:
        return _decode_postfix(value[_POSTFIX])
    raise BytecodeFormatError(f"bad constant {value!r}")


def serialize(module: CompiledModule) -> bytes:
    """The bytes of ``module`` in the current format."""
    body = {
        "source_name": module.source_name,
        "source_hash": module.source_hash,
        "surface": module.surface,
        "consts": [_encode_const(c) for c in module.consts],
        "global_names": list(module.global_names),
        "builtin_slots": [list(pair) for pair in module.builtin_slots],
        "codes": [
            {
                "name": code.name,
                "arity": code.arity,
                "n_locals": code.n_locals,
                "captures": [list(c) for c in code.captures],
                "code": [x for instruction in code.instructions for x in instruction],
                "lines": [x for position in code.positions for x in position],
                "self_loop": code.self_loop,
                "may_bounce": code.may_bounce,
                "parent": code.parent,
            }
            for code in module.codes
        ],
    }
    text = json.dumps(body, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return MAGIC + FORMAT_VERSION.to_bytes(2, "big") + zlib.compress(text.encode("utf-8"), 6)


def read_version(data: bytes) -> int | None:
    """The format version of ``data``, or ``None`` when it is not bytecode at all."""
    if len(data) < len(MAGIC) + 2 or not data.startswith(MAGIC):
        return None
    return int.from_bytes(data[len(MAGIC):len(MAGIC) + 2], "big")


def is_bytecode(data: bytes) -> bool:
    return data.startswith(MAGIC)


def _expect(condition: bool, what: str) -> None:
    if not condition:
        raise BytecodeFormatError(what)


def _int(value: Any, what: str, low: int = 0, high: int | None = None) -> int:
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= low
    _expect(ok and (high is None or value < high), f"bad {what}: {value!r}")
    return int(value)


def _str(value: Any, what: str) -> str:
    _expect(isinstance(value, str), f"bad {what}")
    return str(value)


def deserialize(data: bytes) -> CompiledModule:
    """Parse and validate bytecode; :class:`BytecodeFormatError` if it is not valid."""
    version = read_version(data)
    if version is None:
        raise BytecodeFormatError("not a ChatML bytecode file (bad magic)")
    if version != FORMAT_VERSION:
        raise BytecodeFormatError(
            f"bytecode format version {version} is not supported (expected {FORMAT_VERSION})")
    try:
        text = zlib.decompress(data[len(MAGIC) + 2:]).decode("utf-8")
        body = json.loads(text, parse_int=int_or_raise)
    except (zlib.error, UnicodeDecodeError, ValueError, RecursionError) as error:
        raise BytecodeFormatError(f"corrupt bytecode body: {error}") from None
    _expect(isinstance(body, dict), "bytecode body is not an object")
    try:
        return _module(body)
    except (KeyError, TypeError, ValueError, RecursionError) as error:
        raise BytecodeFormatError(f"malformed bytecode: {error!r}") from None


def _module(body: dict[str, Any]) -> CompiledModule:
    consts = tuple(_decode_const(c) for c in body["consts"])
    global_names = tuple(_str(n, "global name") for n in body["global_names"])
    n_globals = len(global_names)
    builtin_slots = tuple((_int(s, "builtin slot", 0, n_globals), _str(n, "builtin name"))
                          for s, n in body["builtin_slots"])
    raw_codes = body["codes"]
    _expect(isinstance(raw_codes, list) and bool(raw_codes), "no code objects")
    n_codes = len(raw_codes)
    codes = tuple(_code(raw, consts, n_globals, n_codes) for raw in raw_codes)
    return CompiledModule(
        source_name=_str(body["source_name"], "source name"),
        source_hash=_str(body["source_hash"], "source hash"),
        surface=_str(body["surface"], "surface"),
        consts=consts,
        codes=codes,
        global_names=global_names,
        builtin_slots=builtin_slots,
    )


_OPCODES = {int(op) for op in Op}


def _code(raw: dict[str, Any], consts: tuple[object, ...], n_globals: int,
          n_codes: int) -> CodeObject:
    n_locals = _int(raw["n_locals"], "local count")
    arity = _int(raw["arity"], "arity", 0, n_locals + 1)
    flat = raw["code"]
    lines = raw["lines"]
    _expect(isinstance(flat, list) and len(flat) % 3 == 0, "bad instruction array")
    _expect(isinstance(lines, list) and len(lines) == len(flat) // 3 * 4,
            "line table does not cover every instruction")
    limits = {"k": len(consts), "s": n_locals, "g": n_globals, "c": n_codes}
    instructions = []
    for index in range(0, len(flat), 3):
        opcode = _int(flat[index], "opcode")
        _expect(opcode in _OPCODES, f"unknown opcode {opcode}")
        a = _int(flat[index + 1], "operand")
        b = _int(flat[index + 2], "operand")
        for name, value in zip(OPERANDS[Op(opcode)], (a, b), strict=False):
            if name in limits:
                _expect(value < limits[name], f"{Op(opcode).name} operand {value} out of range")
        instructions.append((opcode, a, b))
    positions = tuple(
        tuple(_int(v, "line table entry") for v in lines[i:i + 4]) for i in range(0, len(lines), 4)
    )
    captures = tuple((_int(k, "capture kind", 0, 2), _int(i, "capture index"))
                     for k, i in raw["captures"])
    flags = (raw["self_loop"], raw["may_bounce"])
    _expect(all(isinstance(f, bool) for f in flags), "bad code flags")
    return CodeObject(
        name=_str(raw["name"], "code name"),
        arity=arity,
        n_locals=n_locals,
        captures=captures,
        instructions=tuple(instructions),
        positions=positions,  # type: ignore[arg-type]  # 4-int tuples: lines is checked a multiple of 4
        self_loop=flags[0],
        may_bounce=flags[1],
        parent=_int(raw["parent"], "parent", -1, n_codes),
    )
