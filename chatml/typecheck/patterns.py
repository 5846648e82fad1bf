"""``match`` (spec 4.12): the shape check, pattern typing, and the arm loop.

Order, which decides the first error: infer the scrutinee; the *shape* check
over all arms (an arm after a catch-all is redundant, a simple pattern must
not repeat); then per arm: duplicate record-pattern labels, duplicate
binders, the pattern typed against the scrutinee (errors at the arm's
pattern), the body, its join with the earlier arms (errors at the pattern);
then exhaustiveness and typed redundancy (:mod:`chatml.typecheck.exhaustiveness`).

Record patterns need plain records, not modules (DECISIONS 6a, Q10); whether a
closed record pattern covers a record is decided with the record's exactness
(:mod:`chatml.typecheck.exactness`, 6a, Q9).
"""

from __future__ import annotations

from chatml import ast
from chatml.typecheck import errors
from chatml.typecheck.checker import Checker, rule
from chatml.typecheck.exhaustiveness import check_exhaustive, check_redundant
from chatml.typecheck.open_variants import FEW, OpenVariant
from chatml.typecheck.pattern_display import show_pattern
from chatml.typecheck.records import join, join_hint
from chatml.typecheck.types import (
    BOOL,
    FLOAT,
    INT,
    RECORD,
    ROW_EMPTY,
    STRING,
    UNIT,
    Row,
    TRecord,
    TTuple,
    TVar,
    TVariant,
    Type,
    make_row,
)
from chatml.typecheck.unify import UnifyError, unify


def _simple_key(pattern: ast.Pattern) -> tuple[str, object] | None:
    """A key for patterns that must not repeat (literals, unit, nullary tags)."""
    match pattern:
        case ast.PVariant():
            return None if pattern.args else ("tag", pattern.tag)
        case ast.PUnit():
            return ("unit", None)
        case ast.PInt() | ast.PBool() | ast.PFloat() | ast.PString():
            return (_LITERAL_KEYS[type(pattern)], pattern.value)
    return None


_LITERAL_KEYS: dict[type, str] = {
    ast.PInt: "int", ast.PBool: "bool", ast.PFloat: "float", ast.PString: "string",
}


# --------------------------------------------------------------------------- checks before typing


def check_shape(ck: Checker, arms: tuple[ast.MatchArm, ...]) -> None:
    catch_all: ast.Pattern | None = None
    seen: set[tuple[str, object]] = set()
    for arm in arms:
        pattern = arm.pattern
        if catch_all is not None:
            ck.fail(pattern.span, errors.REDUNDANT_ARM,
                    f"Redundant match arm '{show_pattern(pattern)}': previous catch-all pattern "
                    f"'{show_pattern(catch_all)}' already matches all cases",
                    hint="arms are tried in order; move this arm before the catch-all or remove it")
        if type(pattern) is ast.PWildcard or type(pattern) is ast.PVar:  # a catch-all
            catch_all = pattern
            continue
        key = _simple_key(pattern)
        if key is not None:
            if key in seen:
                ck.fail(pattern.span, errors.DUPLICATE_ARM,
                        f"Duplicate match arm for pattern '{show_pattern(pattern)}'",
                        hint="an earlier arm already matches this pattern")
            seen.add(key)


def _check_labels_and_binders(ck: Checker, pattern: ast.Pattern) -> None:
    """Duplicate record-pattern labels (first), then duplicate binders, in ``pattern``.

    One walk, left to right: a duplicate label fails at once; the first
    duplicate binder fails once the walk is over (a label error wins).
    """
    if type(pattern) is ast.PVariant and len(pattern.args) < 2:
        args = pattern.args
        if not args or type(args[0]) is ast.PVar or type(args[0]) is ast.PWildcard:
            return  # fast path: a tag with at most one simple argument repeats nothing
    binders: set[str] = set()
    duplicate_binder: str | None = None
    stack = [pattern]
    while stack:
        match stack.pop():
            case ast.PVar(name=name):
                if duplicate_binder is None and name in binders:
                    duplicate_binder = name
                binders.add(name)
            case ast.PVariant(args=args):
                stack.extend(reversed(args))
            case ast.PRecord(fields=fields):
                labels: set[str] = set()
                for field in fields:
                    if field.label in labels:
                        ck.fail(pattern.span, errors.DUPLICATE_PATTERN_FIELD,
                                f"Duplicate record pattern label '{field.label}'")
                    labels.add(field.label)
                for field in reversed(fields):
                    stack.append(field.pattern)
    if duplicate_binder is not None:
        ck.fail(pattern.span, errors.DUPLICATE_BINDER,
                f"Duplicate pattern binder '{duplicate_binder}'",
                hint="a name can be bound only once in a pattern; use _ for values you ignore")


