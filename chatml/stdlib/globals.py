"""The global builtins of the core surface (stdlib spec 3, language spec 5.10).

``print``, ``to_string``, ``length``, ``string_length``, ``string_is_empty``,
``array_copy``, ``record_keys``, ``variant_tag``, ``swap_ref``, ``fail`` and
``hash_md5``. Lengths count code points (DECISIONS 1); ``hash_md5`` digests
the string's UTF-8 bytes.
"""

from __future__ import annotations

import hashlib

from chatml import calls
from chatml.limits import METER, WORD
from chatml.registration import implements
from chatml.stdlib.checks import STRING_COST, charge_array, charge_scan, charge_string, shape
from chatml.stdlib.render import show
from chatml.values import REF_TYPES, ChatMLFailure, Module, Value, Variant


def _charge_rendering(chars: int, pieces: int) -> None:
    """Rendering builds ``pieces`` strings of ``chars`` characters in all: charge them."""
    calls.charge_memory(STRING_COST * pieces + chars)
    calls.charge_steps(pieces // RENDER_PIECES_PER_STEP)


def render_charged(value: Value) -> str:
    """``show(value)`` charged to the run's budgets as it grows (a huge value stops the run)."""
    return show(value, charge=_charge_rendering)


RENDER_PIECES_PER_STEP = 64
"""``print``/``to_string`` of a compound value charge one step per this many rendered pieces."""


@implements("print")
def print_(value: Value) -> None:
    calls.emit_output(render_charged(value) + "\n")


@implements("to_string", inline="to_string")
def to_string(value: Value) -> str:
    kind = type(value)
    if kind is int:  # the common case, inlined: show(value) charged as charge_string does
        text = str(value)
        meter = METER
        meter.memory -= (STRING_COST + len(text) + WORD - 1) // WORD
        if meter.memory < 0:
            meter.out_of_memory()
        return text
    if kind is str:
        return value  # show returns the string itself: nothing new to charge
    if kind is float or kind is bool:  # a new (short) string
        return charge_string(show(value))
    return render_charged(value)  # compound values were charged piece by piece


@implements("length", inline="array_length")
def length(array: Value) -> int:
    if type(array) is not list:
        raise shape("length", "an array")
    return len(array)


@implements("string_length", inline="string_length")
def string_length(text: Value) -> int:
    if type(text) is not str:
        raise shape("string_length", "a string")
    return len(text)


@implements("string_is_empty")
def string_is_empty(text: Value) -> bool:
    if type(text) is not str:
        raise shape("string_is_empty", "a string")
    return not text


@implements("array_copy")
def array_copy(array: Value) -> list[Value]:
    if type(array) is not list:
        raise shape("array_copy", "an array")
    charge_array(len(array))
    return array.copy()


@implements("record_keys")
def record_keys(record: Value) -> list[str]:
    if type(record) is not dict and type(record) is not Module:
        raise shape("record_keys", "a record or module")
    charge_array(len(record))
    return sorted(record)


@implements("variant_tag")
def variant_tag(variant: Value) -> str:
    if type(variant) is not Variant:
        raise shape("variant_tag", "a variant")
    return variant.tag


@implements("swap_ref")
def swap_ref(cell: Value, new: Value) -> Value:
    if type(cell) not in REF_TYPES:
        raise shape("swap_ref", "a ref")
    calls.journal_ref(cell)
    old = cell.value
    cell.value = new
    return old


@implements("fail")
def fail(message: Value) -> Value:
    if type(message) is not str:
        raise shape("fail", "a string")
    raise ChatMLFailure(message)


@implements("hash_md5")
def hash_md5(text: Value) -> str:
    if type(text) is not str:
        raise shape("hash_md5", "a string")
    charge_scan(len(text))
    return hashlib.md5(text.encode("utf-8", "surrogatepass")).hexdigest()
