"""Hypothesis strategies for ChatML syntax trees (spans left as None) and operator soups."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import strategies as st

from chatml import ast

S: Any = None  # spans take no part in equality

names = st.sampled_from(["x", "y", "f", "acc", "_t", "letx", "x1"])
modules = st.sampled_from(["M", "Task", "String"])
tags = st.sampled_from(["A", "Some", "1", "_x"])
labels = st.sampled_from(["a", "b", "name", "l0"])
ints = st.integers(min_value=0, max_value=4611686018427387903)
floats = st.floats(min_value=0.0, allow_nan=False, allow_infinity=False).filter(
    lambda v: math.copysign(1.0, v) > 0)
strings = st.text(st.characters(blacklist_characters="\r", blacklist_categories=("Cs",)),
                  max_size=8)

types: st.SearchStrategy[Any] = st.recursive(
    names.map(lambda n: ast.TName(n, S)),
    lambda t: st.one_of(
        st.builds(lambda a, b: ast.TArrow(a, b, S), t, t),
        st.builds(lambda n, a: ast.TConstr(n, (a,), S), names, t),
        st.lists(st.builds(lambda lbl, ty: ast.TField(lbl, ty, S), labels, t), max_size=2)
        .map(lambda fs: ast.TRecord(tuple(fs), S)),
        st.lists(st.builds(lambda tg, args: ast.TCase(tg, tuple(args), S), tags,
                           st.lists(t, max_size=2)), max_size=2)
        .map(lambda cs: ast.TVariant(tuple(cs), S)),
    ),
    max_leaves=5,
)

patterns: st.SearchStrategy[Any] = st.recursive(
    st.one_of(
        st.just(ast.PUnit(S)), st.just(ast.PWildcard(S)), names.map(lambda n: ast.PVar(n, S)),
        ints.map(lambda i: ast.PInt(i, S)), floats.map(lambda v: ast.PFloat(v, S)),
        st.booleans().map(lambda b: ast.PBool(b, S)), strings.map(lambda s: ast.PString(s, S)),
        tags.map(lambda t: ast.PVariant(t, (), S)),
    ),
    lambda p: st.one_of(
        st.builds(lambda t, args: ast.PVariant(t, tuple(args), S), tags,
                  st.lists(p, min_size=1, max_size=2)),
        st.builds(lambda fields, is_open: ast.PRecord(tuple(fields), is_open and bool(fields), S),
                  st.lists(st.builds(lambda lbl, q: ast.PField(lbl, q, S), labels, p),
                           max_size=2), st.booleans()),
    ),
    max_leaves=4,
)

_leaves = st.one_of(
    st.just(ast.Unit(S)), ints.map(lambda i: ast.Int(i, S)), floats.map(lambda v: ast.Float(v, S)),
    st.booleans().map(lambda b: ast.Bool(b, S)), strings.map(lambda s: ast.String(s, S)),
    names.map(lambda n: ast.Var(n, S)), modules.map(lambda n: ast.Var(n, S)),
    tags.map(lambda t: ast.Variant(t, (), S)),
)


def _extend(e: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    few = st.lists(e, max_size=2).map(tuple)
    some = st.lists(e, min_size=1, max_size=2).map(tuple)
    fields = st.lists(st.builds(lambda lbl, v: ast.Field(lbl, v, S), labels, e), max_size=2)
    rhs = st.one_of(e, st.builds(lambda x, t: ast.Annot(x, t, S), e, types))
    return st.one_of(
        st.builds(lambda op, x: ast.Prim1(op, x, S), st.sampled_from(list(ast.UnOp)), e),
        st.builds(lambda op, a, b: ast.Prim2(op, a, b, S), st.sampled_from(list(ast.BinOp)), e, e),
        st.builds(lambda ps, b: ast.Lambda(tuple(ps), b, S), st.lists(names, max_size=2), e),
        st.builds(lambda f, args: ast.App(f, args, S), e, few),
        st.builds(lambda c, t, f: ast.If(c, t, f, S), e, e, e),
        st.builds(lambda c, b: ast.While(c, b, S), e, e),
        st.builds(lambda n, r, b: ast.LetIn(n, r, b, S), names, rhs, e),
        st.builds(lambda bs, b: ast.LetRec(tuple(bs), b, S),
                  st.lists(st.builds(lambda n, r: ast.RecBinding(n, r, S), names, rhs),
                           min_size=1, max_size=2), e),
        st.builds(lambda s, arms: ast.Match(s, tuple(arms), S), e,
                  st.lists(st.builds(lambda p, b: ast.MatchArm(p, b, S), patterns, e),
                           min_size=1, max_size=3)),
        fields.map(lambda fs: ast.Record(tuple(fs), S)),
        st.builds(lambda r, lbl: ast.FieldGet(r, lbl, S), e, labels),
        st.builds(lambda b, fs: ast.RecordExtend(b, tuple(fs), S), e,
                  st.lists(st.builds(lambda lbl, v: ast.Field(lbl, v, S), labels, e),
                           min_size=1, max_size=2)),
        st.builds(lambda t, args: ast.Variant(t, args, S), tags, some),
        few.map(lambda xs: ast.Array(xs, S)),
        st.builds(lambda a, i: ast.ArrayGet(a, i, S), e, e),
        st.builds(lambda a, i, v: ast.ArraySet(a, i, v, S), e, e, e),
        e.map(lambda x: ast.Ref(x, S)),
        e.map(lambda x: ast.Deref(x, S)),
        st.builds(lambda r, v: ast.SetRef(r, v, S), e, e),
        st.builds(lambda a, b: ast.Sequence(a, b, S), e, e),
    )


exprs: st.SearchStrategy[Any] = st.recursive(_leaves, _extend, max_leaves=10)
_rhs = st.one_of(exprs, st.builds(lambda x, t: ast.Annot(x, t, S), exprs, types))
_rec_bindings = st.lists(st.builds(lambda n, r: ast.RecBinding(n, r, S), names, _rhs),
                         min_size=1, max_size=2).map(tuple)
_module_level = st.one_of(
    st.builds(lambda n, r: ast.LetStmt(n, r, S), names, _rhs),
    _rec_bindings.map(lambda bs: ast.LetRecStmt(bs, S)),
    exprs.map(lambda x: ast.ExprStmt(x, S)),
    modules.map(lambda n: ast.OpenStmt(n, S)),
)
_statements = st.recursive(
    _module_level,
    lambda inner: st.builds(lambda n, body: ast.ModuleStmt(n, tuple(body), S), modules,
                            st.lists(inner, max_size=3)),
    max_leaves=4,
)
programs = st.lists(
    st.one_of(_statements, st.builds(lambda n, t: ast.TypeStmt(n, t, S), names, types)),
    max_size=4,
).map(lambda stmts: ast.Program(tuple(stmts), S))


# ---------------------------------------------------------------------- operator soups

_BINARY = ["+", "-", "*", "/", "==", "!=", "<", ">=", "<.", "+.", "-.", "*.", "/.", "++"]
_ATOMS = ["x", "y", "1", "2.5", '"s"', "true", "`A", "()", "[x, 1]", "{ a = 1 }", "f(x)", "r"]


def _soup_extend(t: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.builds(lambda a, op, b: f"{a} {op} {b}", t, st.sampled_from(_BINARY), t),
        st.builds(lambda op, a: f"{op} {a}", st.sampled_from(["-", "-.", "!", "ref"]), t),
        st.builds(lambda a, b: f"{a} := {b}", t, t),
        st.builds(lambda a, b: f"{a} ( {b} )", t, t),
        t.map(lambda a: f"{a} . l"),
        st.builds(lambda a, b: f"{a} [ {b} ]", t, t),
        st.builds(lambda a, b, c: f"{a} [ {b} ] <- {c}", t, t, t),
        st.builds(lambda a, b: f"fun x -> {a} ; {b}", t, t),
        st.builds(lambda a: f"fun x -> {a}", t),
        st.builds(lambda a, b, c: f"if {a} then {b} else {c}", t, t, t),
        st.builds(lambda a, b, c: f"match {a} with | 1 -> {b} | _ -> {c}", t, t, t),
        st.builds(lambda a, b: f"let x = {a} in {b}", t, t),
        st.builds(lambda a, b: f"let* x = {a} in {b}", t, t),
        st.builds(lambda a, b: f"( {a} ; {b} )", t, t),
        t.map(lambda a: f"( {a} )"),
        st.builds(lambda a, b: f"{{ a = {a} ; b = {b} }}", t, t),
        st.builds(lambda a, b: f"{{ {a} with b = {b} }}", t, t),
        st.builds(lambda a, b: f"`A ( {a} , {b} )", t, t),
        st.builds(lambda a, b: f"while {a} do {b} done", t, t),
        st.builds(lambda a, b: f"{a} {b}", t, t),  # two statements, or a continuation
    )


operator_soups: st.SearchStrategy[str] = st.recursive(st.sampled_from(_ATOMS), _soup_extend,
                                                      max_leaves=8)