# --------------------------------------------------------------------------- typing


def type_pattern(ck: Checker, pattern: ast.Pattern, expected: Type) -> None:
    """Type ``pattern`` against ``expected``, binding its variables; raises UnifyError."""
    match pattern:
        case ast.PVar():
            ck.env.bind(pattern.name, expected)
            ck.binders.append((pattern.span, expected))
        case ast.PWildcard():
            return
        case ast.PVariant():
            payload = _payload(ck, pattern)
            unify(expected, TVariant(Row({pattern.tag: payload}, TVar(ck.level))))
        case ast.PRecord():
            fields: dict[str, Type] = {}
            for field in pattern.fields:
                var = TVar(ck.level)
                type_pattern(ck, field.pattern, var)
                fields[field.label] = var
            tail = TVar(ck.level) if pattern.is_open else ROW_EMPTY
            unify(expected, TRecord(make_row(fields, tail), RECORD))
        case _:
            unify(expected, _LITERAL_TYPES[type(pattern)])


def _payload(ck: Checker, pattern: ast.PVariant) -> TTuple:
    """The payload type of a tag pattern, its sub-patterns typed and bound."""
    args: list[Type] = []
    for sub in pattern.args:
        var = TVar(ck.level)
        if type(sub) is ast.PVar:  # the commonest sub-pattern, bound without a call
            ck.env.bind(sub.name, var)
            ck.binders.append((sub.span, var))
        else:
            type_pattern(ck, sub, var)
        args.append(var)
    return TTuple(tuple(args))


def _type_tag_arm(ck: Checker, pattern: ast.PVariant, scrutinee: Type,
                  open_variant: OpenVariant) -> bool:
    """Type a top-level tag pattern against a cached open scrutinee; False when not one."""
    if not open_variant.current(scrutinee):
        return False
    open_variant.add(pattern.tag, _payload(ck, pattern), ck.level)
    return True


_LITERAL_TYPES: dict[type, Type] = {
    ast.PUnit: UNIT, ast.PInt: INT, ast.PBool: BOOL, ast.PFloat: FLOAT, ast.PString: STRING,
}


@rule(ast.Match)
def infer_match(ck: Checker, e: ast.Match) -> Type:
    scrutinee = ck.rules[type(e.scrutinee)](ck, e.scrutinee)
    arms = e.arms
    check_shape(ck, arms)
    env = ck.env
    result: Type | None = None
    open_variant = OpenVariant() if len(arms) > FEW else None
    for arm in arms:
        pattern = arm.pattern
        if type(pattern) is ast.PRecord or type(pattern) is ast.PVariant:
            _check_labels_and_binders(ck, pattern)
        mark = len(env.trail)  # env.mark(), without the call
        try:
            if open_variant is None or type(pattern) is not ast.PVariant or \
                    not _type_tag_arm(ck, pattern, scrutinee, open_variant):
                type_pattern(ck, pattern, scrutinee)
        except UnifyError as error:
            hint = None
            if error.code == errors.MODULE_AS_RECORD:
                hint = f"a record pattern cannot match module {error.label}"
            elif (error.code == errors.MISSING_LABEL and type(pattern) is ast.PRecord
                  and not pattern.is_open):
                hint = ("a closed record pattern matches records with exactly its fields; "
                        "end it with `; _` to allow others")
            raise ck.unify_error(pattern.span, error, hint=hint) from None
        body = ck.rules[type(arm.body)](ck, arm.body)
        env.undo(mark)
        if result is None:
            result = body
        else:
            try:
                result = join(result, body)
            except UnifyError as error:
                raise ck.unify_error(pattern.span, error, hint=join_hint(
                    error, [a.body for a in arms], "every arm of a match must have the same type")
                                     ) from None
    check_exhaustive(ck, e, scrutinee)
    check_redundant(ck, e, scrutinee)
    assert result is not None
    return result
