"""Unit tests for the printer: minimal parentheses, literals, and trees it must refuse."""

from __future__ import annotations

from typing import Any

import pytest

from chatml import ast
from chatml.syntax.parser import parse_program
from chatml.syntax.printer import PrinterError, print_expr, print_program, print_type

S: Any = None


def round_trip(text: str) -> str:
    program = parse_program(text).program
    printed = print_program(program)
    assert parse_program(printed).program == program
    return printed


@pytest.mark.parametrize(("text", "printed"), [
    ("let x = 1 + 2 * 3", "let x = 1 + 2 * 3\n"),
    ("let x = (1 + 2) * 3", "let x = (1 + 2) * 3\n"),
    ("let x = a - (b - c)", "let x = a - (b - c)\n"),
    ("let x = (-a) * b", "let x = (-a) * b\n"),
    ("let x = -(a * b)", "let x = -a * b\n"),
    ("let x = (!r) := 1", "let x = (!r) := 1\n"),
    ("let x = !(r := 1) + 2", "let x = !(r := 1) + 2\n"),
    ("let x = (ref 0) + 1", "let x = (ref 0) + 1\n"),
    ("let x = (if c then a else b); d", "let x = (if c then a else b); d\n"),
    ("let x = (fun y -> y)(1)", "let x = (fun y -> y)(1)\n"),
    ("let x = (`A)(1)", "let x = `A()(1)\n"),
    ("let x = { a = (fun y -> y); b = 1 }", "let x = { a = (fun y -> y); b = 1 }\n"),
    ("let f x y = x", "let f x y = x\n"),
    ("let t = let* v = a in b", "let t = Task.bind(a, fun v -> b)\n"),
    ("let m = match a with | 1 -> (match b with | _ -> 2) | _ -> 3",
     "let m = match a with | 1 -> (match b with | _ -> 2) | _ -> 3\n"),
    ("module M = struct let x = 1 end", "module M = struct\n  let x = 1\nend\n"),
    ("type t = (int -> int) -> int array", "type t = (int -> int) -> int array\n"),
    ("let a = --x", "let a = - -x\n"),
])
def test_minimal_parentheses(text: str, printed: str) -> None:
    assert round_trip(text) == printed


def test_statements_starting_with_a_parenthesis_keep_their_position() -> None:
    assert round_trip("open M\n(fun x -> x)(1)") == "open M\n(fun x -> x)(1)\n"
    assert round_trip("(print(1); print(2))") == "(print(1); print(2))\n"


def test_literals() -> None:
    assert round_trip('let s = "a\\"b\\\\c\\nd\\te\\q"') == 'let s = "a\\"b\\\\c\\nd\\te\\\\q"\n'
    for value in (0.1, 1e300, 5e-324, 123456789.0, 2.5):
        e = print_expr(ast.Float(value, S))
        (stmt,) = parse_program(f"let x = {e}").program.statements
        assert isinstance(stmt, ast.LetStmt) and stmt.rhs == ast.Float(value, S)
    huge = "9" * 400 + ".0"
    assert print_expr(ast.Float(float("inf"), S)) == huge


@pytest.mark.parametrize("program", [
    ast.Program((ast.ExprStmt(ast.Var("x", S), S),
                 ast.ExprStmt(ast.Prim1(ast.UnOp.NEG_INT, ast.Int(1, S), S), S)), S),
    ast.Program((ast.TypeStmt("t", ast.TName("int", S), S), ast.ExprStmt(ast.Var("x", S), S)),
                S),
    ast.Program((ast.ExprStmt(ast.Annot(ast.Int(1, S), ast.TName("int", S), S), S),), S),
    ast.Program((ast.ExprStmt(ast.String("a\rb", S), S),), S),
    ast.Program((ast.ExprStmt(ast.Int(-1, S), S),), S),
    ast.Program((ast.ExprStmt(ast.Var("let", S), S),), S),
    ast.Program((ast.ModuleStmt("M", (ast.TypeStmt("t", ast.TName("int", S), S),), S),), S),
    ast.Program((ast.ExprStmt(ast.Match(ast.Var("x", S), (ast.MatchArm(
        ast.PRecord((), True, S), ast.Int(1, S), S),), S), S),), S),
])
def test_trees_without_source_text_are_refused(program: ast.Program) -> None:
    with pytest.raises(PrinterError):
        print_program(program)


def test_print_type() -> None:
    t = ast.TArrow(ast.TArrow(ast.TName("a", S), ast.TName("b", S), S), ast.TName("c", S), S)
    assert print_type(t) == "(a -> b) -> c"
