"""Strict RFC 8259 JSON text: parsing to a neutral tree and writing it back (compact and pretty).

DECISIONS 3: ``Json.parse`` accepts exactly RFC 8259 JSON, and every JSON the
toolchain writes (``Json.stringify``/``Json.pretty``, JSON sent to hosts) is
strict: integral numbers are written ``7.0`` (never the reference's ``7.``)
and NaN/infinities cannot be written at all.

The neutral tree (:data:`JsonTree`) is what both directions share:

=============  ============================================================
JSON           Python
=============  ============================================================
``null``       ``None``
true/false     ``bool``
number         ``float`` on parsing (every JSON number is a double); the
               writer also takes ``int``
string         ``str``
array          ``list`` (the writer also takes ``tuple``)
object         :class:`JsonObject` -- a list of ``(key, value)`` pairs in
               document order, duplicate keys kept (the writer also takes
               ``dict``)
=============  ============================================================

Choices inside RFC 8259's latitude (documented in the README):

* numbers whose magnitude does not fit a double (``1e400``) are rejected
  (RFC 8259 section 6 lets a parser limit the range); underflow reads as 0;
* a ``\\u`` escape of a lone surrogate is accepted (the grammar allows it)
  and read as U+FFFD, so every parsed string is valid Unicode text;
* a byte-order mark is not whitespace and is rejected (section 8.1);
* numbers are written as the reference prints floats (:func:`fmt_float`:
  ``%.15g``, ``%.17g`` when needed to read back exactly), with ``.0`` where
  the reference writes a bare trailing dot: ``1.0``, ``0.1``, ``1e+20``,
  ``0.33333333333333331``. ``fmt_float`` lives here, and
  :mod:`chatml.stdlib.render` re-exports it for ``show``, so that this module
  depends on nothing else in the package.

Parsing runs Python's C decoder when the input is known to nest shallowly
enough for it and falls back to the hand-written iterative parser below for
deep input and for every error, so errors carry an exact line, column and a
message naming what was expected (:class:`JsonSyntaxError`). Neither parser
nor writer recurses in Python.
"""

from __future__ import annotations

import json
import math
import re
from itertools import accumulate
from json.encoder import encode_basestring
from typing import Any, Union

from chatcommon.allocation import gc_paused
from chatcommon.numbers import abbreviate_digits, parse_int


class JsonObject(list):
    """A JSON object: ``(key, value)`` pairs in document order (duplicate keys kept)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"JsonObject({list.__repr__(self)})"


JsonTree = Union[None, bool, float, int, str, list, JsonObject, dict]  # noqa: UP007
"""A JSON document as Python data (see the module table)."""


class JsonSyntaxError(ValueError):
    """The text is not RFC 8259 JSON; ``line``/``column`` are 1-based (columns count characters)."""

    def __init__(self, message: str, text: str, offset: int, hint: str | None = None) -> None:
        self.message = message
        self.offset = offset
        self.line = text.count("\n", 0, offset) + 1
        self.column = offset - (text.rfind("\n", 0, offset) + 1) + 1
        self.hint = hint
        super().__init__(str(self))

    def __str__(self) -> str:
        return f"line {self.line}, column {self.column}: {self.message}"


class JsonValueError(ValueError):
    """A tree that cannot be written as strict JSON; ``path`` is like ``$.a[2]``."""

    def __init__(self, message: str, path: str) -> None:
        self.message = message
        self.path = path
        super().__init__(f"{message} (at {path})")


# --------------------------------------------------------------------------- parsing

FAST_PATH_MAX_DEPTH = 2000
"""Input nesting at most this deep is decoded by Python's recursive C decoder (a few hundred
bytes of C stack per level, so far below any thread's stack; a ``RecursionError`` from a low
recursion limit just falls back to the precise parser)."""

_STRING_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_BRACKET_DELTA = {"[": 1, "{": 1, "]": -1, "}": -1}
# A \u escape of a lone surrogate: a high one not followed by a low one, or a
# low one not preceded by a high one. (An escaped backslash before "u" can
# match too; that only sends the text to the precise parser.)
_LONE_SURROGATE_ESCAPE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}")


class _Rejected(ValueError):
    """Raised inside the C decoder's hooks: let the precise parser report it."""


