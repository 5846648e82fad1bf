"""Unit tests for the ChatML parser: disambiguation (spec 3.3/3.4), desugaring (3.7),
spans, the public API and syntax-error messages."""

from __future__ import annotations

from typing import Any

import pytest

from chatcommon.diagnostics import Diagnostic, DiagnosticError, Severity
from chatcommon.sources import SourceFile
from chatml import ast
from chatml.syntax.parser import ParseResult, parse_program, parse_source

S: Any = None  # spans take no part in equality


def parse(text: str) -> ParseResult:
    return parse_program(text)


def expr(text: str) -> Any:
    """The expression (or let right-hand side) of a one-statement program."""
    stmts = parse(text).program.statements
    assert len(stmts) == 1
    stmt = stmts[0]
    return stmt.expr if isinstance(stmt, ast.ExprStmt) else stmt.rhs


def error(text: str) -> Diagnostic:
    with pytest.raises(DiagnosticError) as raised:
        parse(text)
    return raised.value.first


# Each pair: the source, and the same program with the parser's reading made explicit.
READINGS = [
    ("a + f(x)", "a + (f(x))"),
    ("-x * y", "-(x * y)"),
    ("-x + y", "(-x) + y"),
    ("-x == y", "(-x) == y"),
    ("a * -b * c", "a * (-(b * c))"),
    ("!r + 1", "(!r) + 1"),
    ("!r.x", "!(r.x)"),
    ("!f(x)", "!(f(x))"),
    ("!a[0]", "!(a[0])"),
    ("a - b - c", "(a - b) - c"),
    ("x == y == z", "(x == y) == z"),
    ("r := !r + 1", "r := ((!r) + 1)"),
    ("a + b := c", "a + (b := c)"),
    ("a == b := c", "a == (b := c)"),
    ("x := y := z", "x := (y := z)"),
    ("!r := 1", "!(r := 1)"),
    ("-a := 1", "-(a := 1)"),
    ("a[0] <- 1 + 2", "a[0] <- (1 + 2)"),
    ("a + b[0] <- 1", "a + (b[0] <- 1)"),
    ("!a[0] <- 1", "!(a[0] <- 1)"),
    ("a[i] <- b[j] <- 1", "a[i] <- (b[j] <- 1)"),
    ("ref(0) + 1", "ref ((0) + 1)"),
    ("ref 1 == ref 1", "ref (1 == (ref 1))"),
    ("ref x := 1", "ref (x := 1)"),
    ("(if c then a else b; d)", "(if c then a else (b; d))"),
    ("if c then x else y == z", "if c then x else (y == z)"),
    ("(fun x -> x; y)", "(fun x -> (x; y))"),
    ("1 + if c then 1 else 2 + 3", "1 + (if c then 1 else (2 + 3))"),
    ("if c then a; b else d", "if c then (a; b) else d"),
    ("f(a; b, c)", "f((a; b), c)"),
    ("[a; b, c]", "[(a; b), c]"),
    ("f(fun x -> x, 1)", "f((fun x -> x), 1)"),
    ("`A(1)(2)", "(`A(1))(2)"),
    ("f(x)(y).a[0]", "(((f(x))(y)).a)[0]"),
    ("1 + 2 * 3 - 4", "(1 + (2 * 3)) - 4"),
    ("a ++ b +. c -. d", "((a ++ b) +. c) -. d"),
    ("a < b + c * d", "a < (b + (c * d))"),
    ("-.x *. y", "-.(x *. y)"),
    ("2 - -1", "2 - (-1)"),
]


@pytest.mark.parametrize(("text", "reading"), READINGS)
def test_disambiguation(text: str, reading: str) -> None:
    assert parse(text).program == parse(reading).program


def test_match_arms_belong_to_the_innermost_match() -> None:
    e = expr("match 1 with | 1 -> match 2 with | 2 -> 20 | _ -> 0 | _ -> 5")
    assert isinstance(e, ast.Match) and len(e.arms) == 1
    inner = e.arms[0].body
    assert isinstance(inner, ast.Match) and len(inner.arms) == 3
    first = expr("match x with | 1 -> a; b | _ -> c")
    assert isinstance(first, ast.Match) and isinstance(first.arms[0].body, ast.Sequence)


