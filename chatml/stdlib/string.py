"""The ``String`` module (stdlib spec 4.1) over Unicode text.

DECISIONS 1: lengths, indices and slices count code points, and case changes
are Unicode-aware (Python's ``str.upper``/``str.lower``, so ``"straße"``
upper-cases to ``"STRASSE"``). ``String.trim`` strips the six ASCII
whitespace characters of the reference (space, tab, LF, CR, VT, FF) and
nothing else. Shape errors name the qualified function, as the spec lists.
"""

from __future__ import annotations

from chatml.registration import implements
from chatml.stdlib.checks import (
    STRING_COST,
    charge_array,
    charge_scan,
    charge_string,
    charge_text,
    shape,
)
from chatml.values import ChatMLFailure, Value, Variant

ASCII_WHITESPACE = " \t\n\r\x0b\x0c"
NONE = Variant("None")


def _strings(qualified: str, *values: Value) -> None:
    for value in values:
        if type(value) is not str:
            raise shape(qualified, "a string")


@implements("String.length", inline="string_length")
def length(text: Value) -> int:
    if type(text) is not str:
        raise shape("String.length", "a string")
    return len(text)


@implements("String.is_empty")
def is_empty(text: Value) -> bool:
    if type(text) is not str:
        raise shape("String.is_empty", "a string")
    return not text


@implements("String.concat")
def concat(left: Value, right: Value) -> str:
    _strings("String.concat", left, right)
    return charge_string(left + right)


@implements("String.equal")
def equal(left: Value, right: Value) -> bool:
    _strings("String.equal", left, right)
    return bool(left == right)


@implements("String.contains")
def contains(text: Value, needle: Value) -> bool:
    _strings("String.contains", text, needle)
    charge_scan(len(text))
    return needle in text


@implements("String.starts_with")
def starts_with(text: Value, prefix: Value) -> bool:
    _strings("String.starts_with", text, prefix)
    return bool(text.startswith(prefix))


@implements("String.ends_with")
def ends_with(text: Value, suffix: Value) -> bool:
    _strings("String.ends_with", text, suffix)
    return bool(text.endswith(suffix))


@implements("String.trim")
def trim(text: Value) -> str:
    _strings("String.trim", text)
    return charge_string(text.strip(ASCII_WHITESPACE))


@implements("String.to_upper")
def to_upper(text: Value) -> str:
    _strings("String.to_upper", text)
    return charge_string(text.upper())


@implements("String.to_lower")
def to_lower(text: Value) -> str:
    _strings("String.to_lower", text)
    return charge_string(text.lower())


@implements("String.slice")
def slice_(text: Value, start: Value, count: Value) -> str:
    if type(text) is not str:
        raise shape("String.slice", "a string")
    if type(start) is not int or type(count) is not int:
        raise shape("String.slice", "an int")
    if start < 0 or count < 0:
        raise ChatMLFailure("String.slice: start and len must be non-negative")
    if start > len(text):
        raise ChatMLFailure("String.slice: start out of bounds")
    if start + count > len(text):
        raise ChatMLFailure("String.slice: start+len out of bounds")
    return charge_string(text[start:start + count])


@implements("String.find")
def find(text: Value, pattern: Value) -> Variant:
    _strings("String.find", text, pattern)
    charge_scan(len(text))
    index = text.find(pattern)
    return NONE if index < 0 else Variant("Some", (index,))


@implements("String.split")
def split(text: Value, separator: Value) -> list[str]:
    _strings("String.split", text, separator)
    if not separator:
        raise ChatMLFailure("String.split: separator must be non-empty")
    charge_scan(len(text))
    count = text.count(separator) + 1
    charge_array(count)
    charge_text(STRING_COST * count + len(text))
    return text.split(separator)


@implements("String.replace_all")
def replace_all(text: Value, pattern: Value, replacement: Value) -> str:
    _strings("String.replace_all", text, pattern, replacement)
    if not pattern:
        raise ChatMLFailure("String.replace_all: pattern must be non-empty")
    charge_scan(len(text))
    occurrences = text.count(pattern)
    # charge before building, so that a huge result stops the run instead of the process
    charge_text(STRING_COST + len(text) + occurrences * (len(replacement) - len(pattern)))
    return text.replace(pattern, replacement)