def _reject_constant(name: str) -> Any:
    raise _Rejected(name)


def _finite_float(token: str) -> float:
    value = float(token)
    if value - value != 0:  # an overflow to infinity
        raise _Rejected(token)
    return value


def parse(text: str, *, exact_integers: bool = False, unique_keys: bool = False) -> JsonTree:
    """Parse RFC 8259 JSON ``text`` into a tree, or raise :class:`JsonSyntaxError`.

    Every number becomes a ``float`` unless ``exact_integers`` is set, in which
    case numbers written without a fraction or exponent become ``int``
    (snapshots use this to keep 63-bit ints exact). With ``unique_keys``,
    objects become plain ``dict`` s and a repeated key is an error at its
    position (RFC 8259 leaves duplicates to the reader).
    """
    if _nests_shallowly(text) and not _may_hold_lone_surrogates(text):
        with gc_paused():
            try:
                return json.loads(text, parse_float=_finite_float,
                                  parse_int=int if exact_integers else _finite_float,
                                  parse_constant=_reject_constant,
                                  object_pairs_hook=_unique_dict if unique_keys else JsonObject)
            except (ValueError, RecursionError):
                pass  # the precise parser below reports the error
    with gc_paused():
        return _Parser(text, exact_integers, unique_keys).parse()