def test_statement_juxtaposition() -> None:
    program = parse("let f x = x let y = f\n(print(1))").program
    assert len(program.statements) == 2
    y = program.statements[1]
    assert isinstance(y, ast.LetStmt) and isinstance(y.rhs, ast.App)
    two = parse("print(1)\n-1").program.statements
    assert len(two) == 1 and isinstance(two[0].expr, ast.Prim2)
    three = parse("let a = [1]\n[0]").program.statements
    assert isinstance(three[0].rhs, ast.ArrayGet)
    separate = parse("print(1) print(2) !r ref(1) {a = 1} `A \"s\" 3 x").program.statements
    assert len(separate) == 9


def test_let_statement_becomes_expression_before_in() -> None:
    (stmt,) = parse("let x = 1 in print(x)").program.statements
    assert isinstance(stmt, ast.ExprStmt) and isinstance(stmt.expr, ast.LetIn)
    (rec,) = parse("let rec f x = f(x) in f(1)").program.statements
    assert isinstance(rec, ast.ExprStmt) and isinstance(rec.expr, ast.LetRec)
    (body,) = parse("let x = 1 in a; b").program.statements
    assert isinstance(body.expr.body, ast.Sequence)


def test_desugarings() -> None:
    f = parse("let f x y = x").program.statements[0]
    assert f == ast.LetStmt("f", ast.Lambda(("x", "y"), ast.Var("x", S), S), S)
    g = parse("let g () = 1").program.statements[0]
    assert g == ast.LetStmt("g", ast.Lambda((), ast.Int(1, S), S), S)
    h = parse("let h : int = 1").program.statements[0]
    assert h == ast.LetStmt("h", ast.Annot(ast.Int(1, S), ast.TName("int", S), S), S)
    r = parse("let rec k : int -> int = fun n -> n").program.statements[0]
    assert isinstance(r, ast.LetRecStmt) and isinstance(r.bindings[0].rhs, ast.Annot)
    assert expr("e.l(a, b)") == expr("(e.l)(a, b)")
    assert expr("`A()") == ast.Variant("A", (), S)
    assert expr("let* x = a in b") == expr("Task.bind(a, fun x -> b)")
    assert expr("let+ x = a in b") == expr("Task.map(a, fun x -> b)")
    assert expr("let* () = a in b") == expr("Task.bind(a, fun __chatml_task_unit -> b)")


def test_patterns() -> None:
    e = expr("match v with | { a = x; _ } -> 1 | { b = `A(1, _) } -> 2 | {} -> 3 | () -> 4")
    assert isinstance(e, ast.Match)
    p0, p1, p2, p3 = (arm.pattern for arm in e.arms)
    assert isinstance(p0, ast.PRecord) and p0.is_open and p0.fields[0].label == "a"
    assert isinstance(p1, ast.PRecord) and not p1.is_open
    assert p1.fields[0].pattern == ast.PVariant("A", (ast.PInt(1, S), ast.PWildcard(S)), S)
    assert p2 == ast.PRecord((), False, S)
    assert isinstance(p3, ast.PUnit)


def test_type_expressions() -> None:
    text = "type t = state task array -> { a : int; b : [ `X | `Y(int, t) ] } -> unit"
    (stmt,) = parse(text).program.statements
    assert isinstance(stmt, ast.TypeStmt)
    t = stmt.type
    assert isinstance(t, ast.TArrow)
    task = ast.TConstr("task", (ast.TName("state", S),), S)
    assert t.param == ast.TConstr("array", (task,), S)
    assert isinstance(t.result, ast.TArrow) and isinstance(t.result.param, ast.TRecord)
    variant = t.result.param.fields[1].type
    assert isinstance(variant, ast.TVariant) and [c.tag for c in variant.cases] == ["X", "Y"]
    (paren,) = parse("type h = (int -> int) -> bool").program.statements
    assert isinstance(paren.type, ast.TArrow) and isinstance(paren.type.param, ast.TArrow)


def test_modules() -> None:
    text = "module M = struct let x = 1 module N = struct open M end x end"
    (m,) = parse(text).program.statements
    assert isinstance(m, ast.ModuleStmt) and m.name == "M"
    assert [type(s).__name__ for s in m.body] == ["LetStmt", "ModuleStmt", "ExprStmt"]


