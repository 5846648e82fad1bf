"""Semantic actions of the ChatML grammar: build :mod:`chatml.ast` nodes and warn.

One :class:`Actions` object serves one parse. The LR driver in
:mod:`chatml.syntax.parser` calls ``action(start, end, *values)`` on every reduction,
where ``start``/``end`` are the offsets covered by the production (the
reference's ``$startpos``/``$endpos``) and ``values`` are the right-hand side's
values (tokens for terminals). Node spans follow the reference: desugared
nodes (the lambda of ``let f x = e``, the annotation of ``let x : T = e``, the
field access of ``e.l(args)``, the ``Task`` calls of ``let*``) carry the span
of the whole production; a parenthesised expression keeps its inner span.

The warnings of DECISIONS 6b are raised here, through :mod:`chatml.syntax.parse_warnings`:
a sub-expression is *bare* (not parenthesised) exactly when its span ends
where the enclosing production ends.
"""

from __future__ import annotations

from typing import Any

from chatcommon.diagnostics import Diagnostic, DiagnosticError
from chatcommon.records import fast_constructor
from chatcommon.sources import Span
from chatml.ast import (
    TASK_UNIT_PARAM,
    Annot,
    App,
    Array,
    ArrayGet,
    ArraySet,
    BinOp,
    Deref,
    ExprStmt,
    Field,
    FieldGet,
    If,
    Lambda,
    LetIn,
    LetRec,
    LetRecStmt,
    LetStmt,
    Match,
    MatchArm,
    ModuleStmt,
    OpenStmt,
    PField,
    PRecord,
    Prim1,
    Prim2,
    Program,
    PUnit,
    PVariant,
    PWildcard,
    RecBinding,
    Record,
    RecordExtend,
    Ref,
    Sequence,
    SetRef,
    TArrow,
    TCase,
    TConstr,
    TField,
    TRecord,
    TVariant,
    TypeStmt,
    Unit,
    UnOp,
    Var,
    Variant,
    While,
)
from chatml.syntax import parse_warnings
from chatml.syntax.lexer import TokenStream

PHASE = "parse"

BINARY_OPERATORS: dict[str, BinOp] = {
    "STAR": BinOp.MUL, "SLASH": BinOp.DIV, "STARDOT": BinOp.FMUL, "SLASHDOT": BinOp.FDIV,
    "PLUS": BinOp.ADD, "MINUS": BinOp.SUB, "PLUSPLUS": BinOp.CONCAT, "PLUSDOT": BinOp.FADD,
    "MINUSDOT": BinOp.FSUB, "EQEQ": BinOp.EQ, "BANGEQ": BinOp.NE, "LT": BinOp.LT,
    "GT": BinOp.GT, "LE": BinOp.LE, "GE": BinOp.GE, "LTDOT": BinOp.FLT, "GTDOT": BinOp.FGT,
    "LEDOT": BinOp.FLE, "GEDOT": BinOp.FGE,
}


#: Node constructors for the hot path: ``_X(*fields)`` makes the same node as ``X(...)``
#: (every field positional, in declaration order) at a third of the cost
#: (:func:`chatcommon.records.fast_constructor`).
_Annot = fast_constructor(Annot)
_App = fast_constructor(App)
_Array = fast_constructor(Array)
_ArrayGet = fast_constructor(ArrayGet)
_ArraySet = fast_constructor(ArraySet)
_Deref = fast_constructor(Deref)
_ExprStmt = fast_constructor(ExprStmt)
_Field = fast_constructor(Field)
_FieldGet = fast_constructor(FieldGet)
_If = fast_constructor(If)
_Lambda = fast_constructor(Lambda)
_LetIn = fast_constructor(LetIn)
_LetRec = fast_constructor(LetRec)
_LetRecStmt = fast_constructor(LetRecStmt)
_LetStmt = fast_constructor(LetStmt)
_Match = fast_constructor(Match)
_MatchArm = fast_constructor(MatchArm)
_ModuleStmt = fast_constructor(ModuleStmt)
_OpenStmt = fast_constructor(OpenStmt)
_PField = fast_constructor(PField)
_PRecord = fast_constructor(PRecord)
_Prim1 = fast_constructor(Prim1)
_Prim2 = fast_constructor(Prim2)
_Program = fast_constructor(Program)
_PUnit = fast_constructor(PUnit)
_PVariant = fast_constructor(PVariant)
_PWildcard = fast_constructor(PWildcard)
_RecBinding = fast_constructor(RecBinding)
_Record = fast_constructor(Record)
_RecordExtend = fast_constructor(RecordExtend)
_Ref = fast_constructor(Ref)
_Sequence = fast_constructor(Sequence)
_SetRef = fast_constructor(SetRef)
_TArrow = fast_constructor(TArrow)
_TCase = fast_constructor(TCase)
_TConstr = fast_constructor(TConstr)
_TField = fast_constructor(TField)
_TRecord = fast_constructor(TRecord)
_TVariant = fast_constructor(TVariant)
_TypeStmt = fast_constructor(TypeStmt)
_Unit = fast_constructor(Unit)
_Var = fast_constructor(Var)
_Variant = fast_constructor(Variant)
_While = fast_constructor(While)


