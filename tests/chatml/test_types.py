"""The internal type language (chatml.typecheck.types): resolution, rows, mu types and printing."""

from __future__ import annotations

from chatml.surfaces import alias_type
from chatml.typecheck.types import (
    BOOL,
    FLOAT,
    GENERIC,
    INT,
    RECORD,
    ROW_EMPTY,
    STRING,
    UNIT,
    Namer,
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
    contains_generic,
    flatten_row,
    make_row,
    resolve,
    show_signature,
    show_type,
    task_of,
)


def record(fields: dict, tail=ROW_EMPTY) -> TRecord:  # type: ignore[no-untyped-def,type-arg]
    return TRecord(make_row(fields, tail), RECORD)


def variant(cases: dict, tail=ROW_EMPTY) -> TVariant:  # type: ignore[no-untyped-def,type-arg]
    return TVariant(make_row({tag: TTuple(tuple(args)) for tag, args in cases.items()}, tail))


def test_primitives_and_constructors_print_as_in_the_spec() -> None:
    assert [show_type(t) for t in (INT, FLOAT, BOOL, STRING, UNIT)] == [
        "int", "float", "bool", "string", "unit"]
    assert show_type(TArray(TArray(INT))) == "int array array"
    assert show_type(TRef(STRING)) == "ref(string)"
    assert show_type(task_of(TArray(INT))) == "int array task"
    assert show_type(TTuple((INT, STRING))) == "(int * string)"


def test_functions_print_uncurried_with_their_arity() -> None:
    assert show_type(TFun((), INT)) == "( -> int)"
    assert show_type(TFun((INT,), BOOL)) == "(int -> bool)"
    assert show_type(TFun((INT, STRING), TFun((INT,), INT))) == "(int, string -> (int -> int))"


def test_records_print_sorted_with_open_tails_as_dots() -> None:
    assert show_type(record({"b": INT, "a": STRING})) == "{a: string; b: int}"
    assert show_type(record({"a": INT}, TVar(0))) == "{a: int; ...}"
    assert show_type(record({}, TVar(0))) == "{...}"
    assert show_type(record({})) == "{}"


def test_variants_print_sorted_with_payloads() -> None:
    closed = variant({"C": [INT, STRING], "A": [], "B": [INT]})
    assert show_type(closed) == "[`A | `B(int) | `C(int, string)]"
    assert show_type(variant({"A": []}, TVar(0))) == "[`A | ...]"


def test_variables_are_named_in_order_of_appearance_per_message() -> None:
    a, b = TVar(0), TVar(0)
    namer = Namer()
    assert show_type(TFun((a,), b), namer) == "('a -> 'b)"
    assert show_type(TFun((b,), a), namer) == "('b -> 'a)"
    many = [TVar(0) for _ in range(28)]
    text = show_type(TTuple(tuple(many)))
    assert text.endswith("'z * 'a1 * 'b1)")


def test_generic_variables_print_without_quote_in_messages_and_weak_ones_marked_in_vals() -> None:
    generic, weak = TVar(GENERIC), TVar(0)
    assert show_type(TFun((generic,), weak)) == "(a -> 'b)"
    assert show_signature(TFun((generic,), weak)) == "'a -> '_b"


def test_signature_drops_only_the_outer_parentheses_of_a_function() -> None:
    assert show_signature(TFun((INT, INT), TFun((INT,), INT))) == "int, int -> (int -> int)"
    assert show_signature(TFun((), INT)) == "( -> int)"
    assert show_signature(TArray(INT)) == "int array"


def test_bound_variables_print_as_their_value_and_resolve_compresses_paths() -> None:
    a, b, c = TVar(0), TVar(0), TVar(0)
    a.link, b.link, c.link = b, c, INT
    assert resolve(a) is INT
    assert a.link is INT and b.link is INT
    assert show_type(TArray(a)) == "int array"


def test_inferred_cycles_print_a_back_edge() -> None:
    var = TVar(0)
    var.link = record({"next": var, "value": INT})
    assert show_type(var) == "{next: 'rec; value: int}"


def test_mu_types_print_with_their_binder_and_unfold_once() -> None:
    body = variant({"Int": [INT], "Add": [TRecVar("e"), TRecVar("e")]})
    mu = TMu("e", body)
    assert show_type(mu) == "mu e. [`Add(e, e) | `Int(int)]"
    unfolded = mu.unfold()
    assert unfolded is mu.unfold()
    fields, _ = flatten_row(unfolded.row)  # type: ignore[attr-defined]
    assert fields["Add"].elems == (mu, mu)  # type: ignore[attr-defined]


def test_builtin_aliases_print_by_name() -> None:
    assert show_type(TArray(alias_type("json"))) == "json array"
    assert show_type(TFun((alias_type("item"),), STRING)) == "(item -> string)"


def test_flatten_row_follows_tails_and_the_outermost_label_wins() -> None:
    tail = TVar(0)
    inner = Row({"a": STRING, "b": BOOL}, ROW_EMPTY)
    tail.link = inner
    fields, end = flatten_row(Row({"a": INT}, tail))
    assert fields == {"a": INT, "b": BOOL}
    assert end is ROW_EMPTY


def test_rows_without_labels_are_their_tail() -> None:
    tail = TVar(0)
    assert make_row({}, tail) is tail
    assert show_type(TRecord(make_row({}, ROW_EMPTY), RECORD)) == "{}"


def test_contains_generic_sees_through_bound_variables() -> None:
    generic = TVar(GENERIC)
    bound = TVar(0)
    bound.link = TArray(generic)
    assert contains_generic(TFun((bound,), INT))
    assert not contains_generic(TFun((TVar(0),), TConstr("task", (INT,))))
