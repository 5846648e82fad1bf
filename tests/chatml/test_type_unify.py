"""Unification (chatml.typecheck.unify): errors, rows, levels, cycles and recursive types."""

from __future__ import annotations

import pytest

from chatml.typecheck.types import (
    INT,
    RECORD,
    ROW_EMPTY,
    STRING,
    ModuleFlavor,
    Row,
    TArray,
    TConstr,
    TFun,
    TMu,
    TRecord,
    TRecVar,
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


def record(fields: dict, tail=ROW_EMPTY, flavor=RECORD) -> TRecord:  # type: ignore[no-untyped-def,type-arg]
    return TRecord(make_row(fields, tail), flavor)


def variant(cases: dict, tail=ROW_EMPTY) -> TVariant:  # type: ignore[no-untyped-def,type-arg]
    return TVariant(make_row({tag: TTuple(tuple(args)) for tag, args in cases.items()}, tail))


def failure(a, b) -> UnifyError:  # type: ignore[no-untyped-def]
    with pytest.raises(UnifyError) as info:
        unify(a, b)
    return info.value


def test_variables_bind_and_equal_types_unify() -> None:
    var = TVar(0)
    unify(var, TArray(INT))
    assert show_type(var) == "int array"
    unify(TArray(var), TArray(TArray(INT)))


def test_mismatches_report_the_innermost_pair() -> None:
    error = failure(TArray(INT), TArray(STRING))
    assert error.code == "chatml.type_mismatch"
    assert error.message == "Cannot unify int with string"
    assert failure(TRef(INT), INT).message == "Cannot unify ref(int) with int"


def test_function_arity_and_constructor_errors() -> None:
    assert failure(TFun((INT,), INT), TFun((INT, INT), INT)).message == "Function arity mismatch"
    assert failure(task_of(INT), TConstr("other", (INT,))).message == "Type constructor mismatch"
    assert failure(TTuple((INT,)), TTuple((INT, INT))).message == "Tuple arity mismatch"


def test_a_closed_row_cannot_gain_labels_and_an_open_one_can() -> None:
    error = failure(record({"name": STRING}), record({"age": INT}, TVar(0)))
    assert error.message == "Row does not contain label 'age'"
    open_record = record({"name": STRING}, TVar(0))
    unify(open_record, record({"name": STRING, "age": INT}))
    fields, tail = flatten_row(open_record.row)
    assert set(fields) == {"name", "age"} and tail is ROW_EMPTY


def test_two_open_rows_share_a_fresh_tail() -> None:
    left_tail, right_tail = TVar(0), TVar(0)
    left = record({"a": INT}, left_tail)
    right = record({"b": STRING}, right_tail)
    unify(left, right)
    left_fields, left_end = flatten_row(left.row)
    right_fields, right_end = flatten_row(right.row)
    assert set(left_fields) == set(right_fields) == {"a", "b"}
    assert left_end is right_end and isinstance(left_end, TVar)


def test_a_tail_bound_while_the_common_labels_unify_keeps_the_labels_it_got() -> None:
    # The left row's tail also types the payload of `A`: unifying `A` binds it
    # to [`X | ...]; the label `B` only the right row has must then be unified
    # with that binding (the tail is a row now), not replace it.
    tail = TVar(0)
    left = variant({"A": [TVariant(tail)]}, tail)
    right = variant({"A": [variant({"X": []}, TVar(0))], "B": []}, TVar(0))
    unify(left, right)
    fields, end = flatten_row(left.row)
    assert set(fields) == {"A", "X", "B"} and isinstance(end, TVar)
    assert set(flatten_row(right.row)[0]) == {"A", "X", "B"}


def test_a_row_variable_cannot_occur_in_its_own_tail() -> None:
    tail = TVar(0)
    error = failure(record({"a": INT}, tail), record({"b": INT}, tail))
    assert error.message == "Recursive row types"


def test_occurs_check_through_a_function_is_rejected() -> None:
    var = TVar(0)
    error = failure(var, TFun((var,), INT))
    assert error.code == "chatml.recursive_type" and error.message == "Recursive types"
    assert failure(var, TRef(var)).message == "Recursive types"


def test_guarded_cycles_through_data_are_allowed_and_unification_terminates() -> None:
    a, b = TVar(0), TVar(0)
    unify(a, variant({"Add": [a, a], "Int": [INT]}, TVar(0)))
    unify(b, variant({"Add": [b, b], "Int": [INT]}, TVar(0)))
    unify(a, b)  # two distinct cyclic types: must not loop
    unify(TArray(a), TArray(b))
    assert "'rec" in show_type(a)


def test_binding_lowers_the_levels_of_free_variables() -> None:
    outer, inner = TVar(0), TVar(5)
    unify(outer, TArray(inner))
    assert inner.level == 0
    for first, second in ((TVar(1), TVar(4)), (TVar(4), TVar(1))):
        unify(first, second)
        assert resolve(first).level == 1  # type: ignore[attr-defined]


def test_mu_types_unfold_and_compare_structurally() -> None:
    def expr() -> TMu:
        return TMu("e", variant({"Int": [INT], "Add": [TRecVar("e"), TRecVar("e")]}))

    first, second = expr(), expr()
    unify(first, second)
    var = TVar(0)
    unify(var, variant({"Int": [INT]}, TVar(0)))
    unify(first, var)
    error = failure(first, INT)
    assert show_type(error.left) == "mu e. [`Add(e, e) | `Int(int)]"  # type: ignore[arg-type]


def test_a_failed_unification_leaves_a_bound_variable_as_it_was() -> None:
    closed = variant({"None": [], "Some": [INT]})
    param = TVar(0)
    param.link = closed
    failure(param, variant({"Other": []}, TVar(0)))
    assert resolve(param) is closed


def test_unified_records_share_their_exactness() -> None:
    from chatml.typecheck.exactness import mark_inexact, rely, root

    literal, annotation = record({"a": INT}), record({"a": INT})
    unify(literal, annotation)
    assert root(literal.exact) is root(annotation.exact)
    assert rely(annotation.exact)
    wider = record({"a": INT})
    assert mark_inexact(wider.exact)
    error = failure(literal, wider)
    assert error.code == "chatml.inexact_record"


def test_modules_and_plain_records_are_kept_apart_where_a_record_is_required() -> None:
    module = record({"x": INT}, flavor=ModuleFlavor("M"))
    error = failure(module, record({"x": INT}))
    assert error.code == "chatml.module_as_record"
    assert "Module M" in error.message
    unify(module, record({"x": INT}, flavor=TVar(0)))
    unify(module, record({"x": INT}, flavor=ModuleFlavor("N")))


def test_rows_of_records_and_variants_do_not_mix() -> None:
    error = failure(record({"a": INT}), TVariant(Row({"a": TTuple(())}, TVar(0))))
    assert error.message.startswith("Cannot unify {a: int} with [`a")
