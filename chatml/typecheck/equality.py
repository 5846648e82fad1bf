"""Which types ``==`` and ``!=`` accept (spec 4.13).

Accepted: primitives, type variables, and tuples/records/variants all of whose
known components are accepted (every field, every payload of every known
constructor), recursive types included. Rejected: arrays, refs, functions and
tasks -- their runtime equality would be identity, which the static check
rules out at the comparison site (a polymorphic helper can still compare them
at run time, Q15).
"""

from __future__ import annotations

from chatcommon.sources import Span
from chatml.typecheck import errors
from chatml.typecheck.checker import Checker
from chatml.typecheck.types import (
    TASK,
    TArray,
    TConstr,
    TFun,
    TMu,
    TRecord,
    TRef,
    TTuple,
    TVariant,
    Type,
    flatten_row,
    resolve,
)

_REJECTED = {
    TArray: "arrays",
    TRef: "refs",
    TFun: "functions",
}


def unsupported_equality(t: Type) -> str | None:
    """The rejected kind (``"arrays"``...) found in ``t`` first, or None if ``t`` is comparable."""
    seen: set[int] = set()
    stack = [t]
    while stack:
        node = resolve(stack.pop())
        kind = _REJECTED.get(type(node))
        if kind is not None:
            return kind
        if isinstance(node, TConstr):
            return "Task values" if node.name == TASK else node.name + " values"
        key = id(node)
        if key in seen:
            continue
        if isinstance(node, (TRecord, TVariant)):
            seen.add(key)
            fields, _ = flatten_row(node.row)
            stack.extend(fields[label] for label in sorted(fields, reverse=True))
        elif isinstance(node, TTuple):
            seen.add(key)
            stack.extend(reversed(node.elems))
        elif isinstance(node, TMu):
            seen.add(key)
            stack.append(node.unfold())
    return None


def check_equality(ck: Checker, t: Type, span: Span) -> None:
    kind = unsupported_equality(t)
    if kind is not None:
        if kind == "Task values":
            message = "Equality is not supported for Task values"
        else:
            message = f"Equality is not supported for {kind}"
        ck.fail(span, errors.EQUALITY_UNSUPPORTED, message,
                hint="== compares data: ints, floats, bools, strings, unit, records and variants "
                     "of those")
