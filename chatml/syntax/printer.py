"""Print a ChatML syntax tree back to source text, so that ``parse(print(ast)) == ast``.

The printer mirrors the disambiguation rules of spec 3.3: it adds parentheses
exactly where the parser would otherwise read the text differently, and no
others at the left edge of an expression -- a statement that starts with ``(``,
``[`` or ``-`` would continue the previous statement (spec 3.4), so an
unnecessary parenthesis there would change the program.

Each expression is printed knowing the binding level its context requires
(``minimum``: binary operators below it must be parenthesised) and what
follows it (``follow``): nothing that could be absorbed, a ``;``, a match
arm's ``|``, a binary operator of some level, or a postfix operator. Forms
whose right end is open (``fun``, ``if``, ``match``, ``let``, ``ref``, ``:=``,
``<-``) are parenthesised when something they would absorb follows.

Trees that no source text parses to (an :class:`~chatml.ast.Annot` outside a
``let``, a ``{ _ }`` record pattern, a string containing a carriage return,
two statements that would run together, ...) raise :class:`PrinterError`.
Layout is plain: one statement per line, module bodies indented, each
expression on one line. The printer recurses over the tree (a sequence is
printed iteratively), so a binary-operator chain nested deeper than Python's
recursion limit raises RecursionError.
"""

from __future__ import annotations

import decimal
import math
import re

from chatml import ast
from chatml.syntax.tokens import BOOLEANS, KEYWORDS

# What follows an expression.
_CLOSE = 0  # a closing token, a keyword, the end of a statement: nothing is absorbed
_SEMI = 1  # `;`
_BAR = 2  # `|` of a following match arm
_POSTFIX = 3  # the expression is the operand of `(`, `[`, `.` or the target of `:=`
_OP = 100  # _OP + level: a binary operator of that level (10, 20, 30)

_ATOMS = (ast.Unit, ast.Int, ast.Float, ast.Bool, ast.String, ast.Var, ast.Variant, ast.Array,
          ast.Record, ast.RecordExtend, ast.While, ast.App, ast.FieldGet, ast.ArrayGet)
_SEQ_ENDED = (ast.Lambda, ast.If, ast.Match, ast.LetIn, ast.LetRec)
_EXPR_ENDED = (ast.Ref, ast.SetRef, ast.ArraySet)
_LOWER = re.compile(r"[a-z_][A-Za-z0-9_]*\Z")
_UPPER = re.compile(r"[A-Z][A-Za-z0-9_]*\Z")
_TAG = re.compile(r"[A-Za-z0-9_]+\Z")
_WORD = re.compile(r"[A-Za-z0-9_]+")
_RESERVED = set(KEYWORDS) | set(BOOLEANS) | {"_"}


class PrinterError(ValueError):
    """The tree cannot be written as ChatML source (no source text parses to it)."""


def print_program(program: ast.Program) -> str:
    """Source text for ``program`` (ending with a newline when not empty)."""
    lines = _statements(program.statements, top=True, indent="")
    return "".join(line + "\n" for line in lines)


def print_expr(expr: ast.Expr) -> str:
    """Source text for an expression used as a whole statement or ``let`` right-hand side."""
    return _seq(expr, _CLOSE)


def print_pattern(pattern: ast.Pattern) -> str:
    return _pattern(pattern)


def print_type(typ: ast.TypeExpr) -> str:
    return _type(typ)


# --------------------------------------------------------------------------- statements


def _continuable(stmt: ast.Stmt) -> bool:
    """Would a following statement starting with `(`, `[` or `-` continue ``stmt``?"""
    return isinstance(stmt, (ast.LetStmt, ast.LetRecStmt, ast.ExprStmt))


