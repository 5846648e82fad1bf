"""Match exhaustiveness and typed redundancy (spec 4.12, steps 4 and 5).

Run after every arm was typed, on the scrutinee's type then:

* exhaustiveness (skipped when an arm is a catch-all): ``bool`` needs both
  literals, a variant every known constructor *fully covered* (a tag pattern
  of the right arity whose sub-patterns are total) -- and is then closed, so
  callers cannot pass other tags; ``int``/``float``/``string`` need ``_``;
  ``unit`` needs ``()``; a record needs a total record pattern. Errors point
  at the whole ``match``. DECISIONS 6a keeps every such case a static error:
  a checked program never fails a match at run time.
* redundancy: a catch-all after both booleans, after ``()``, or after every
  constructor of a closed variant; a tag arm after one that fully covered it.
  Errors point at the redundant arm's pattern.
"""

from __future__ import annotations

from chatml import ast
from chatml.typecheck import errors
from chatml.typecheck.checker import Checker
from chatml.typecheck.exactness import rely, root
from chatml.typecheck.pattern_display import show_pattern
from chatml.typecheck.types import (
    BOOL,
    FLOAT,
    INT,
    ROW_EMPTY,
    STRING,
    UNIT,
    RowEmpty,
    TError,
    TMu,
    TRecord,
    TTuple,
    TVar,
    TVariant,
    Type,
    flatten_row,
    resolve,
)
from chatml.typecheck.unify import UnifyError, unify


def expose(t: Type) -> Type:
    """``t`` resolved, with explicit recursive types unfolded."""
    if type(t) is TVar:
        t = resolve(t)
    while isinstance(t, TMu):
        t = resolve(t.unfold())
    return t


def _is_catch_all(pattern: ast.Pattern) -> bool:
    return type(pattern) is ast.PWildcard or type(pattern) is ast.PVar


def is_total(pattern: ast.Pattern, t: Type) -> bool:
    """Whether ``pattern`` matches every value of type ``t``."""
    kind = type(pattern)
    if kind is ast.PWildcard or kind is ast.PVar or kind is ast.PUnit:
        return True
    if type(pattern) is ast.PRecord:
        return _total_record(pattern, t)
    return False


def _total_record(pattern: ast.PRecord, t: Type) -> bool:
    record = expose(t)
    if not isinstance(record, TRecord):
        return False
    fields, tail = flatten_row(record.row)
    for field in pattern.fields:
        field_type = fields.get(field.label)
        if field_type is None or not is_total(field.pattern, field_type):
            return False
    if pattern.is_open:
        return True
    # A closed pattern matches only records with exactly its fields (DECISIONS 6a).
    return (isinstance(tail, RowEmpty) and {f.label for f in pattern.fields} == set(fields)
            and rely(record.exact))


def _covers(pattern: ast.Pattern, tag: str, payload: Type) -> bool:
    if type(pattern) is not ast.PVariant or pattern.tag != tag:
        return False
    if type(payload) is TVar and payload.link is not None:
        payload = resolve(payload)
    components = payload.elems if isinstance(payload, TTuple) else (payload,)
    args = pattern.args
    if len(args) != len(components):
        return False
    for index, arg in enumerate(args):  # (a loop, not all() of a generator: cheaper)
        if type(arg) is ast.PVar or type(arg) is ast.PWildcard:
            continue  # total, without a call
        if not is_total(arg, components[index]):
            return False
    return True


def _missing_case(tag: str, payload: Type) -> str:
    payload = resolve(payload)
    count = len(payload.elems) if isinstance(payload, TTuple) else 1
    if count == 0:
        return f"`{tag}"
    return f"`{tag}(" + ", ".join(["_"] * count) + ")"


