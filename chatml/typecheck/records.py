"""Records (spec 4.7): literals, field access, copy-update, the join, parameter reopening.

* A literal is the closed record of its fields (typed last to first, Q13).
* ``e.l`` needs at least the field ``l``; the base's flavor (record, module, or
  either) is recorded for the compiler.
* ``{b with ...}`` keeps the base's known fields and tail, overriding or adding
  the updated ones; the base must be a plain record, not a module (6a, Q10).
* :func:`join` merges the types of ``if``/``match`` branches: two records keep
  only their common fields (joined recursively) and a common tail, otherwise
  the branches are unified.
* :func:`reopen_parameter` gives a lambda parameter whose type became a closed
  record a fresh open tail, so helpers accept wider records; the closed record
  is marked inexact, and one a closed record pattern relies on is not
  reopened (6a, Q9; :mod:`chatml.typecheck.exactness`).
* A join that drops fields, or merges different tails, is inexact: its values
  may hold fields the type does not list.
"""

from __future__ import annotations

from collections.abc import Sequence

from chatml import ast
from chatml.typecheck import errors
from chatml.typecheck.checker import Checker, rule
from chatml.typecheck.exactness import can_become_inexact, depends, mark_inexact
from chatml.typecheck.schemes import Scheme
from chatml.typecheck.types import (
    RECORD,
    ROW_EMPTY,
    Exactness,
    Row,
    RowEmpty,
    TArray,
    TError,
    TRecord,
    TRef,
    TTuple,
    TVar,
    Type,
    flatten_row,
    make_row,
    resolve,
)
from chatml.typecheck.unify import UnifyError, unify


def _duplicate(fields: tuple[ast.Field, ...]) -> str | None:
    seen: set[str] = set()
    for field in fields:
        if field.label in seen:
            return field.label
        seen.add(field.label)
    return None


@rule(ast.Record)
def infer_record(ck: Checker, e: ast.Record) -> Type:
    fields = e.fields
    if len(fields) > 1:
        duplicate = _duplicate(fields)
        if duplicate is not None:
            ck.fail(e.span, errors.DUPLICATE_FIELD, f"Duplicate record field label '{duplicate}'",
                    hint="each field of a record literal must be given once")
    types: dict[str, Type] = {}
    for field in reversed(fields):
        types[field.label] = ck.rules[type(field.value)](ck, field.value)
    return TRecord(Row(types, ROW_EMPTY) if types else ROW_EMPTY, RECORD)  # make_row


@rule(ast.FieldGet)
def infer_field_get(ck: Checker, e: ast.FieldGet) -> Type:
    label = e.label
    base = e.record
    # Fast path for ``Module.export``: instantiate just the export, not the module.
    if type(base) is ast.Var:
        entry = ck.env.values.get(base.name)
        if ck.self_references:  # only while a module body is checked
            reference = ck.self_references.get(base.name)
            if reference is not None and reference[0] is entry:
                reference[1].append((label, e.span))
        if type(entry) is Scheme:
            body = entry.body
            if type(body) is TVar:
                body = resolve(body)
            if type(body) is TRecord:
                fields, tail = flatten_row(body.row)
                field = fields.get(label)
                if field is not None and isinstance(tail, RowEmpty):
                    ck.field_flavors.append((e.span, body.flavor))
                    return entry.instantiate_field(label, field, ck.level)
        if entry is not None and type(entry) is not Scheme:
            record = entry  # a monomorphic variable is its own type (infer_var, without a call)
        else:
            record = ck.rules[ast.Var](ck, base)
    else:
        record = ck.rules[type(base)](ck, base)
    resolved = resolve(record) if type(record) is TVar and record.link is not None else record
    if type(resolved) is TRecord:
        fields, tail = flatten_row(resolved.row)
        field = fields.get(label)
        if field is not None:
            ck.field_flavors.append((e.span, resolved.flavor))
            return field
    result = TVar(ck.level)
    flavor = TVar(ck.level)
    expected = TRecord(Row({label: result}, TVar(ck.level)), flavor)
    try:
        unify(record, expected)
    except UnifyError as error:
        raise ck.unify_error(e.span, error, record, expected,
                             hint=_missing_field_hint(record, label, error)) from None
    ck.field_flavors.append((e.span, flavor))
    return result


def _missing_field_hint(record: Type, label: str, error: UnifyError) -> str | None:
    if error.code != errors.MISSING_LABEL:
        return None
    resolved = resolve(record)
    if type(resolved) is TRecord:
        fields, _ = flatten_row(resolved.row)
        if not fields:
            return f"the record has no field {label}; it has no fields at all"
        from difflib import get_close_matches

        close = get_close_matches(label, list(fields), n=1, cutoff=0.6)
        guess = f" (did you mean {close[0]}?)" if close else ""
        return (f"the record has no field {label}{guess}; its fields are "
                + ", ".join(sorted(fields)))
    return None