def _statements(stmts: tuple[ast.Stmt, ...], *, top: bool, indent: str) -> list[str]:
    lines: list[str] = []
    previous: ast.Stmt | None = None
    for stmt in stmts:
        text = _statement(stmt, top=top, indent=indent)
        first = text.lstrip()
        if previous is not None and _continuable(previous) and first[:1] in ("(", "[", "-"):
            raise PrinterError(f"a statement starting with `{first[:1]}` would continue the "
                               "previous statement")
        word = _WORD.match(first)
        if isinstance(previous, ast.TypeStmt) and word and _LOWER.match(word.group()) \
                and word.group() not in _RESERVED:
            raise PrinterError("a statement starting with a lowercase name would extend the "
                               "previous `type` declaration")
        lines.append(text)
        previous = stmt
    return lines


def _statement(stmt: ast.Stmt, *, top: bool, indent: str) -> str:
    if isinstance(stmt, ast.LetStmt):
        return indent + "let " + _binding(stmt.name, stmt.rhs)
    if isinstance(stmt, ast.LetRecStmt):
        return indent + "let rec " + " and ".join(_binding(b.name, b.rhs) for b in stmt.bindings)
    if isinstance(stmt, ast.ExprStmt):
        return indent + _expr(stmt.expr, 0, _CLOSE)
    if isinstance(stmt, ast.TypeStmt):
        if not top:
            raise PrinterError("`type` is only allowed at top level")
        return f"{indent}type {_lower(stmt.name)} = {_type(stmt.type)}"
    if isinstance(stmt, ast.ModuleStmt):
        body = _statements(stmt.body, top=False, indent=indent + "  ")
        return "\n".join([f"{indent}module {_upper(stmt.name)} = struct", *body, f"{indent}end"])
    if isinstance(stmt, ast.OpenStmt):
        return f"{indent}open {_upper(stmt.name)}"
    raise PrinterError(f"not a statement: {stmt!r}")


def _binding(name: str, rhs: ast.Expr) -> str:
    """``name ... = rhs`` for ``let``, ``let rec`` and ``let ... in``, using the sugar."""
    name = _lower(name)
    if isinstance(rhs, ast.Lambda):
        params = " ".join(_lower(p) for p in rhs.params) if rhs.params else "()"
        return f"{name} {params} = {_seq(rhs.body, _CLOSE)}"
    if isinstance(rhs, ast.Annot):
        return f"{name} : {_type(rhs.type)} = {_seq(rhs.expr, _CLOSE)}"
    return f"{name} = {_seq(rhs, _CLOSE)}"


# --------------------------------------------------------------------------- expressions


def _seq(expr: ast.Expr, follow: int) -> str:
    """``expr`` in a slot that takes a ``;`` sequence."""
    parts = []
    while isinstance(expr, ast.Sequence):
        parts.append(_expr(expr.first, 0, _SEMI))
        expr = expr.second
    parts.append(_expr(expr, 0, follow))
    return "; ".join(parts)


def _needs_parens(expr: ast.Expr, minimum: int, follow: int) -> bool:
    if isinstance(expr, _ATOMS):
        return False
    if isinstance(expr, ast.Prim2):
        level = expr.op.level
        return level < minimum or follow == _POSTFIX or follow - _OP > level
    if isinstance(expr, ast.Prim1):
        return follow == _POSTFIX or follow - _OP > 20
    if isinstance(expr, ast.Deref):
        return follow == _POSTFIX
    if isinstance(expr, _EXPR_ENDED):
        return follow == _POSTFIX or follow >= _OP
    if isinstance(expr, _SEQ_ENDED):
        return follow != _CLOSE
    return True  # Sequence, Annot


def _expr(expr: ast.Expr, minimum: int, follow: int) -> str:
    if _needs_parens(expr, minimum, follow):
        if isinstance(expr, ast.Annot):
            raise PrinterError("a type annotation can only be the right-hand side of a `let`")
        return "(" + _seq(expr, _CLOSE) + ")"
    return _bare(expr, follow)