# ------------------------------------------------------------------ spans


def text_of(span: Any) -> str:
    return span.source.text[span.start : span.end]


def test_spans_follow_the_reference() -> None:
    e = expr("(f)(x)")
    assert isinstance(e, ast.App) and text_of(e.span) == "(f)(x)" and text_of(e.fn.span) == "f"
    call = expr("r.m(1)")
    assert isinstance(call, ast.App) and text_of(call.fn.span) == "r.m(1)"
    stmt = parse("let f x = x + 1").program.statements[0]
    assert isinstance(stmt, ast.LetStmt) and text_of(stmt.rhs.span) == "let f x = x + 1"
    assert stmt.name_span is not None and text_of(stmt.name_span) == "f"
    assert [text_of(s) for s in stmt.rhs.param_spans] == ["x"]
    task = expr("let* x = t in u")
    assert isinstance(task, ast.App)
    assert {text_of(n.span) for n in ast.walk(task) if n is not task.args[0]
            and n is not task.args[1].body} == {"let* x = t in u"}
    m = expr("match v with | `A(x) -> x")
    assert isinstance(m, ast.Match) and text_of(m.arms[0].pattern.span) == "`A(x)"
    assert text_of(m.arms[0].span) == "| `A(x) -> x"
    program = parse("  let x = 1  ").program
    assert text_of(program.statements[0].span) == "let x = 1"


def test_reported_positions_in_an_embedded_script() -> None:
    source = SourceFile("prompt.chatmd", "let x = 1\nprint(x +)", line_offset=4,
                        first_line_column_offset=10)
    with pytest.raises(DiagnosticError) as raised:
        parse_source(source)
    d = raised.value.first
    assert (d.file, d.line, d.column) == ("prompt.chatmd", 6, 10)
    ok = parse_source(SourceFile("p", "let y = 2", line_offset=2, first_line_column_offset=8))
    assert ok.program.statements[0].span.start_position == (3, 9)


def test_api() -> None:
    result = parse_program("print(1)", name="script.chatml")
    assert result.diagnostics == () and result.source.name == "script.chatml"
    source = SourceFile("s", "x")
    assert parse_program("x", source=source).source is source
    with pytest.raises(ValueError):
        parse_program("y", source=source)
    assert parse("").program.statements == ()
    assert parse("(* only a comment *)\n").program.statements == ()


def test_error_comes_first_then_warnings() -> None:
    with pytest.raises(DiagnosticError) as raised:
        parse('print("\\q")\n(x)\nlet = 1')
    codes = [d.code for d in raised.value.diagnostics]
    assert codes[0] == "chatml.syntax_error"
    assert sorted(codes[1:]) == ["chatml.statement_continues", "chatml.unknown_escape"]
    assert all(d.phase == "parse" for d in raised.value.diagnostics)
    with pytest.raises(DiagnosticError) as lexical:
        parse('print("\\q") @')
    assert [d.code for d in lexical.value.diagnostics] == ["chatml.unknown_character",
                                                           "chatml.unknown_escape"]


# ------------------------------------------------------------------ syntax errors


@pytest.mark.parametrize(("text", "line", "column", "message"), [
    ("let x =", 1, 8, "Syntax error: unexpected end of input; expected an expression"),
    ("print(1 2)", 1, 9,
     "Syntax error: unexpected number `2`; expected `)`, `;`, `,` or an operator"),
    ("let f _ = 1", 1, 7,
     "Syntax error: unexpected `_`; expected a lowercase name, `:`, `=` or `(`"),
    ("match x with 1 -> 2", 1, 14, "Syntax error: unexpected number `1`; expected `|`"),
    ("if a then b", 1, 12,
     "Syntax error: unexpected end of input; expected `else`, `;` or an operator"),
    ("let x = 1\n  then", 2, 3, "Syntax error: unexpected keyword `then`"),
    ("type t = ", 1, 10, "Syntax error: unexpected end of input; expected a type"),
    ("x.f <- 1", 1, 5, "Syntax error: unexpected `<-`"),
])
def test_syntax_error_messages(text: str, line: int, column: int, message: str) -> None:
    d = error(text)
    assert d.code == "chatml.syntax_error" and d.severity is Severity.ERROR
    assert (d.line, d.column) == (line, column)
    assert d.message.startswith(message)
    assert d.message.startswith("Syntax error")


