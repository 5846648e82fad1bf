"""The Pratt-style parsing algorithm of spec 3.3, written out directly: a test oracle.

The spec says this recursive-descent description reproduces the reference
grammar's results exactly. The LALR parser in :mod:`chatml.syntax.parser` gets the
same results from precedence declarations; the property tests parse random
operator soups with both and compare. Spans are not computed (every node gets
one dummy span, and spans take no part in equality). Type annotations are
not supported here (the generated inputs have none).
"""

from __future__ import annotations

from typing import Any

from chatcommon.sources import SourceFile, Span
from chatml import ast
from chatml.syntax.lexer import TokenStream, lex
from chatml.syntax.parse_actions import BINARY_OPERATORS
from chatml.syntax.tokens import COMPARISON_OPS, EOF, MULTIPLICATIVE_OPS


class OracleError(Exception):
    """The oracle rejects the input (a syntax error)."""


def _lbp(kind: str) -> int:
    if kind == "COLONEQ":
        return 100
    if kind in COMPARISON_OPS:
        return 10
    if kind in MULTIPLICATIVE_OPS:
        return 30
    if kind in BINARY_OPERATORS:
        return 20
    return -1


class Oracle:
    def __init__(self, stream: TokenStream) -> None:
        self.kinds = stream.kinds
        self.values = stream.values
        self.i = 0
        self.sp = Span(stream.source, 0, 0)

    # ------------------------------------------------------------------ token access

    def peek(self, ahead: int = 0) -> str:
        return self.kinds[min(self.i + ahead, len(self.kinds) - 1)]

    def take(self) -> Any:
        value = self.values[self.i]
        self.i += 1
        return value

    def expect(self, kind: str) -> Any:
        if self.peek() != kind:
            raise OracleError(f"expected {kind}, found {self.peek()} at token {self.i}")
        return self.take()

    # ------------------------------------------------------------------ statements

    def program(self) -> ast.Program:
        stmts = []
        while self.peek() != EOF:
            stmts.append(self.statement())
        return ast.Program(tuple(stmts), self.sp)

    def statement(self) -> Any:
        kind = self.peek()
        if kind == "OPEN":
            self.take()
            return ast.OpenStmt(self.expect("UIDENT"), self.sp)
        if kind == "MODULE":
            self.take()
            name = self.expect("UIDENT")
            self.expect("EQ")
            self.expect("STRUCT")
            body = []
            while self.peek() != "END":
                if self.peek() == EOF:
                    raise OracleError("unterminated struct")
                body.append(self.statement())
            self.take()
            return ast.ModuleStmt(name, tuple(body), self.sp)
        if kind == "LET" and self.peek(1) == "REC":
            self.take()
            self.take()
            bindings = self.rec_bindings()
            if self.peek() == "IN":
                self.take()
                return ast.ExprStmt(ast.LetRec(bindings, self.seq(), self.sp), self.sp)
            return ast.LetRecStmt(bindings, self.sp)
        if kind == "LET":
            self.take()
            name, rhs = self.binding()
            if self.peek() == "IN":
                self.take()
                return ast.ExprStmt(ast.LetIn(name, rhs, self.seq(), self.sp), self.sp)
            return ast.LetStmt(name, rhs, self.sp)
        return ast.ExprStmt(self.expr(0), self.sp)

    def binding(self) -> tuple[str, Any]:
        name = self.expect("LIDENT")
        if self.peek() == "LPAREN":
            self.take()
            self.expect("RPAREN")
            self.expect("EQ")
            return name, ast.Lambda((), self.seq(), self.sp)
        params = []
        while self.peek() == "LIDENT":
            params.append(self.take())
        self.expect("EQ")
        body = self.seq()
        return name, ast.Lambda(tuple(params), body, self.sp) if params else body

    def rec_bindings(self) -> tuple[ast.RecBinding, ...]:
        bindings = [ast.RecBinding(*self.binding(), self.sp)]
        while self.peek() == "AND":
            self.take()
            bindings.append(ast.RecBinding(*self.binding(), self.sp))
        return tuple(bindings)

    # ------------------------------------------------------------------ expressions

    def seq(self) -> Any:
        e = self.expr(0)
        if self.peek() == "SEMI":
            self.take()
            return ast.Sequence(e, self.seq(), self.sp)
        return e

    def expr(self, minimum: int) -> Any:
        left = self.prefix()
        while _lbp(self.peek()) > minimum:
            kind = self.peek()
            self.take()
            if kind == "COLONEQ":
                left = ast.SetRef(left, self.expr(0), self.sp)
            else:
                left = ast.Prim2(BINARY_OPERATORS[kind], left, self.expr(_lbp(kind)), self.sp)
        return left

    def prefix(self) -> Any:
        kind = self.peek()
        if kind == "REF":
            self.take()
            return ast.Ref(self.expr(0), self.sp)
        if kind == "BANG":
            self.take()
            return ast.Deref(self.expr(40), self.sp)
        if kind in ("MINUS", "MINUSDOT"):
            self.take()
            op = ast.UnOp.NEG_INT if kind == "MINUS" else ast.UnOp.NEG_FLOAT
            return ast.Prim1(op, self.expr(20), self.sp)
        if kind in ("BANGEQ", "DOT"):
            raise OracleError("error production")
        if kind == "FUN":
            self.take()
            if self.peek() == "LPAREN":
                self.take()
                self.expect("RPAREN")
                params: tuple[str, ...] = ()
            else:
                names = [self.expect("LIDENT")]
                while self.peek() == "LIDENT":
                    names.append(self.take())
                params = tuple(names)
            self.expect("ARROW")
            return ast.Lambda(params, self.seq(), self.sp)
        if kind == "IF":
            self.take()
            cond = self.seq()
            self.expect("THEN")
            then = self.seq()
            self.expect("ELSE")
            return ast.If(cond, then, self.seq(), self.sp)
        if kind == "MATCH":
            self.take()
            scrutinee = self.seq()
            self.expect("WITH")
            arms = []
            while True:
                self.expect("BAR")
                pattern = self.pattern()
                self.expect("ARROW")
                arms.append(ast.MatchArm(pattern, self.seq(), self.sp))
                if self.peek() != "BAR":
                    break
            return ast.Match(scrutinee, tuple(arms), self.sp)
        if kind == "LET":
            self.take()
            if self.peek() == "REC":
                self.take()
                bindings = self.rec_bindings()
                self.expect("IN")
                return ast.LetRec(bindings, self.seq(), self.sp)
            name, rhs = self.binding()
            self.expect("IN")
            return ast.LetIn(name, rhs, self.seq(), self.sp)
        if kind in ("LETSTAR", "LETPLUS"):
            self.take()
            if self.peek() == "LPAREN":
                self.take()
                self.expect("RPAREN")
                name = ast.TASK_UNIT_PARAM
            else:
                name = self.expect("LIDENT")
            self.expect("EQ")
            rhs = self.seq()
            self.expect("IN")
            body = self.seq()
            fn = ast.FieldGet(ast.Var("Task", self.sp), "bind" if kind == "LETSTAR" else "map",
                              self.sp)
            return ast.App(fn, (rhs, ast.Lambda((name,), body, self.sp)), self.sp)
        return self.postfix(self.atom())

    def postfix(self, e: Any) -> Any:
        while True:
            kind = self.peek()
            if kind == "LPAREN":
                self.take()
                e = ast.App(e, self.args("RPAREN"), self.sp)
            elif kind == "DOT":
                self.take()
                e = ast.FieldGet(e, self.expect("LIDENT"), self.sp)
            elif kind == "LBRACKET":
                self.take()
                index = self.expr(0)
                self.expect("RBRACKET")
                if self.peek() == "LEFTARROW":
                    self.take()
                    return ast.ArraySet(e, index, self.expr(0), self.sp)
                e = ast.ArrayGet(e, index, self.sp)
            else:
                return e

    def args(self, closer: str) -> tuple[Any, ...]:
        items: list[Any] = []
        if self.peek() == closer:
            self.take()
            return ()
        items.append(self.seq())
        while self.peek() == "COMMA":
            self.take()
            items.append(self.seq())
        self.expect(closer)
        return tuple(items)

    def fields(self) -> tuple[ast.Field, ...]:
        fields = []
        while True:
            label = self.expect("LIDENT")
            self.expect("EQ")
            fields.append(ast.Field(label, self.expr(0), self.sp))
            if self.peek() != "SEMI":
                break
            self.take()
            if self.peek() == "RBRACE":
                break
        self.expect("RBRACE")
        return tuple(fields)

    def atom(self) -> Any:
        kind = self.peek()
        literal = {"INT": ast.Int, "FLOAT": ast.Float, "BOOL": ast.Bool, "STRING": ast.String,
                   "LIDENT": ast.Var, "UIDENT": ast.Var}.get(kind)
        if literal is not None:
            return literal(self.take(), self.sp)
        if kind == "TAG":
            tag = self.take()
            if self.peek() == "LPAREN":
                self.take()
                return ast.Variant(tag, self.args("RPAREN"), self.sp)
            return ast.Variant(tag, (), self.sp)
        if kind == "LPAREN":
            self.take()
            if self.peek() == "RPAREN":
                self.take()
                return ast.Unit(self.sp)
            e = self.seq()
            self.expect("RPAREN")
            return e
        if kind == "LBRACKET":
            self.take()
            return ast.Array(self.args("RBRACKET"), self.sp)
        if kind == "LBRACE":
            self.take()
            if self.peek() == "RBRACE":
                self.take()
                return ast.Record((), self.sp)
            if self.peek() == "LIDENT" and self.peek(1) == "EQ":
                return ast.Record(self.fields(), self.sp)
            base = self.seq()
            self.expect("WITH")
            return ast.RecordExtend(base, self.fields(), self.sp)
        if kind == "WHILE":
            self.take()
            cond = self.seq()
            self.expect("DO")
            body = self.seq()
            self.expect("DONE")
            return ast.While(cond, body, self.sp)
        raise OracleError(f"unexpected {kind} at token {self.i}")

    # ------------------------------------------------------------------ patterns

    def pattern(self) -> Any:
        kind = self.peek()
        if kind == "UNDERSCORE":
            self.take()
            return ast.PWildcard(self.sp)
        literal = {"LIDENT": ast.PVar, "INT": ast.PInt, "FLOAT": ast.PFloat, "BOOL": ast.PBool,
                   "STRING": ast.PString}.get(kind)
        if literal is not None:
            return literal(self.take(), self.sp)
        if kind == "LPAREN":
            self.take()
            self.expect("RPAREN")
            return ast.PUnit(self.sp)
        if kind == "TAG":
            tag = self.take()
            if self.peek() != "LPAREN":
                return ast.PVariant(tag, (), self.sp)
            self.take()
            items = [self.pattern()]
            while self.peek() == "COMMA":
                self.take()
                items.append(self.pattern())
            self.expect("RPAREN")
            return ast.PVariant(tag, tuple(items), self.sp)
        if kind == "LBRACE":
            self.take()
            fields: list[ast.PField] = []
            is_open = False
            while self.peek() != "RBRACE":
                if fields and self.peek() == "UNDERSCORE":
                    self.take()
                    is_open = True
                    if self.peek() == "SEMI":
                        self.take()
                    break
                label = self.expect("LIDENT")
                self.expect("EQ")
                fields.append(ast.PField(label, self.pattern(), self.sp))
                if self.peek() != "SEMI":
                    break
                self.take()
            self.expect("RBRACE")
            return ast.PRecord(tuple(fields), is_open, self.sp)
        raise OracleError(f"unexpected {kind} in a pattern")


def oracle_parse(text: str) -> ast.Program:
    """Parse ``text`` with the spec's algorithm; raises OracleError (or DiagnosticError when
    lexing fails)."""
    stream, _ = lex(SourceFile("<oracle>", text))
    return Oracle(stream).program()