def _unique_dict(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise _Rejected("duplicate key")  # the precise parser says where
    return result


def is_valid(text: str) -> bool:
    """True iff :func:`parse` accepts ``text``."""
    try:
        parse(text)
    except JsonSyntaxError:
        return False
    return True


def _may_hold_lone_surrogates(text: str) -> bool:
    """A ``\\u`` escape of a lone surrogate may be in ``text`` (C's decoder would keep it)."""
    if "\\ud" not in text and "\\uD" not in text:  # a fast substring search first
        return False
    return _LONE_SURROGATE_ESCAPE.search(text) is not None


def _nests_shallowly(text: str) -> bool:
    if text.count("[") + text.count("{") <= FAST_PATH_MAX_DEPTH:
        return True
    brackets = _NOT_BRACKET.sub("", _STRING_TOKEN.sub("", text))
    deepest = max(accumulate(map(_BRACKET_DELTA.__getitem__, brackets)), default=0)
    return deepest <= FAST_PATH_MAX_DEPTH


_LITERALS = {"true": True, "false": False, "null": None}
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_PLAIN_CHARS = re.compile(r'[^"\\\x00-\x1f]*')
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_NUMBER_LIKE = re.compile(r"[-+0-9.eE]+")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_VALUE_START = "a JSON value (an object, array, string, number, true, false or null)"


class _Parser:
    """The precise, iterative RFC 8259 parser (error reporting and deep input)."""

    def __init__(self, text: str, exact_integers: bool = False, unique_keys: bool = False) -> None:
        self.text = text
        self.exact_integers = exact_integers
        self.unique_keys = unique_keys

    def fail(self, message: str, offset: int, hint: str | None = None) -> JsonSyntaxError:
        return JsonSyntaxError(message, self.text, offset, hint)

    def skip(self, offset: int) -> int:
        return _WHITESPACE.match(self.text, offset).end()  # type: ignore[union-attr]  # matches ''; never None

    def parse(self) -> JsonTree:
        text = self.text
        end = len(text)
        if text.startswith("\ufeff"):
            raise self.fail("a byte-order mark is not allowed in JSON text", 0,
                            "remove the leading U+FEFF character")
        # Each open container is [container, key-or-None] on ``stack``.
        stack: list[list[Any]] = []
        offset = self.skip(0)
        while True:
            value, offset, opened = self.value(offset)
            if opened is not None:
                stack.append(opened)
                continue
            while True:
                offset = self.skip(offset)
                if not stack:
                    if offset != end:
                        raise self.fail(f"unexpected {_describe(text, offset)} after the JSON value",
                                        offset, "a JSON text holds exactly one value")
                    return value
                frame = stack[-1]
                container = frame[0]
                is_object = type(container) is not list
                if type(container) is dict:
                    container[frame[1]] = value
                elif is_object:
                    container.append((frame[1], value))
                else:
                    container.append(value)
                closer = "}" if is_object else "]"
                char = text[offset:offset + 1]
                if char == ",":
                    offset = self.skip(offset + 1)
                    if text.startswith(closer, offset):
                        raise self.fail(f"expected {'a member' if is_object else 'a value'} after ','",
                                        offset, "trailing commas are not allowed in JSON")
                    if is_object:
                        frame[1], offset = self.key(offset, container)
                    break
                if char == closer:
                    offset += 1
                    value = container
                    stack.pop()
                    continue
                what = "member" if is_object else "element"
                raise self.fail(f"expected ',' or '{closer}' after an {'object' if is_object else 'array'} "
                                f"{what}, found {_describe(text, offset)}", offset)

    def value(self, offset: int) -> tuple[Any, int, list[Any] | None]:
        """Read a value at ``offset``: ``(value, end, None)``, or ``(None, after, frame)`` for a container."""
        text = self.text
        char = text[offset:offset + 1]
        if char == "{":
            offset = self.skip(offset + 1)
            container: Any = {} if self.unique_keys else JsonObject()
            if text.startswith("}", offset):
                return container, offset + 1, None
            key, offset = self.key(offset, container)
            return None, offset, [container, key]
        if char == "[":
            offset = self.skip(offset + 1)
            if text.startswith("]", offset):
                return [], offset + 1, None
            return None, offset, [[], None]
        if char == '"':
            string, offset = self.string(offset)
            return string, offset, None
        if char and char in "-0123456789+.":
            number, offset = self.number(offset)
            return number, offset, None
        word = _WORD.match(text, offset)
        if word is not None:
            name = word.group()
            if name in _LITERALS:
                return _LITERALS[name], word.end(), None
            raise self.fail(f"expected {_VALUE_START}, found '{name}'", offset, _word_hint(name))
        if char == "'":
            raise self.fail(f"expected {_VALUE_START}, found a single quote", offset,
                            "JSON strings use double quotes")
        raise self.fail(f"expected {_VALUE_START}, found {_describe(text, offset)}", offset)

    def key(self, offset: int, container: Any) -> tuple[str, int]:
        """Read ``"key" :`` at ``offset``; returns the key and the offset of its value."""
        text = self.text
        if not text.startswith('"', offset):
            hint = ("JSON object keys are strings in double quotes"
                    if _WORD.match(text, offset) or text.startswith("'", offset) else None)
            raise self.fail(f"expected a string key in double quotes, found {_describe(text, offset)}",
                            offset, hint)
        start = offset
        key, offset = self.string(offset)
        if type(container) is dict and key in container:
            raise self.fail(f"duplicate key {quote(key)} in an object", start,
                            "each key may appear once here")
        offset = self.skip(offset)
        if not text.startswith(":", offset):
            raise self.fail(f"expected ':' after an object key, found {_describe(text, offset)}",
                            offset)
        return key, self.skip(offset + 1)

    def string(self, offset: int) -> tuple[str, int]:
        text = self.text
        start = offset
        offset += 1
        parts: list[str] = []
        while True:
            plain = _PLAIN_CHARS.match(text, offset)
            assert plain is not None
            parts.append(plain.group())
            offset = plain.end()
            char = text[offset:offset + 1]
            if char == '"':
                return "".join(parts), offset + 1
            if not char:
                raise self.fail("unterminated string: expected a closing '\"'", start,
                                "the string starts here and runs to the end of the input")
            if char != "\\":
                raise self.fail(f"control character U+{ord(char):04X} must be escaped in a string",
                                offset, "write \\n, \\t, \\r or \\u00XX instead")
            escape = text[offset + 1:offset + 2]
            if escape in _ESCAPES:
                parts.append(_ESCAPES[escape])
                offset += 2
            elif escape == "u":
                code, offset = self.hex4(offset)
                if 0xD800 <= code <= 0xDBFF and text.startswith("\\u", offset):
                    low = _HEX4.match(text, offset + 2)
                    if low is not None and 0xDC00 <= int(low.group(), 16) <= 0xDFFF:
                        code = 0x10000 + ((code - 0xD800) << 10) + (int(low.group(), 16) - 0xDC00)
                        offset = low.end()
                parts.append("\ufffd" if 0xD800 <= code <= 0xDFFF else chr(code))
            else:
                shown = repr(escape)[1:-1] if escape else "end of input"
                raise self.fail(f"invalid escape '\\{shown}' in a string", offset,
                                'the escapes are \\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX')

    def hex4(self, offset: int) -> tuple[int, int]:
        digits = _HEX4.match(self.text, offset + 2)
        if digits is None:
            raise self.fail("invalid \\u escape: expected four hexadecimal digits", offset)
        return int(digits.group(), 16), digits.end()

    def number(self, offset: int) -> tuple[float | int, int]:
        text = self.text
        token = _NUMBER_LIKE.match(text, offset)
        assert token is not None
        strict = _NUMBER.match(text, offset)
        if strict is None or strict.end() != token.end():
            raise self.fail(f"invalid number '{token.group()}'", offset,
                            _number_hint(token.group()))
        digits = strict.group()
        if self.exact_integers and digits.lstrip("-").isdigit():
            integer = parse_int(digits)
            if integer is None:
                raise self.fail(f"integer {abbreviate_digits(digits)} is too long", offset)
            return integer, strict.end()
        value = float(digits)
        if math.isinf(value):
            raise self.fail(f"number {strict.group()} is too large for a double", offset,
                            "JSON numbers here must fit an IEEE double (about ±1.8e308)")
        return value, strict.end()


def _describe(text: str, offset: int) -> str:
    if offset >= len(text):
        return "the end of the input"
    char = text[offset]
    if char.isprintable() and not char.isspace():
        return f"'{char}'"
    return f"U+{ord(char):04X}"


def _word_hint(word: str) -> str | None:
    if word.lower() in _LITERALS:
        return f"JSON literals are lowercase: {word.lower()}"
    if word in ("NaN", "Infinity", "nan", "inf"):
        return "NaN and infinities are not JSON numbers"
    if word == "None":
        return "write null"
    return "strings must be in double quotes"


def _number_hint(token: str) -> str:
    body = token[1:] if token.startswith("-") else token
    if token.startswith("+"):
        return "a JSON number cannot start with '+'"
    if body.startswith("."):
        return "a JSON number needs a digit before the decimal point"
    if len(body) > 1 and body[0] == "0" and body[1].isdigit():
        return "leading zeros are not allowed in JSON numbers"
    if re.search(r"\.(?![0-9])", body):
        return "a JSON number needs a digit after the decimal point"
    if re.search(r"[eE][+-]?(?![0-9])", body):
        return "a JSON exponent needs digits"
    return "a JSON number is -?digits[.digits][(e|E)[+|-]digits]"


# --------------------------------------------------------------------------- writing

_DIGITS_AND_MINUS = frozenset("0123456789-")


def fmt_float(x: float) -> str:
    """The reference's float text (stdlib spec 1.6), shared by ``show`` and JSON numbers.

    ``%.15g``, else ``%.17g`` when that does not read back exactly, plus a
    ``.`` when the result is all digits: ``1.0 -> "1."``, ``-0.0 -> "-0."``,
    ``0.1 -> "0.1"``, ``1e20 -> "1e+20"``, ``nan``/``inf``/``-inf``.
    """
    text = format(x, ".15g")
    if float(text) != x and x == x:
        text = format(x, ".17g")
    if _DIGITS_AND_MINUS.issuperset(text):
        text += "."
    return text


def json_number(x: float) -> str:
    """The strict JSON text of a double: the reference's float text with ``.0`` for a bare ``.``."""
    text = fmt_float(x)
    if text[-1] == ".":
        return text + "0"
    if math.isinf(x) or math.isnan(x):
        raise ValueError(f"{text} is not a JSON number: NaN and infinities cannot be written as JSON")
    return text


_SURROGATE = re.compile("[\ud800-\udfff]")


def quote(text: str) -> str:
    """``text`` as a JSON string literal (``"`` and ``\\`` escaped, control characters as escapes)."""
    quoted = encode_basestring(text)
    if not quoted.isascii() and _SURROGATE.search(quoted) is not None:
        quoted = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)
    return quoted


