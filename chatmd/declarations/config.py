"""``<config/>`` (spec §4.1): model settings; the first in expanded document order wins.

Lenient: unknown attributes (``show``, ...) and children are ignored. Numbers
are validated in *every* ``<config>``: ``max_tokens`` is an integer (optional
sign, decimal digits, ``_`` separators, within the reference's 63-bit range),
``temperature`` a finite decimal float literal; anything else is
``chatmd.invalid_attribute_value`` at the attribute. ``show_tool_call`` is a
presence flag (any value, even ``"false"``, turns it on). ``reasoning_effort``
is validated when a request is built.
"""

from __future__ import annotations

import re

from chatcommon.numbers import parse_int
from chatmd.ast import Element
from chatmd.declarations.attributes import lenient
from chatmd.declarations.context import LoweringContext
from chatmd.ir import Config
from chatmd.provenance import Provenance

_INTEGER = re.compile(r"[+-]?[0-9][0-9_]*\Z")
_FLOAT = re.compile(r"[+-]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)(?:[eE][+-]?[0-9][0-9_]*)?\Z")
_INT_MIN = -(2**62)
_INT_MAX = 2**62 - 1


def parse_integer(text: str) -> int | None:
    """``text`` as a config integer, or None when it is not one."""
    if not _INTEGER.match(text):
        return None
    value = parse_int(text.replace("_", ""))
    return value if value is not None and _INT_MIN <= value <= _INT_MAX else None


def parse_float(text: str) -> float | None:
    """``text`` as a config float literal (finite), or None when it is not one."""
    if not _FLOAT.match(text):
        return None
    value = float(text.replace("_", ""))
    return value if value not in (float("inf"), float("-inf")) else None


def lower_config(element: Element, provenance: Provenance, ctx: LoweringContext) -> Config:
    """The :class:`~chatmd.ir.Config` of one ``<config/>``; invalid numbers are reported and unset."""
    values = lenient(element)
    max_tokens = None
    temperature = None
    if "max_tokens" in values:
        max_tokens = parse_integer(values["max_tokens"])
        if max_tokens is None:
            _invalid(element, "max_tokens", values["max_tokens"], "an integer such as 1024", ctx)
    if "temperature" in values:
        temperature = parse_float(values["temperature"])
        if temperature is None:
            _invalid(element, "temperature", values["temperature"], "a number such as 0.2", ctx)
    return Config(values.get("model"), max_tokens, temperature, values.get("reasoning_effort"),
                  values.get("id"), "show_tool_call" in values, provenance)


def _invalid(element: Element, name: str, value: str, expected: str,
             ctx: LoweringContext) -> None:
    ctx.error(ctx.attribute_span(element, name), "chatmd.invalid_attribute_value",
              f"invalid value \"{value}\" for `{name}` on <config>: expected {expected}",
              path=("config", name))