class Actions:
    """The semantic actions for one parse of ``source``; warnings go to ``warnings``."""

    def __init__(self, stream: TokenStream, warnings: list[Diagnostic]) -> None:
        self.src = stream.source
        self.tk = stream.kinds
        self.tv = stream.values
        self.ts = stream.starts
        self.te = stream.ends
        self.cont = stream.continuing
        self.stream = stream
        self.warn = parse_warnings.Warner(stream, warnings)
        #: Continuation tokens (`(`, `[`, `-` beginning a line): (token index, start, end).
        self.continuations: list[tuple[int, int, int]] = []

    def _span(self, index: int) -> Span:
        """The span of token ``index``."""
        return Span(self.src, self.ts[index], self.te[index])

    def _lambda(self, params: list[int], body: Any, span: Span) -> Lambda:
        tv = self.tv
        return _Lambda(tuple(tv[i] for i in params), body, span,
                      tuple(self._span(i) for i in params))

    # ------------------------------------------------------------------ program and statements

    def program(self, s: int, e: int, stmts: list[Any]) -> Program:
        return _Program(tuple(stmts), Span(self.src, 0, len(self.src.text)))

    def _statement(self, s: int) -> None:
        if self.continuations:
            self.warn.continuations(s, self.continuations)
            self.continuations = []

    def type_stmt(self, s: int, e: int, _t: int, name: int, _eq: int, typ: Any) -> TypeStmt:
        return _TypeStmt(self.tv[name], typ, Span(self.src, s, e), self._span(name))

    def let_rec_stmt(self, s: int, e: int, _let: int, _rec: int,
                     bindings: list[RecBinding]) -> LetRecStmt:
        self._statement(s)
        return _LetRecStmt(tuple(bindings), Span(self.src, s, e))

    def let_annot_stmt(self, s: int, e: int, _let: int, name: int, _c: int, typ: Any,
                       _eq: int, rhs: Any) -> LetStmt:
        self._statement(s)
        span = Span(self.src, s, e)
        return _LetStmt(self.tv[name], _Annot(rhs, typ, span), span, self._span(name))

    def let_fun_stmt(self, s: int, e: int, _let: int, name: int, params: list[int],
                     _eq: int, body: Any) -> LetStmt:
        self._statement(s)
        span = Span(self.src, s, e)
        return _LetStmt(self.tv[name], self._lambda(params, body, span), span,
                       self._span(name))

    def let_unit_fun_stmt(self, s: int, e: int, _let: int, name: int, _lp: int,
                          _rp: int, _eq: int, body: Any) -> LetStmt:
        self._statement(s)
        span = Span(self.src, s, e)
        return _LetStmt(self.tv[name], _Lambda((), body, span, ()), span, self._span(name))

    def let_stmt(self, s: int, e: int, _let: int, name: int, _eq: int, rhs: Any) -> LetStmt:
        self._statement(s)
        return _LetStmt(self.tv[name], rhs, Span(self.src, s, e), self._span(name))

    def module_stmt(self, s: int, e: int, _m: int, name: int, _eq: int, _st: int,
                    body: list[Any], _end: int) -> ModuleStmt:
        return _ModuleStmt(self.tv[name], tuple(body), Span(self.src, s, e),
                          self._span(name))

    def open_stmt(self, s: int, e: int, _open: int, name: int) -> OpenStmt:
        return _OpenStmt(self.tv[name], Span(self.src, s, e), self._span(name))

    def expr_stmt(self, s: int, e: int, expr: Any) -> ExprStmt:
        self._statement(s)
        return _ExprStmt(expr, Span(self.src, s, e))

    # ------------------------------------------------------------------ recursive bindings

    def rec_annot(self, s: int, e: int, name: int, _c: int, typ: Any, _eq: int,
                  rhs: Any) -> RecBinding:
        span = Span(self.src, s, e)
        return _RecBinding(self.tv[name], _Annot(rhs, typ, span), span, self._span(name))

    def rec_fun(self, s: int, e: int, name: int, params: list[int], _eq: int,
                body: Any) -> RecBinding:
        span = Span(self.src, s, e)
        return _RecBinding(self.tv[name], self._lambda(params, body, span), span,
                          self._span(name))

    def rec_unit_fun(self, s: int, e: int, name: int, _lp: int, _rp: int, _eq: int,
                     body: Any) -> RecBinding:
        span = Span(self.src, s, e)
        return _RecBinding(self.tv[name], _Lambda((), body, span, ()), span, self._span(name))

    def rec_value(self, s: int, e: int, name: int, _eq: int, rhs: Any) -> RecBinding:
        return _RecBinding(self.tv[name], rhs, Span(self.src, s, e), self._span(name))

    # ------------------------------------------------------------------ atoms

    def unit(self, s: int, e: int, _lp: int, _rp: int) -> Unit:
        return _Unit(Span(self.src, s, e))

    def variant(self, s: int, e: int, tag: int) -> Variant:
        return _Variant(self.tv[tag], (), Span(self.src, s, e))

    def variant_args(self, s: int, e: int, tag: int, _lp: int, args: list[Any],
                     _rp: int) -> Variant:
        return _Variant(self.tv[tag], tuple(args), Span(self.src, s, e))

    def array(self, s: int, e: int, _lb: int, elems: list[Any], _rb: int) -> Array:
        return _Array(tuple(elems), Span(self.src, s, e))

    def record(self, s: int, e: int, _lb: int, fields: list[Field], _rb: int) -> Record:
        return _Record(tuple(fields), Span(self.src, s, e))

    def record_extend(self, s: int, e: int, _lb: int, base: Any, _w: int,
                      fields: list[Field], _rb: int) -> RecordExtend:
        return _RecordExtend(base, tuple(fields), Span(self.src, s, e))

    def field(self, s: int, e: int, name: int, _eq: int, value: Any) -> Field:
        return _Field(self.tv[name], value, Span(self.src, s, e))

    # ------------------------------------------------------------------ postfix forms

    def app(self, s: int, e: int, fn: Any, lp: int, args: list[Any], _rp: int) -> App:
        if lp in self.cont:
            self.continuations.append((lp, s, e))
        return _App(fn, tuple(args), Span(self.src, s, e))

    def field_get(self, s: int, e: int, record: Any, _dot: int, label: int) -> FieldGet:
        return _FieldGet(record, self.tv[label], Span(self.src, s, e))

    def method_call(self, s: int, e: int, record: Any, _dot: int, label: int, lp: int,
                    args: list[Any], _rp: int) -> App:
        if lp in self.cont:
            self.continuations.append((lp, s, e))
        span = Span(self.src, s, e)
        return _App(_FieldGet(record, self.tv[label], span), tuple(args), span)

    def array_get(self, s: int, e: int, array: Any, lb: int, index: Any,
                  _rb: int) -> ArrayGet:
        if lb in self.cont:
            self.continuations.append((lb, s, e))
        return _ArrayGet(array, index, Span(self.src, s, e))

    def array_set(self, s: int, e: int, array: Any, lb: int, index: Any, _rb: int,
                  _arrow: int, value: Any) -> ArraySet:
        if lb in self.cont:
            self.continuations.append((lb, s, e))
        return _ArraySet(array, index, value, Span(self.src, s, e))

    # ------------------------------------------------------------------ operators

    def ref(self, s: int, e: int, tok: int, value: Any) -> Ref:
        if type(value) in (Prim2, SetRef, ArraySet) and value.span.end == e:
            self.warn.ref_operand(tok, value, e)
        return _Ref(value, Span(self.src, s, e))

    def deref(self, s: int, e: int, tok: int, operand: Any) -> Deref:
        if type(operand) is SetRef and operand.span.end == e:
            self.warn.assign_operand(s, self.te[tok], operand, e, "!")
        return _Deref(operand, Span(self.src, s, e))

    def set_ref(self, s: int, e: int, target: Any, tok: int, value: Any) -> SetRef:
        node = _SetRef(target, value, Span(self.src, s, e))
        self.warn.assignments[id(node)] = self.ts[tok]
        return node

    def neg(self, s: int, e: int, tok: int, operand: Any) -> Prim1:
        if type(operand) is SetRef and operand.span.end == e:
            self.warn.assign_operand(s, self.te[tok], operand, e, self.tv[tok])
        op = UnOp.NEG_INT if self.tk[tok] == "MINUS" else UnOp.NEG_FLOAT
        return _Prim1(op, operand, Span(self.src, s, e))

    def binop(self, s: int, e: int, left: Any, tok: int, right: Any) -> Prim2:
        if tok in self.cont:
            self.continuations.append((tok, s, e))
        if type(right) is SetRef and right.span.end == e:
            self.warn.assign_right(s, tok, right, e)
        return _Prim2(BINARY_OPERATORS[self.tk[tok]], left, right, Span(self.src, s, e))

    def prefix_bang_eq(self, s: int, e: int, tok: int, _operand: Any) -> Any:
        raise DiagnosticError(Diagnostic.at(
            self._span(tok), "chatml.unsupported_bang_eq", "Unsupported: != as a pattern",
            phase=PHASE,
            hint="`!=` is the binary inequality operator (`a != b`); to negate a boolean "
                 "write `if b then false else true`"))

    def prefix_dot(self, s: int, e: int, tok: int, _operand: Any) -> Any:
        raise DiagnosticError(Diagnostic.at(
            self._span(tok), "chatml.unexpected_dot", "Unexpected '.' expression", phase=PHASE,
            hint="a `.` must follow an expression, as in `record.label` or `Module.name`; "
                 "`open` takes a single module name, and a float needs digits before its "
                 "point (`0.5`)"))

    # ------------------------------------------------------------------ sequences and open forms

    def sequence(self, s: int, e: int, first: Any, tok: int, second: Any) -> Sequence:
        node = _Sequence(first, second, Span(self.src, s, e))
        self.warn.semicolons[id(node)] = self.ts[tok]
        return node

    def fun(self, s: int, e: int, _fun: int, params: list[int], _arrow: int,
            body: Any) -> Lambda:
        if type(body) is Sequence and body.span.end == e:
            self.warn.swallowed(s, body, e, "fun")
        return self._lambda(params, body, Span(self.src, s, e))

    def fun_unit(self, s: int, e: int, _fun: int, _lp: int, _rp: int, _arrow: int,
                 body: Any) -> Lambda:
        if type(body) is Sequence and body.span.end == e:
            self.warn.swallowed(s, body, e, "fun")
        return _Lambda((), body, Span(self.src, s, e), ())

    def if_(self, s: int, e: int, _if: int, cond: Any, _then: int, then_branch: Any,
            _else: int, else_branch: Any) -> If:
        if type(else_branch) is Sequence and else_branch.span.end == e:
            self.warn.swallowed(s, else_branch, e, "else")
        return _If(cond, then_branch, else_branch, Span(self.src, s, e))

    def while_(self, s: int, e: int, _w: int, cond: Any, _do: int, body: Any,
               _done: int) -> While:
        return _While(cond, body, Span(self.src, s, e))

    def match(self, s: int, e: int, _m: int, scrutinee: Any, _with: int,
              arms: list[MatchArm]) -> Match:
        last = arms[-1].body
        if type(last) is Sequence and last.span.end == e:
            self.warn.swallowed(s, last, e, "match")
        return _Match(scrutinee, tuple(arms), Span(self.src, s, e))

    def arm(self, s: int, e: int, _bar: int, pattern: Any, _arrow: int, body: Any) -> MatchArm:
        return _MatchArm(pattern, body, Span(self.src, s, e))

    def let_in(self, s: int, e: int, _let: int, name: int, _eq: int, rhs: Any,
               _in: int, body: Any) -> LetIn:
        return _LetIn(self.tv[name], rhs, body, Span(self.src, s, e),
                     self._span(name))

    def let_fun_in(self, s: int, e: int, _let: int, name: int, params: list[int],
                   _eq: int, rhs: Any, _in: int, body: Any) -> LetIn:
        span = Span(self.src, s, e)
        return _LetIn(self.tv[name], self._lambda(params, rhs, span), body, span,
                     self._span(name))

    def let_unit_fun_in(self, s: int, e: int, _let: int, name: int, _lp: int, _rp: int,
                        _eq: int, rhs: Any, _in: int, body: Any) -> LetIn:
        span = Span(self.src, s, e)
        return _LetIn(self.tv[name], _Lambda((), rhs, span, ()), body, span,
                     self._span(name))

    def let_annot_in(self, s: int, e: int, _let: int, name: int, _c: int, typ: Any,
                     _eq: int, rhs: Any, _in: int, body: Any) -> LetIn:
        span = Span(self.src, s, e)
        return _LetIn(self.tv[name], _Annot(rhs, typ, span), body, span,
                     self._span(name))

    def let_rec_in(self, s: int, e: int, _let: int, _rec: int, bindings: list[RecBinding],
                   _in: int, body: Any) -> LetRec:
        return _LetRec(tuple(bindings), body, Span(self.src, s, e))

    def let_task(self, s: int, e: int, kw: int, binder: tuple[str, Span], _eq: int,
                 rhs: Any, _in: int, body: Any) -> App:
        span = Span(self.src, s, e)
        name, binder_span = binder
        fn = _FieldGet(_Var("Task", span), "bind" if self.tk[kw] == "LETSTAR" else "map", span)
        return _App(fn, (rhs, _Lambda((name,), body, span, (binder_span,))), span)

    def binder_name(self, s: int, e: int, tok: int) -> tuple[str, Span]:
        return self.tv[tok], Span(self.src, s, e)

    def binder_unit(self, s: int, e: int, _lp: int, _rp: int) -> tuple[str, Span]:
        return TASK_UNIT_PARAM, Span(self.src, s, e)

    # ------------------------------------------------------------------ patterns

    def p_wildcard(self, s: int, e: int, _tok: int) -> PWildcard:
        return _PWildcard(Span(self.src, s, e))

    def p_unit(self, s: int, e: int, _lp: int, _rp: int) -> PUnit:
        return _PUnit(Span(self.src, s, e))

    def p_variant(self, s: int, e: int, tag: int) -> PVariant:
        return _PVariant(self.tv[tag], (), Span(self.src, s, e))

    def p_variant_args(self, s: int, e: int, tag: int, _lp: int, args: list[Any],
                       _rp: int) -> PVariant:
        return _PVariant(self.tv[tag], tuple(args), Span(self.src, s, e))

    def p_record_empty(self, s: int, e: int, _lb: int, _rb: int) -> PRecord:
        return _PRecord((), False, Span(self.src, s, e))

    def p_record(self, s: int, e: int, _lb: int, fields: tuple[list[PField], bool],
                 _rb: int) -> PRecord:
        return _PRecord(tuple(fields[0]), fields[1], Span(self.src, s, e))

    def p_closed(self, s: int, e: int, fields: list[PField], *_rest: int) -> tuple[Any, bool]:
        return fields, False

    def p_open(self, s: int, e: int, fields: list[PField], *_rest: int) -> tuple[Any, bool]:
        return fields, True

    def pfield(self, s: int, e: int, name: int, _eq: int, pattern: Any) -> PField:
        return _PField(self.tv[name], pattern, Span(self.src, s, e))

    # ------------------------------------------------------------------ type expressions

    def t_arrow(self, s: int, e: int, param: Any, _arrow: int, result: Any) -> TArrow:
        return _TArrow(param, result, Span(self.src, s, e))

    def t_constr(self, s: int, e: int, arg: Any, name: int) -> TConstr:
        return _TConstr(self.tv[name], (arg,), Span(self.src, s, e))

    def t_record(self, s: int, e: int, _lb: int, fields: list[TField], _rb: int) -> TRecord:
        return _TRecord(tuple(fields), Span(self.src, s, e))

    def t_variant(self, s: int, e: int, _lb: int, cases: list[TCase], _rb: int) -> TVariant:
        return _TVariant(tuple(cases), Span(self.src, s, e))

    def t_field(self, s: int, e: int, name: int, _c: int, typ: Any) -> TField:
        return _TField(self.tv[name], typ, Span(self.src, s, e))

    def t_case(self, s: int, e: int, tag: int) -> TCase:
        return _TCase(self.tv[tag], (), Span(self.src, s, e))

    def t_case_args(self, s: int, e: int, tag: int, _lp: int, types: list[Any],
                    _rp: int) -> TCase:
        return _TCase(self.tv[tag], tuple(types), Span(self.src, s, e))



