"""Runtime equality of ChatML values (``==`` / ``!=``, language spec 5.6).

Structural for ints, floats (IEEE: ``0.0 == -0.0``, NaN is unequal to
itself), bools, strings, unit, variants (same tag, same payload count,
payloads pairwise equal) and records (same labels, values pairwise equal);
by identity for arrays, refs, closures, builtins, modules and tasks. Values
of different kinds are unequal.

Only records and variants are compared structurally, and both are immutable,
so the comparison always terminates; it runs on an explicit work list, so a
long variant-encoded list compares without deep Python recursion. There is no
identity shortcut for records and variants: a NaN inside makes even the same
value unequal to itself.
"""

from __future__ import annotations

from typing import Any

from chatml.values import Value, Variant

_SCALARS = (int, float, str, bool)


def values_equal(left: Value, right: Value) -> bool:
    """``left == right`` in ChatML."""
    kind = type(left)
    if kind is not type(right):
        return False
    if kind in _SCALARS:
        return bool(left == right)
    if kind is dict or kind is Variant:
        return _compound_equal(left, right)
    return left is right


def _compound_equal(left: Value, right: Value) -> bool:
    pending: list[Any] = [left, right]
    pop = pending.pop
    while pending:
        b = pop()
        a = pop()
        kind = type(a)
        if kind is not type(b):
            return False
        if kind in _SCALARS:
            if a != b:
                return False
        elif kind is Variant:
            if a.tag != b.tag or len(a.args) != len(b.args):
                return False
            for x, y in zip(a.args, b.args, strict=True):
                pending.append(x)
                pending.append(y)
        elif kind is dict:
            if len(a) != len(b):
                return False
            for label, x in a.items():
                if label not in b:
                    return False
                pending.append(x)
                pending.append(b[label])
        elif a is not b:
            return False
    return True