@rule(ast.RecordExtend)
def infer_record_extend(ck: Checker, e: ast.RecordExtend) -> Type:
    fields = e.fields
    if len(fields) > 1:
        duplicate = _duplicate(fields)
        if duplicate is not None:
            ck.fail(e.span, errors.DUPLICATE_UPDATE_FIELD,
                    f"Duplicate record update label '{duplicate}'",
                    hint="each field of a copy-update must be given once")
    base = ck.rules[type(e.base)](ck, e.base)
    base_row = TVar(ck.level)
    expected = TRecord(base_row, RECORD)
    try:
        unify(base, expected)
    except UnifyError as error:
        hint = None
        if error.code == errors.MODULE_AS_RECORD:
            hint = (f"copy-update needs a record; module {error.label} cannot be copied "
                    "(build a record from its fields instead)")
        raise ck.unify_error(e.span, error, base, expected, hint=hint) from None
    known, tail = flatten_row(base_row)
    updated = dict(known)
    for field in fields:
        updated[field.label] = ck.rules[type(field.value)](ck, field.value)
    result = TRecord(Row(updated, tail) if updated else tail, RECORD)  # make_row
    depends(expected.exact, result.exact)  # the base's unlisted fields are copied along
    return result


# --------------------------------------------------------------------------- join


def join(a: Type, b: Type) -> Type:
    """The type of two merged branches (spec 4.7); raises :class:`UnifyError`."""
    ra = resolve(a) if type(a) is TVar and a.link is not None else a
    rb = resolve(b) if type(b) is TVar and b.link is not None else b
    if type(ra) is TRecord and type(rb) is TRecord:
        fields_a, tail_a = flatten_row(ra.row)
        fields_b, tail_b = flatten_row(rb.row)
        joined: dict[str, Type] = {}
        for label in sorted(fields_a.keys() & fields_b.keys()):
            joined[label] = join(fields_a[label], fields_b[label])
        tail: Type
        if tail_a is tail_b and not isinstance(tail_a, TError):
            tail, differ = tail_a, False
        elif isinstance(tail_a, RowEmpty) and isinstance(tail_b, RowEmpty):
            tail, differ = ROW_EMPTY, False
        else:
            tail, differ = ROW_EMPTY, True
        flavor = ra.flavor
        if flavor is not rb.flavor:
            unify(flavor, rb.flavor)
        # A branch's value keeps the fields the join dropped: the result is inexact.
        dropped = len(joined) != len(fields_a) or len(joined) != len(fields_b)
        result = TRecord(make_row(joined, tail), flavor, Exactness(inexact=dropped or differ))
        depends(ra.exact, result.exact)
        depends(rb.exact, result.exact)
        return result
    if type(ra) is TError:
        return b
    if a is not b:
        unify(a, b)
    return a


# --------------------------------------------------------------------------- reopening


def reopen_parameter(param: TVar, level: int) -> None:
    """Re-bind a lambda parameter's variable to its type with closed records reopened.

    The fresh tails get the parameter's level: lower than the lambda's own
    when the parameter's type escaped to an outer, monomorphic binding, whose
    view must not become polymorphic.
    """
    current = param.link  # (one link needs no call)
    if type(current) is TVar:
        current = resolve(param)
    if current is None or type(current) not in _REOPENED:  # fast path: nothing to reopen
        return
    reopened = _reopen(current, min(level, param.level), set())
    if reopened is not current:
        param.link = reopened


#: The types :func:`_reopen` may rebuild (every other type is returned as it is).
_REOPENED = frozenset({TRecord, TArray, TRef, TTuple})


def _reopen(t: Type, level: int, active: set[int]) -> Type:
    t = resolve(t)
    if id(t) in active:
        return t
    match t:
        case TRecord():
            fields, tail = flatten_row(t.row)
            if tail is not ROW_EMPTY:
                return t
            if not can_become_inexact(t.exact):
                return t  # a closed pattern relies on its exact fields (6a, Q9)
            mark_inexact(t.exact)
            active.add(id(t))
            new_fields = {label: _reopen(v, level, active) for label, v in fields.items()}
            active.discard(id(t))
            return TRecord(make_row(new_fields, TVar(level)), t.flavor)
        case TArray() | TRef():
            active.add(id(t))
            elem = _reopen(t.elem, level, active)
            active.discard(id(t))
            if elem is t.elem:
                return t
            return TArray(elem) if type(t) is TArray else TRef(elem)
        case TTuple():
            active.add(id(t))
            elems = tuple(_reopen(x, level, active) for x in t.elems)
            active.discard(id(t))
            if all(x is y for x, y in zip(elems, t.elems, strict=True)):
                return t
            return TTuple(elems)
    return t


__all__ = ["join", "reopen_parameter"]


def join_hint(error: UnifyError, bodies: Sequence[ast.Expr], generic: str) -> str:
    """The hint for branches (match arms, if/else) whose types do not join.

    ``| `A -> Task.pure({ st with job = "x" }) | _ -> Task.pure(st)`` makes
    ``st``'s row contain itself: records nested in a task (or a variant) are
    unified, not joined (spec §4.7), and the copy-update adds ``job`` to the
    type of ``st``. For that very common moderator pattern the hint says so and
    gives the fix; otherwise it is ``generic``.
    """
    if error.code != errors.RECURSIVE_ROW:
        return generic
    for body in bodies:
        for node in ast.walk(body):
            if type(node) is ast.RecordExtend and type(node.base) is ast.Var:
                base = node.base.name
                labels = ", ".join(f"`{field.label}`" for field in node.fields)
                return (f"one branch returns the copy-update {{ {base} with ... }}, which gives "
                        f"{base} the field(s) {labels}, and another returns {base} itself: inside "
                        f"a task or a variant the two record types are unified, not joined "
                        f"(spec §4.7), so {base}'s type would have to contain itself. Give "
                        f"{base} the field(s) {labels} from the start (e.g. in the initial "
                        f"state), or annotate {base} with a record type that has them")
    return generic