@pytest.mark.parametrize(("text", "hint"), [
    ("print(1); print(2)", "cannot be a `;` sequence"),
    ("x.f <- 1", "immutable"),
    ("let x = 1 and y = 2", "only `let rec`"),
    ("module M = struct type t = int end", "only allowed at top level"),
    ("let f _ = 1", "`_unused`"),
    ("match x with 1 -> 2", "starts with `|`"),
    ("a || b", "no `||`"),
    ("{ a = fun x -> x; b = 1 }", "swallowed the `;`"),
    ("if a then b", "needs an `else`"),
    ("f(1, [2", "`[` opened at line 1, column 6 is never closed"),
    ("x *)", "closes no comment"),
    ("let x = 1;; x", "remove `;;`"),
    ("print(A.B.x)", "`open A`"),
])
def test_syntax_error_hints(text: str, hint: str) -> None:
    d = error(text)
    assert d.hint is not None and hint in d.hint


def test_error_productions() -> None:
    d = error("open M.N")
    assert (d.code, d.message, d.column) == ("chatml.unexpected_dot",
                                             "Unexpected '.' expression", 7)
    d = error("!= x")
    assert (d.code, d.message) == ("chatml.unsupported_bang_eq", "Unsupported: != as a pattern")
    assert error(".5").code == "chatml.unexpected_dot"


def test_deep_nesting_does_not_overflow() -> None:
    depth = 20000
    e = expr("(" * depth + "1" + ")" * depth)
    assert e == ast.Int(1, S)
    long = parse("(" + "; ".join(["x"] * 20000) + ")").program
    assert isinstance(long.statements[0].expr, ast.Sequence)
    chain = parse(" + ".join(["1"] * 20000)).program
    assert isinstance(chain.statements[0].expr, ast.Prim2)


# ------------------------------------------------------------------ warnings (DECISIONS 6b)


@pytest.mark.parametrize(("text", "code", "hint"), [
    ("(if c then a else b; d)", "chatml.else_swallows_sequence",
     "this parses as `if c then a else (b; d)`; write `(if c then a else b); d`"),
    ("(fun x -> x; y)", "chatml.fun_swallows_sequence",
     "this parses as `fun x -> (x; y)`; write `(fun x -> x); y`"),
    ("(match x with | _ -> a; b)", "chatml.match_arm_swallows_sequence",
     "this parses as `match x with | _ -> (a; b)`"),
    ("ref 0 + 1", "chatml.ref_precedence", "this parses as `ref (0 + 1)`; write `(ref 0) + 1`"),
    ("ref x := 1 + 2", "chatml.ref_precedence",
     "this parses as `ref (x := 1 + 2)`; write `(ref x) := 1 + 2`"),
    ("a * b + c := d", "chatml.assign_precedence",
     "this parses as `a * b + (c := d)`; write `(a * b + c) := d`"),
    ("!r := 1", "chatml.assign_precedence", "this parses as `!(r := 1)`; write `(!r) := 1`"),
    ("f\n(g)", "chatml.statement_continues", "this parses as `f (g)`"),
])
def test_warning_hints(text: str, code: str, hint: str) -> None:
    (warning,) = parse(text).diagnostics
    assert warning.code == code and warning.severity is Severity.WARNING
    assert warning.hint is not None and warning.hint.startswith(hint)


@pytest.mark.parametrize("text", [
    "(if c then a else (b; d))",
    "let z = (if c then a else b); d",
    "(fun x -> (x; y))",
    "(match x with | 1 -> a; b | _ -> c)",
    "ref(0 + 1)",
    "(ref 0) + 1",
    "r := !r + 1",
    "x := y := z",
    "let run () = f(); g()",
    "let x = 1 in a; b",
    "f(\n(g))",
    "let total = a\n  - b",
    "f(x)\n  (g)",
])
def test_no_warning(text: str) -> None:
    assert parse(text).diagnostics == ()