def dumps(tree: JsonTree, *, pretty: bool = False) -> str:
    """Strict JSON text of ``tree``: compact (no whitespace) or pretty (two-space indents).

    Raises :class:`JsonValueError` for NaN/infinities and for Python values
    that have no JSON form.
    """
    try:
        with gc_paused():
            return _write(tree, pretty)
    except (ValueError, TypeError):
        raise _value_error(tree) from None


def _scalar_text(item: Any) -> str | None:
    """The JSON text of a scalar, ``None`` for a container; ``TypeError`` for anything else."""
    kind = type(item)
    if kind is str:
        return quote(item)
    if kind is float:
        return json_number(item)
    if item is None:
        return "null"
    if kind is bool:
        return "true" if item else "false"
    if kind is int:
        return str(item)
    if kind is list or kind is JsonObject or kind is dict or kind is tuple:
        return None
    raise TypeError(kind.__name__)


def _write(tree: JsonTree, pretty: bool) -> str:
    text = _scalar_text(tree)
    if text is not None:
        return text
    out: list[str] = []
    emit = out.append
    # A frame: [iterator over children, is_object, closing text, separator, member prefix].
    stack: list[list[Any]] = []
    frame = _open(tree, 0, pretty, emit)
    if frame is None:
        return "".join(out)
    stack.append(frame)
    depth = 1
    while stack:
        iterator, is_object, closer, separator = stack[-1]
        for position, child in iterator:
            if is_object:
                key, child = child
                if type(key) is not str:
                    raise TypeError("object key")
                emit((separator[1] if position else separator[0]) + quote(key)
                     + (": " if pretty else ":"))
            else:
                emit(separator[1] if position else separator[0])
            kind = type(child)
            if kind is str:
                emit(quote(child))
            elif kind is float:
                emit(json_number(child))
            elif child is None:
                emit("null")
            elif kind is bool:
                emit("true" if child else "false")
            elif kind is int:
                emit(str(child))
            else:
                frame = _open(child, depth, pretty, emit)
                if frame is not None:
                    stack.append(frame)
                    depth += 1
                    break
        else:
            stack.pop()
            depth -= 1
            emit(closer)
    return "".join(out)


