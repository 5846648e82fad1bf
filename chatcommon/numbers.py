"""Integers from user-written digit strings, safe against CPython's int-conversion limit.

``int()`` refuses decimal text of more than 4,300 digits with a bare
``ValueError`` (``sys.get_int_max_str_digits``), which would surface as a
traceback wherever a number is read from a prompt, a program or a data file.
No number anywhere in the toolchain may be that long: every range checked
(63-bit ChatML ints, 64-bit sizes and counts, id lengths) fits in 20 digits.
So :func:`parse_int` treats a digit string with more significant digits than
:data:`MAX_DIGITS` as out of range -- it returns ``None`` *before* converting,
and the caller reports its usual out-of-range or invalid-value diagnostic.
Leading zeros and ``_`` separators do not count, so ``000…0001`` is still 1.

``float()`` has no such limit (a long digit string rounds to ``inf`` or ``0.0``,
which the callers already range-check), so only integers need this module.
"""

from __future__ import annotations

import sys

#: More significant digits than this are out of range everywhere (well under CPython's limit).
MAX_DIGITS = 4000
_LIMIT = sys.get_int_max_str_digits()  # 0 means no limit
assert _LIMIT == 0 or _LIMIT > MAX_DIGITS


class NumberTooLong(ValueError):
    """A digit string longer than :data:`MAX_DIGITS` significant digits (see :func:`int_or_raise`)."""


def parse_int(text: str | bytes, base: int = 10) -> int | None:
    """``int(text, base)``, or ``None`` when ``text`` has more than :data:`MAX_DIGITS` digits.

    ``text`` must be something ``int()`` accepts (callers validate the syntax
    first); a short string costs one length test on top of ``int()``.
    """
    if len(text) <= MAX_DIGITS:
        return int(text, base)
    body = text.decode("ascii") if isinstance(text, bytes) else text
    body = body.strip()
    sign = "-" if body.startswith("-") else ""
    digits = body.lstrip("+-").replace("_", "").lstrip("0")
    if len(digits) > MAX_DIGITS:
        return None
    return int(sign + (digits or "0"), base)


def int_or_raise(text: str) -> int:
    """:func:`parse_int`, raising :class:`NumberTooLong` instead of returning ``None``.

    For ``json.loads(..., parse_int=int_or_raise)``: the decoder's caller then
    sees a ``ValueError`` it can report like any other malformed number.
    """
    value = parse_int(text)
    if value is None:
        raise NumberTooLong(f"integer {text[:20]}... has more than {MAX_DIGITS} digits")
    return value


def abbreviate_digits(text: str, keep: int = 24) -> str:
    """``text`` shortened for a message: ``123456…(5000 digits)`` when longer than ``keep``."""
    if len(text) <= keep:
        return text
    return f"{text[:keep]}…({len(text)} characters)"
