"""Unit tests of the typechecker's building blocks (chatml/typecheck/*)."""

from __future__ import annotations

import pytest

from chatml import ast
from chatml.syntax.parser import parse_program
from chatml.typecheck import errors
from chatml.typecheck.bindings import is_function, is_nonexpansive
from chatml.typecheck.checker import generalize_all
from chatml.typecheck.environment import ValueEnv
from chatml.typecheck.equality import unsupported_equality
from chatml.typecheck.exhaustiveness import is_total
from chatml.typecheck.modules import free_variables
from chatml.typecheck.pattern_display import format_float, ocaml_escape, show_pattern
from chatml.typecheck.records import join
from chatml.typecheck.schemes import Scheme, instantiate
from chatml.typecheck.types import (
    GENERIC,
    INT,
    RECORD,
    ROW_EMPTY,
    STRING,
    Row,
    TArray,
    TFun,
    TRecord,
    TRef,
    TTuple,
    TVar,
    TVariant,
    flatten_row,
    make_row,
    resolve,
    show_type,
    task_of,
)
from chatml.typecheck.unify import UnifyError, unify


def _expr(source: str) -> ast.Expr:
    stmt = parse_program(f"let it = {source}").program.statements[0]
    assert isinstance(stmt, ast.LetStmt)
    return stmt.rhs


def _pattern(source: str) -> ast.Pattern:
    match = _expr(f"match v with | {source} -> 0")
    assert isinstance(match, ast.Match)
    return match.arms[0].pattern


# --------------------------------------------------------------------------- schemes


def test_each_instance_has_fresh_variables_and_shares_ground_parts() -> None:
    a = TVar(GENERIC)
    ground = TArray(STRING)
    scheme = Scheme(TFun((a, ground), a))
    first, second, third = (scheme.instantiate(3) for _ in range(3))
    for instance in (first, second, third):
        assert isinstance(instance, TFun)
        assert instance.params[0] is instance.result
        assert instance.params[1] is ground
        assert isinstance(instance.result, TVar) and instance.result.level == 3
    assert first.params[0] is not second.params[0] is not third.params[0]  # type: ignore[attr-defined]


def test_instantiation_leaves_weak_variables_shared_and_survives_cycles() -> None:
    weak = TVar(0)
    cyclic = TVar(0)
    cyclic.link = TVariant(Row({"Next": TTuple((cyclic,))}, TVar(0)))
    body = TFun((TVar(GENERIC), weak), cyclic)
    copy = instantiate(body, 1)
    assert isinstance(copy, TFun)
    assert copy.params[1] is weak
    assert resolve(copy.result) is resolve(cyclic)


def test_generalisation_follows_the_value_restriction() -> None:
    inner = TVar(1)
    (entry,) = generalize_all((TFun((inner,), inner),), 0, nonexpansive=True)
    assert isinstance(entry, Scheme) and inner.level == GENERIC
    weak = TVar(1)
    (mono,) = generalize_all((TRef(weak),), 0, nonexpansive=False)
    assert not isinstance(mono, Scheme) and weak.level == 0


def test_types_holding_a_cycle_are_never_generalised() -> None:
    var, cyclic = TVar(1), TVar(1)
    cyclic.link = TRecord(Row({"next": cyclic, "v": var}, ROW_EMPTY), RECORD)
    (entry,) = generalize_all((cyclic,), 0, nonexpansive=True)
    assert not isinstance(entry, Scheme) and var.level == 0


def test_value_environment_undoes_to_a_mark() -> None:
    env = ValueEnv()
    env.bind("x", INT)
    mark = env.mark()
    env.bind("x", STRING)
    env.bind("y", INT)
    env.undo(mark)
    assert env.get("x") is INT and "y" not in env


# --------------------------------------------------------------------------- expressions


@pytest.mark.parametrize(("source", "expected"), [
    ("1", True), ("fun x -> x", True), ("{ a = 1; b = fun x -> x }", True), ("`A(1, y)", True),
    ("[1]", False), ("ref(1)", False), ("f(1)", False), ("{ a = [1] }", False),
    ("if c then 1 else 2", False), ("r.x", False), ("(1; 2)", False),
])
def test_which_expressions_are_nonexpansive(source: str, expected: bool) -> None:
    assert is_nonexpansive(_expr(source)) is expected


def test_let_rec_accepts_lambdas_and_annotated_lambdas_only() -> None:
    assert is_function(_expr("fun x -> x"))
    stmt = parse_program("let f : int -> int = fun x -> x").program.statements[0]
    assert isinstance(stmt, ast.LetStmt) and is_function(stmt.rhs)
    assert not is_function(_expr("1"))


