"""Type expressions: elaboration, ``type`` declarations, and annotations (spec 4.10, 4.11).

* :func:`elaborate` turns a written type into an internal one: primitives,
  declared names (the shared object), ``T array``, ``T task``, closed records
  and variants, and arrows flattened into one uncurried function whose
  ``unit`` parameters are dropped (quirk Q7).
* :func:`declare_type` checks a ``type name = T`` statement: not a primitive,
  not declared before (builtin aliases included), and -- when ``name`` occurs
  in ``T`` -- contractive, giving ``mu name. T``.
* The :class:`~chatml.ast.Annot` rule checks ``let x : T = e``: a lambda
  against a function type gets exactly the annotated parameter types.

Record types written in annotations accept records and modules alike (their
flavor is a fresh variable); records of declared types are plain records.
"""

from __future__ import annotations

from chatml import ast
from chatml.typecheck import errors
from chatml.typecheck.checker import Checker, rule
from chatml.typecheck.types import (
    PRIMITIVES,
    RECORD,
    ROW_EMPTY,
    TASK,
    UNIT,
    TArray,
    TConstr,
    TFun,
    TMu,
    TRecord,
    TRecVar,
    TTuple,
    TVar,
    TVariant,
    Type,
    make_row,
    resolve,
)
from chatml.typecheck.unify import UnifyError, unify


class _Elaboration:
    def __init__(self, ck: Checker, recursive: str | None, declared: bool) -> None:
        self.ck = ck
        self.recursive = recursive
        self.declared = declared
        self.recursive_used = False

    def run(self, texpr: ast.TypeExpr) -> Type:
        if isinstance(texpr, ast.TName):
            return self.name(texpr)
        if isinstance(texpr, ast.TArrow):
            left = self.run(texpr.param)
            right = self.run(texpr.result)
            params: tuple[Type, ...] = () if resolve(left) is UNIT else (left,)
            resolved = resolve(right)
            if isinstance(resolved, TFun):
                return TFun(params + resolved.params, resolved.result)
            return TFun(params, right)
        if isinstance(texpr, ast.TConstr):
            if texpr.name not in ("array", "task") or len(texpr.args) != 1:
                self.ck.fail(texpr.span, errors.UNKNOWN_TYPE_CONSTRUCTOR,
                             f"Unknown type constructor '{texpr.name}'",
                             hint="the type constructors are array and task")
            arg = self.run(texpr.args[0])
            return TArray(arg) if texpr.name == "array" else TConstr(TASK, (arg,))
        if isinstance(texpr, ast.TRecord):
            fields: dict[str, Type] = {}
            for field in texpr.fields:
                if field.label in fields:
                    self.ck.fail(texpr.span, errors.DUPLICATE_TYPE_FIELD,
                                 f"Duplicate type record field label '{field.label}'")
                fields[field.label] = self.run(field.type)
            flavor: Type = RECORD if self.declared else TVar(self.ck.level)
            return TRecord(make_row(fields, ROW_EMPTY), flavor)
        if isinstance(texpr, ast.TVariant):
            cases: dict[str, Type] = {}
            for case in texpr.cases:
                if case.tag in cases:
                    self.ck.fail(texpr.span, errors.DUPLICATE_TYPE_CASE,
                                 f"Duplicate type variant constructor label '{case.tag}'")
                cases[case.tag] = TTuple(tuple(self.run(arg) for arg in case.args))
            return TVariant(make_row(cases, ROW_EMPTY))
        raise AssertionError(f"unknown type expression {texpr!r}")  # pragma: no cover

    def name(self, texpr: ast.TName) -> Type:
        name = texpr.name
        if name == self.recursive:
            self.recursive_used = True
            return TRecVar(name)
        primitive = PRIMITIVES.get(name)
        if primitive is not None:
            return primitive
        declared = self.ck.type_names.get(name)
        if declared is not None:
            return declared
        hint = None
        if name in ("list", "option", "ref"):
            hint = {"list": "use an array: T array",
                    "option": "write the variant: [`None | `Some(T)]",
                    "ref": "ref types cannot be written; let the checker infer them"}[name]
        self.ck.fail(texpr.span, errors.UNKNOWN_TYPE, f"Unknown type '{name}'", hint=hint)


def elaborate(ck: Checker, texpr: ast.TypeExpr) -> Type:
    """The internal type of an annotation's type expression."""
    return _Elaboration(ck, None, declared=False).run(texpr)


def _unguarded(t: Type, name: str) -> bool:
    """Whether the recursive variable ``name`` occurs in ``t`` outside every guard."""
    stack: list[Type] = [t]
    while stack:
        node = stack.pop()
        if isinstance(node, TRecVar) and node.name == name:
            return True
        if isinstance(node, TConstr):
            stack.extend(node.args)
        elif isinstance(node, TMu) and node.name != name:
            stack.append(node.body)
        # records, variants, tuples, arrays, refs and functions guard what is below them
    return False


def declare_type(ck: Checker, stmt: ast.TypeStmt) -> None:
    """Check a top-level ``type`` statement and add it to the type-name environment."""
    name = stmt.name
    span = stmt.name_span or stmt.span
    if name in PRIMITIVES:
        ck.fail(span, errors.PRIMITIVE_REDEFINITION, f"Cannot redefine primitive type '{name}'",
                hint="choose another name for the type")
    if name in ck.type_names:
        ck.fail(span, errors.DUPLICATE_TYPE, f"Duplicate type declaration '{name}'",
                hint="a type name can be declared only once (builtin aliases included)")
    elaboration = _Elaboration(ck, name, declared=True)
    body = elaboration.run(stmt.type)
    if not elaboration.recursive_used:
        ck.type_names[name] = body
        return
    if _unguarded(body, name):
        ck.fail(span, errors.UNGUARDED_RECURSIVE_TYPE,
                f"Unguarded recursive type variable '{name}'",
                hint=f"'{name}' must occur inside a record, variant, array, ref or function type")
    ck.type_names[name] = TMu(name, body)


# --------------------------------------------------------------------------- annotations


@rule(ast.Annot)
def infer_annot(ck: Checker, e: ast.Annot) -> Type:
    annotation = elaborate(ck, e.type)
    expr = e.expr
    expected = resolve(annotation)
    if type(expr) is ast.Lambda and isinstance(expected, TFun):
        if len(expr.params) != len(expected.params):
            count = len(expected.params)
            ck.fail(e.span, errors.ANNOTATION_ARITY,
                    f"Annotated function expects {count} parameter(s), "
                    f"but lambda has {len(expr.params)}",
                    hint="annotations of several parameters are written a -> b -> result; "
                         "a unit parameter is written unit -> result")
        ck.level += 1
        mark = ck.env.mark()
        spans = expr.param_spans
        for index, (name, param) in enumerate(zip(expr.params, expected.params, strict=True)):
            ck.env.bind(name, param)
            if index < len(spans):
                ck.binders.append((spans[index], param))
        body = ck.rules[type(expr.body)](ck, expr.body)
        ck.env.undo(mark)
        try:
            unify(expected.result, body)
        except UnifyError as error:
            raise ck.unify_error(e.span, error, body, expected.result) from None
        ck.level -= 1
        return annotation
    value = ck.rules[type(expr)](ck, expr)
    try:
        unify(annotation, value)
    except UnifyError as error:
        raise ck.unify_error(e.span, error, value, annotation) from None
    return annotation


__all__ = ["declare_type", "elaborate"]
