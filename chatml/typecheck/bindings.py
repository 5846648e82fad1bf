"""Let-bindings: the value restriction (spec 4.4) and recursive groups (spec 4.14).

``let x = e`` infers ``e`` one level deeper and then generalises it when ``e``
is *non-expansive* (literals, variables, lambdas, and records, variants and
annotations made of such); otherwise its variables stay monomorphic (weak).
``let rec`` binds every name of the group to a monomorphic placeholder while
the right-hand sides -- which must be functions -- are inferred, then
generalises the group together.
"""

from __future__ import annotations

from chatml import ast
from chatml.typecheck import errors
from chatml.typecheck.checker import Checker, generalize_all, generalize_one, rule
from chatml.typecheck.environment import Entry
from chatml.typecheck.schemes import Scheme
from chatml.typecheck.types import Prim, TVar, Type
from chatml.typecheck.unify import UnifyError, unify

_VALUES = (ast.Int, ast.Float, ast.Bool, ast.String, ast.Unit, ast.Var, ast.Lambda)


def is_nonexpansive(expr: ast.Expr) -> bool:
    """Whether evaluating ``expr`` cannot allocate mutable state (spec 4.4)."""
    if type(expr) in _VALUES:
        return True
    match expr:
        case ast.Record():
            return all(is_nonexpansive(f.value) for f in expr.fields)
        case ast.Variant():
            return all(is_nonexpansive(a) for a in expr.args)
        case ast.Annot():
            return is_nonexpansive(expr.expr)
    return False


def is_function(expr: ast.Expr) -> bool:
    """A lambda, or an annotation of one: what ``let rec`` may bind."""
    if type(expr) is ast.Annot:
        expr = expr.expr
    return type(expr) is ast.Lambda


def bind_value(ck: Checker, rhs: ast.Expr) -> Entry:
    """The environment entry for ``let _ = rhs`` at the current level."""
    ck.level += 1
    t = ck.rules[type(rhs)](ck, rhs)
    ck.level -= 1
    if type(t) is Prim or (type(t) is TVar and type(t.link) is Prim):
        return t  # fast path: a primitive type has nothing to generalise
    nonexpansive = type(rhs) is ast.Lambda or is_nonexpansive(rhs)  # (a lambda: no call)
    return generalize_one(t, ck.level, nonexpansive)


def bind_group(ck: Checker, bindings: tuple[ast.RecBinding, ...]) -> list[Entry]:
    """Check a ``let rec`` group; the entries for its names (not yet bound)."""
    for binding in bindings:
        if not is_function(binding.rhs):
            ck.fail(binding.rhs.span, errors.RECURSIVE_BINDING,
                    f"Recursive binding '{binding.name}' must be a function",
                    hint="only functions can be defined with let rec; drop rec for a value")
    ck.level += 1
    env = ck.env
    mark = env.mark()
    placeholders: list[Type] = []
    for binding in bindings:
        fresh = TVar(ck.level)
        placeholders.append(fresh)
        env.bind(binding.name, fresh)
        if binding.name_span is not None:
            ck.binders.append((binding.name_span, fresh))
    for binding, placeholder in zip(bindings, placeholders, strict=True):
        t = ck.rules[type(binding.rhs)](ck, binding.rhs)
        try:
            unify(placeholder, t)
        except UnifyError as error:
            raise ck.unify_error(binding.rhs.span, error, t, placeholder) from None
    env.undo(mark)
    ck.level -= 1
    return generalize_all(tuple(placeholders), ck.level, True)


@rule(ast.LetIn)
def infer_let_in(ck: Checker, e: ast.LetIn) -> Type:
    entry = bind_value(ck, e.rhs)
    env = ck.env
    mark = len(env.trail)  # env.mark(), without the call
    env.bind(e.name, entry)
    if e.name_span is not None:
        bound = entry.body if type(entry) is Scheme else entry  # entry_type, inlined
        ck.binders.append((e.name_span, bound))
    body = ck.rules[type(e.body)](ck, e.body)
    env.undo(mark)
    return body


@rule(ast.LetRec)
def infer_let_rec(ck: Checker, e: ast.LetRec) -> Type:
    entries = bind_group(ck, e.bindings)
    env = ck.env
    mark = env.mark()
    for binding, entry in zip(e.bindings, entries, strict=True):
        env.bind(binding.name, entry)
    body = ck.rules[type(e.body)](ck, e.body)
    env.undo(mark)
    return body