def _bare(e: ast.Expr, follow: int) -> str:
    if isinstance(e, ast.Var):
        return _name(e.name)
    if isinstance(e, ast.Int):
        if e.value < 0:
            raise PrinterError("negative integer literal")
        return str(e.value)
    if isinstance(e, ast.App):
        fn = e.fn
        if isinstance(fn, ast.Variant) and not fn.args:
            head = f"`{_tag(fn.tag)}()"
        else:
            head = _expr(fn, 0, _POSTFIX)
        return f"{head}({_args(e.args)})"
    if isinstance(e, ast.FieldGet):
        return f"{_expr(e.record, 0, _POSTFIX)}.{_lower(e.label)}"
    if isinstance(e, ast.Prim2):
        level = e.op.level
        left = _expr(e.left, level, _OP + level)
        right = _expr(e.right, level + 1, follow)
        return f"{left} {e.op.symbol} {right}"
    if isinstance(e, ast.String):
        return _string(e.value)
    if isinstance(e, ast.Bool):
        return "true" if e.value else "false"
    if isinstance(e, ast.Float):
        return _float(e.value)
    if isinstance(e, ast.Unit):
        return "()"
    if isinstance(e, ast.Variant):
        return f"`{_tag(e.tag)}({_args(e.args)})" if e.args else f"`{_tag(e.tag)}"
    if isinstance(e, ast.Array):
        return f"[{_args(e.elements)}]"
    if isinstance(e, ast.Record):
        return "{ " + _fields(e.fields) + " }" if e.fields else "{}"
    if isinstance(e, ast.RecordExtend):
        if not e.fields:
            raise PrinterError("a copy-update needs at least one field")
        return "{ " + _seq(e.base, _CLOSE) + " with " + _fields(e.fields) + " }"
    if isinstance(e, ast.ArrayGet):
        return f"{_expr(e.array, 0, _POSTFIX)}[{_expr(e.index, 0, _CLOSE)}]"
    if isinstance(e, ast.ArraySet):
        return (f"{_expr(e.array, 0, _POSTFIX)}[{_expr(e.index, 0, _CLOSE)}] <- "
                f"{_expr(e.value, 0, follow)}")
    if isinstance(e, ast.While):
        return f"while {_seq(e.cond, _CLOSE)} do {_seq(e.body, _CLOSE)} done"
    if isinstance(e, ast.Prim1):
        return _prefix(e.op.symbol, _expr(e.operand, 21, follow))
    if isinstance(e, ast.Deref):
        return _prefix("!", _expr(e.ref, 41, follow))
    if isinstance(e, ast.Ref):
        return "ref " + _expr(e.value, 0, follow)
    if isinstance(e, ast.SetRef):
        return f"{_expr(e.ref, 0, _POSTFIX)} := {_expr(e.value, 0, follow)}"
    if isinstance(e, ast.Lambda):
        params = " ".join(_lower(p) for p in e.params) if e.params else "()"
        return f"fun {params} -> {_seq(e.body, follow)}"
    if isinstance(e, ast.If):
        return (f"if {_seq(e.cond, _CLOSE)} then {_seq(e.then_branch, _CLOSE)} "
                f"else {_seq(e.else_branch, follow)}")
    if isinstance(e, ast.Match):
        if not e.arms:
            raise PrinterError("a match needs at least one arm")
        arms = []
        for i, arm in enumerate(e.arms):
            after = follow if i == len(e.arms) - 1 else _BAR
            arms.append(f"| {_pattern(arm.pattern)} -> {_seq(arm.body, after)}")
        return f"match {_seq(e.scrutinee, _CLOSE)} with " + " ".join(arms)
    if isinstance(e, ast.LetIn):
        return f"let {_binding(e.name, e.rhs)} in {_seq(e.body, follow)}"
    if isinstance(e, ast.LetRec):
        if not e.bindings:
            raise PrinterError("`let rec` needs at least one binding")
        bindings = " and ".join(_binding(b.name, b.rhs) for b in e.bindings)
        return f"let rec {bindings} in {_seq(e.body, follow)}"
    raise PrinterError(f"cannot print {type(e).__name__} here")


def _prefix(op: str, operand: str) -> str:
    return f"{op} {operand}" if operand[:1] in "-.+*/<>=:!" else op + operand


def _args(args: tuple[ast.Expr, ...]) -> str:
    return ", ".join(_seq(a, _CLOSE) for a in args)