def test_free_variables_respect_every_binder() -> None:
    expr = _expr("fun a -> let b = a + c in match b with | `P(d) -> d + e | _ -> "
                 "(let rec g x = g(x) in g(f))")
    assert set(free_variables(expr)) == {"c", "e", "f"}
    spans = free_variables(_expr("x + x"))
    assert list(spans) == ["x"] and spans["x"].text == "x"


# --------------------------------------------------------------------------- records


def test_join_keeps_common_fields_and_a_common_tail() -> None:
    tail = TVar(0)
    a = TRecord(make_row({"x": INT, "y": STRING}, tail), RECORD)
    b = TRecord(make_row({"x": INT, "z": INT}, tail), RECORD)
    joined = join(a, b)
    fields, joined_tail = flatten_row(joined.row)  # type: ignore[attr-defined]
    assert list(fields) == ["x"] and joined_tail is tail
    closed = join(TRecord(make_row({"x": INT}, TVar(0)), RECORD),
                  TRecord(make_row({"x": INT}, TVar(0)), RECORD))
    assert show_type(closed) == "{x: int}"


def test_join_of_non_records_unifies() -> None:
    var = TVar(0)
    assert join(var, INT) is var and resolve(var) is INT
    with pytest.raises(UnifyError):
        join(INT, STRING)


# --------------------------------------------------------------------------- equality, matches


@pytest.mark.parametrize(("type_", "kind"), [
    (INT, None),
    (TRecord(make_row({"a": INT, "b": TVariant(Row({"A": TTuple((STRING,))}, TVar(0)))},
                      ROW_EMPTY), RECORD), None),
    (TArray(INT), "arrays"),
    (TRef(INT), "refs"),
    (TFun((), INT), "functions"),
    (task_of(INT), "Task values"),
    (TVariant(Row({"Some": TTuple((TArray(INT),))}, TVar(0))), "arrays"),
])
def test_equality_accepts_data_only(type_: object, kind: str | None) -> None:
    assert unsupported_equality(type_) == kind  # type: ignore[arg-type]


def test_totality_of_patterns() -> None:
    record = TRecord(make_row({"a": INT, "b": STRING}, ROW_EMPTY), RECORD)
    assert is_total(_pattern("_"), INT) and is_total(_pattern("x"), INT)
    assert is_total(_pattern("{ a = x; _ }"), record)
    assert is_total(_pattern("{ a = x; b = y }"), record)
    assert not is_total(_pattern("{ a = 1; _ }"), record)
    assert not is_total(_pattern("{ a = x }"), record)
    assert not is_total(_pattern("`A"), INT)


@pytest.mark.parametrize(("value", "text"), [
    (7.0, "7."), (0.1, "0.1"), (-1.25, "-1.25"), (1e20, "1e+20"), (1.0 / 3.0, "0.33333333333333331"),
    (float("nan"), "nan"), (float("-inf"), "-inf"),
])
def test_floats_display_as_the_runtime_prints_them(value: float, text: str) -> None:
    assert format_float(value) == text


def test_patterns_display_as_the_reference_shows_them() -> None:
    assert [show_pattern(_pattern(p)) for p in
            ("_", "x", "()", "42", "true", "1.5", '"a\\"b\\n"', "`A", "`A(x, y)", "{ a = x }")
            ] == ["_", "x", "()", "42", "true", "1.5", '"a\\"b\\n"', "`A", "`A(...)", "{...}"]
    assert ocaml_escape("é\t") == "\\195\\169\\t"


def test_the_error_catalogue_is_complete_and_documented() -> None:
    assert len(ALL := errors.ALL_CODES) == len(set(ALL))
    assert all(code.startswith("chatml.") for code in ALL)
    documented = errors.__doc__ or ""
    assert all(f"``{code}``" in documented for code in ALL)


def test_unify_reports_what_it_compared() -> None:
    with pytest.raises(UnifyError) as info:
        unify(TFun((INT,), INT), TFun((STRING,), INT))
    assert (info.value.left, info.value.right) == (INT, STRING)


# --------------------------------------------------------------------------- exactness


def test_exactness_cells_merge_spread_and_conflict() -> None:
    from chatml.typecheck.exactness import (
        can_become_inexact,
        depends,
        mark_inexact,
        merge,
        rely,
        root,
    )
    from chatml.typecheck.types import Exactness

    base, copy, other = Exactness(), Exactness(), Exactness()
    assert depends(base, copy)
    assert merge(base, other) and root(base) is root(other)
    assert mark_inexact(other)
    assert root(copy).inexact and root(base).inexact
    relied = Exactness()
    assert rely(relied) and not can_become_inexact(relied)
    assert not merge(relied, base)
    assert not rely(copy)
    chained, target = Exactness(), Exactness()
    depends(chained, target)
    rely(target)
    assert not can_become_inexact(chained)
    assert not mark_inexact(chained)
