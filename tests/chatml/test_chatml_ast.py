"""The syntax tree: equality ignores positions, nodes are frozen, traversal helpers."""

from __future__ import annotations

import attrs
import pytest

from chatml import ast
from chatml.syntax.parser import parse_program


def test_equality_ignores_spans_and_layout() -> None:
    a = parse_program("let f x = x + 1").program
    b = parse_program("(* layout *)\nlet f x =\n    x+1  ").program
    assert a == b and hash(a) == hash(b)
    assert a.statements[0].span != b.statements[0].span


def test_nodes_are_frozen_and_slotted() -> None:
    node = parse_program("x").program.statements[0]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        node.expr = None  # type: ignore[misc]
    for cls in ast.NODE_CLASSES:
        assert "__slots__" in cls.__dict__, cls
        assert attrs.fields(cls)[-1].name in ("span", "param_spans", "name_span")


def test_walk_and_children() -> None:
    program = parse_program("let f x = match x with | `A(y) -> [y; 1, 2] | _ -> f(x)").program
    kinds = [type(n).__name__ for n in ast.walk(program)]
    assert kinds[:4] == ["Program", "LetStmt", "Lambda", "Match"]
    assert "PVariant" in kinds and "Sequence" in kinds and "App" in kinds
    (stmt,) = ast.children(program)
    assert isinstance(stmt, ast.LetStmt)


def test_binop_levels() -> None:
    assert ast.BinOp.MUL.level == 30 and ast.BinOp.CONCAT.level == 20
    assert ast.BinOp.FGE.level == 10 and ast.BinOp.FGE.symbol == ">=."


def test_structural_pattern_matching() -> None:
    (stmt,) = parse_program("a + 1").program.statements
    match stmt:
        case ast.ExprStmt(expr=ast.Prim2(op=ast.BinOp.ADD, left=ast.Var(name=name))):
            assert name == "a"
        case _:
            raise AssertionError("no match")