def _fields(fields: tuple[ast.Field, ...]) -> str:
    last = len(fields) - 1
    return "; ".join(f"{_lower(f.label)} = {_expr(f.value, 0, _CLOSE if i == last else _SEMI)}"
                     for i, f in enumerate(fields))


# --------------------------------------------------------------------------- literals and names


def _string(value: str) -> str:
    if "\r" in value:
        raise PrinterError("ChatML strings cannot contain a carriage return")
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return '"' + escaped.replace("\t", "\\t") + '"'


def _float(value: float) -> str:
    if math.isnan(value) or value < 0 or (value == 0 and math.copysign(1.0, value) < 0):
        raise PrinterError(f"float literal {value!r} has no ChatML spelling")
    if math.isinf(value):
        return "9" * 400 + ".0"  # the nearest double of this literal is +inf
    text = repr(value)
    if "e" in text or "." not in text:
        text = format(decimal.Decimal(value), "f")
        if "." not in text:
            text += ".0"
    return text


def _lower(name: str) -> str:
    if not _LOWER.match(name) or name in _RESERVED:
        raise PrinterError(f"{name!r} is not a lowercase name")
    return name


def _upper(name: str) -> str:
    if not _UPPER.match(name):
        raise PrinterError(f"{name!r} is not a module name")
    return name


def _name(name: str) -> str:
    return _upper(name) if name[:1].isupper() else _lower(name)


def _tag(tag: str) -> str:
    if not _TAG.match(tag):
        raise PrinterError(f"{tag!r} is not a variant tag")
    return tag


# --------------------------------------------------------------------------- patterns and types


def _pattern(p: ast.Pattern) -> str:
    if isinstance(p, ast.PVar):
        return _lower(p.name)
    if isinstance(p, ast.PWildcard):
        return "_"
    if isinstance(p, ast.PUnit):
        return "()"
    if isinstance(p, ast.PInt):
        if p.value < 0:
            raise PrinterError("negative integer pattern")
        return str(p.value)
    if isinstance(p, ast.PFloat):
        return _float(p.value)
    if isinstance(p, ast.PBool):
        return "true" if p.value else "false"
    if isinstance(p, ast.PString):
        return _string(p.value)
    if isinstance(p, ast.PVariant):
        if p.args:
            return f"`{_tag(p.tag)}(" + ", ".join(_pattern(a) for a in p.args) + ")"
        return f"`{_tag(p.tag)}"
    if isinstance(p, ast.PRecord):
        if not p.fields:
            if p.is_open:
                raise PrinterError("an open record pattern needs at least one field")
            return "{}"
        fields = "; ".join(f"{_lower(f.label)} = {_pattern(f.pattern)}" for f in p.fields)
        return "{ " + fields + ("; _ }" if p.is_open else " }")
    raise PrinterError(f"not a pattern: {p!r}")


def _type(t: ast.TypeExpr) -> str:
    if isinstance(t, ast.TArrow):
        return f"{_type_post(t.param)} -> {_type(t.result)}"
    return _type_post(t)


def _type_post(t: ast.TypeExpr) -> str:
    if isinstance(t, ast.TName):
        return _lower(t.name)
    if isinstance(t, ast.TConstr):
        if len(t.args) != 1:
            raise PrinterError("a type constructor takes exactly one argument")
        return f"{_type_post(t.args[0])} {_lower(t.name)}"
    if isinstance(t, ast.TRecord):
        if not t.fields:
            return "{}"
        return "{ " + "; ".join(f"{_lower(f.label)} : {_type(f.type)}" for f in t.fields) + " }"
    if isinstance(t, ast.TVariant):
        cases = []
        for case in t.cases:
            args = "(" + ", ".join(_type(a) for a in case.args) + ")" if case.args else ""
            cases.append(f"`{_tag(case.tag)}{args}")
        return "[ " + " | ".join(cases) + " ]" if cases else "[]"
    if isinstance(t, ast.TArrow):
        return f"({_type(t)})"
    raise PrinterError(f"not a type: {t!r}")