def check_exhaustive(ck: Checker, match: ast.Match, scrutinee: Type) -> None:
    patterns = [arm.pattern for arm in match.arms]
    # (plain loops here, not any() over generators: this runs for every match)
    for pattern in patterns:
        if type(pattern) is ast.PWildcard or type(pattern) is ast.PVar:
            return  # a catch-all arm
    t = expose(scrutinee)
    if t is BOOL:
        values = {p.value for p in patterns if isinstance(p, ast.PBool)}
        missing = [name for name, value in (("true", True), ("false", False))
                   if value not in values]
        if len(missing) == 2:
            _fail(ck, match, "Non-exhaustive boolean match: missing cases 'true' and 'false'")
        elif missing:
            _fail(ck, match, f"Non-exhaustive boolean match: missing case '{missing[0]}'")
    elif isinstance(t, TVariant):
        fields, tail = flatten_row(t.row)
        by_tag: dict[str, list[ast.Pattern]] = {}  # (one pass: a match may have 10,000 arms)
        for pattern in patterns:
            if type(pattern) is ast.PVariant:
                by_tag.setdefault(pattern.tag, []).append(pattern)
        for tag in sorted(fields):
            payload = fields[tag]
            for pattern in by_tag.get(tag, ()):
                if _covers(pattern, tag, payload):
                    break
            else:
                _fail(ck, match, "Non-exhaustive variant match: missing case "
                      f"'{_missing_case(tag, payload)}'",
                      hint="add an arm for it, or a final `| _ -> ...` arm")
        if not isinstance(tail, (RowEmpty, TError)):
            try:
                unify(tail, ROW_EMPTY)
            except UnifyError as error:  # pragma: no cover - a row tail always closes
                raise ck.unify_error(match.span, error) from None
    elif t is INT or t is FLOAT or t is STRING:
        _fail(ck, match, f"Non-exhaustive match on {t.name}: add '_' arm")
    elif t is UNIT:
        if not any(type(p) is ast.PUnit for p in patterns):
            _fail(ck, match, "Non-exhaustive match on unit: missing case '()'")
    elif isinstance(t, TRecord):
        if not any(type(p) is ast.PRecord and _total_record(p, t) for p in patterns):
            hint = ("a closed record pattern must list every field; end it with `; _` "
                    "to ignore the others")
            if root(t.exact).inexact:
                hint = ("these records may have more fields than their type lists (they come "
                        "from branches with different fields, or from a function that accepts "
                        "wider records): end the pattern with `; _`, or add a `_` arm")
            _fail(ck, match, "Non-exhaustive match on record: add '_' arm", hint=hint)
    elif not isinstance(t, TError):
        _fail(ck, match, "Non-exhaustive match: add '_' arm")


def _fail(ck: Checker, match: ast.Match, message: str, hint: str | None = None) -> None:
    ck.fail(match.span, errors.NON_EXHAUSTIVE, message,
            hint=hint or "a match must handle every value of its scrutinee's type")


def check_redundant(ck: Checker, match: ast.Match, scrutinee: Type) -> None:
    t = expose(scrutinee)
    patterns = [arm.pattern for arm in match.arms]
    if t is UNIT:
        seen_unit = False
        for pattern in patterns:
            if type(pattern) is ast.PUnit:
                seen_unit = True
            elif _is_catch_all(pattern) and seen_unit:
                _redundant(ck, pattern, "previous arms already cover unit case '()'")
    elif t is BOOL:
        seen: set[bool] = set()
        for pattern in patterns:
            if isinstance(pattern, ast.PBool):
                seen.add(pattern.value)
            elif _is_catch_all(pattern) and len(seen) == 2:
                _redundant(ck, pattern,
                           "previous arms already cover boolean cases 'true' and 'false'")
    elif isinstance(t, TVariant):
        fields, tail = flatten_row(t.row)
        covered: set[str] = set()
        for pattern in patterns:
            if isinstance(pattern, ast.PVariant):
                payload = fields.get(pattern.tag)
                if pattern.tag in covered and payload is not None:
                    _redundant(ck, pattern, "previous arms already cover variant case "
                               f"'{_missing_case(pattern.tag, payload)}'")
                if payload is not None and _covers(pattern, pattern.tag, payload):
                    covered.add(pattern.tag)
            elif (_is_catch_all(pattern) and isinstance(tail, RowEmpty)
                  and covered.issuperset(fields)):
                _redundant(ck, pattern, "previous arms already cover all variant constructors")


def _redundant(ck: Checker, pattern: ast.Pattern, reason: str) -> None:
    ck.fail(pattern.span, errors.REDUNDANT_ARM,
            f"Redundant match arm '{show_pattern(pattern)}': {reason}",
            hint="this arm can never be reached; remove it")