def _open(container: Any, depth: int, pretty: bool, emit: Any) -> list[Any] | None:
    """Emit a container's opening bracket; its frame, or ``None`` when it is empty."""
    kind = type(container)
    is_object = kind is JsonObject or kind is dict
    if not is_object and kind is not list and kind is not tuple:
        raise TypeError(kind.__name__)
    if not container:
        emit("{}" if is_object else "[]")
        return None
    emit("{" if is_object else "[")
    children = container.items() if kind is dict else container
    if pretty:
        gap = "\n" + "  " * (depth + 1)
        separators = (gap, "," + gap)
        closer = "\n" + "  " * depth + ("}" if is_object else "]")
    else:
        separators = ("", ",")
        closer = "}" if is_object else "]"
    return [iter(enumerate(children)), is_object, closer, separators]


def _value_error(tree: JsonTree) -> JsonValueError:
    """Find the first value in ``tree`` that has no strict JSON form and describe it."""
    pending: list[tuple[Any, str]] = [(tree, "$")]
    while pending:
        item, path = pending.pop()
        kind = type(item)
        if kind is float and (math.isinf(item) or math.isnan(item)):
            return JsonValueError(f"{fmt_float(item)} is not a JSON number: NaN and infinities "
                                  "cannot be written as JSON", path)
        if kind is list or kind is tuple:
            pending.extend((child, f"{path}[{i}]") for i, child in reversed(list(enumerate(item))))
        elif kind is JsonObject or kind is dict:
            pairs = list(item.items()) if kind is dict else item
            for key, child in reversed(pairs):
                if type(key) is not str:
                    return JsonValueError(f"object keys must be strings, not {type(key).__name__}",
                                          path)
                pending.append((child, f"{path}.{key}"))
        elif kind not in (str, float, int, bool) and item is not None:
            return JsonValueError(f"a Python {kind.__name__} has no JSON form", path)
    return JsonValueError("the value has no JSON form", "$")
