"""Types stay small when used (issue 15, part 1).

* Using a binding never changes its printed type: a recursive evaluator
  applied to trees of every depth, and (hypothesis) generalised functions
  applied to arbitrary arguments.
* Printed types are linear in the size of their graph: a node reached twice
  is printed once and named (``mu tN. BODY``), so the text of the generated
  evaluator programs stays below a fixed multiple of their source length,
  with and without type errors.
* Instantiation copies a scheme's graph once per node: the work of the
  ``f0 .. f30`` doubling chain is counted in type nodes built, not timed.
* A printed type has a length bound, with a marker saying how much was cut;
  ``--full-types`` and ``--format json`` give it whole.
* An array literal nested n deep costs no occurs check per level.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatml.check import check_source
from chatml.cli import main
from chatml.typecheck import schemes
from chatml.typecheck import unify as unify_module
from chatml.typecheck.types import (
    INT,
    RECORD,
    ROW_EMPTY,
    TYPE_LENGTH_LIMIT,
    Row,
    TArray,
    TRecord,
    TVar,
    show_type,
    type_length_limited,
)

EVALUATOR = """let rec ev e =
  match e with
{cases}
"""

#: Tag sets: (leaf tag, [(tag, arity, how the case combines)]).
TAG_SETS: list[tuple[str, list[tuple[str, int, str]]]] = [
    ("Lit", [("Plus", 2, "ev(a) + ev(b)"), ("Times", 2, "ev(a) * ev(b)"),
             ("Neg", 1, "0 - ev(a)")]),
    ("Num", [("Add", 2, "ev(a) + ev(b)"), ("Sub", 2, "ev(a) - ev(b)")]),
    ("K", [("If", 3, "if ev(a) > 0 then ev(b) else ev(c)"), ("Abs", 1, "ev(a)"),
           ("Max", 2, "if ev(a) > ev(b) then ev(a) else ev(b)")]),
]

#: How a generated program ends: fine, or with a type error whose message prints types.
ENDINGS = {
    "ok": "print(ev(tree))\n",
    "bad_tag": "print(ev(`Bad(tree)))\n",
    "bad_operand": "print(ev(tree) + tree)\n",
    "bad_annotation": "let wrong : string = ev\n",
}

PARAMS = "abc"


def _evaluator(leaf: str, cases: list[tuple[str, int, str]]) -> str:
    lines = [f"  | `{leaf}(n) -> n"]
    for tag, arity, body in cases:
        lines.append(f"  | `{tag}({', '.join(PARAMS[:arity])}) -> {body}")
    return EVALUATOR.format(cases="\n".join(lines))


def _tree(depth: int, leaf: str, cases: list[tuple[str, int, str]], rng: random.Random) -> str:
    if depth == 0:
        return f"`{leaf}({rng.randint(1, 9)})"
    tag, arity, _ = rng.choice(cases)
    kids = [_tree(depth - 1, leaf, cases, rng)]
    kids += [_tree(0, leaf, cases, rng) for _ in range(arity - 1)]
    rng.shuffle(kids)
    return f"`{tag}({', '.join(kids)})"


def _printed(source: str) -> tuple[list[str], str]:
    """The val lines and the text of every diagnostic (message and hint) of ``source``."""
    result = check_source(source)
    texts = [d.message + (d.hint or "") for d in result.diagnostics]
    return result.val_lines(), "\n".join(texts)


@pytest.mark.parametrize("ending", sorted(ENDINGS))
@pytest.mark.parametrize("tag_set", range(len(TAG_SETS)))
def test_generated_evaluators_print_types_linear_in_their_source(tag_set: int,
                                                                 ending: str) -> None:
    leaf, cases = TAG_SETS[tag_set]
    definition = _evaluator(leaf, cases)
    alone = check_source(definition)
    assert alone.ok
    (ev_line,) = alone.val_lines()
    for depth in range(1, 31):
        rng = random.Random(depth * 7 + tag_set)
        source = (definition + f"let tree = {_tree(depth, leaf, cases, rng)}\n"
                  + ENDINGS[ending])
        val_lines, messages = _printed(source)
        printed = "\n".join(val_lines) + messages
        assert len(printed) < 12 * len(source), (depth, len(printed), len(source))
        assert ev_line in val_lines  # using ev did not change its type
        if ending != "ok":
            assert messages  # the error is reported, its types printed short


def test_the_issue_evaluator_keeps_its_one_line_type() -> None:
    source = _evaluator(*TAG_SETS[0]) + (
        "let tree = `Plus(`Times(`Neg(`Times(`Plus(`Neg(`Plus(`Times(`Lit(1), `Lit(1)), "
        "`Lit(2))), `Lit(4)), `Lit(5))), `Lit(7)), `Lit(8))\nprint(ev(tree))\n")
    result = check_source(source)
    assert result.ok
    assert result.val_lines()[0] == (
        "val ev : [`Lit(int) | `Neg('rec) | `Plus('rec, 'rec) | `Times('rec, 'rec)] -> int")


# --------------------------------------------------------------------------- schemes

BODIES = [
    "{a = x; b = x}", "`P(x, x)", "fun y -> y(x, x)", "[x, x]", "[[x], [x, x]]",
    "{a = {b = x}; c = [x]}", "`A({a = x})", "(fun y -> x)", "ref(x)",
]
ARGUMENTS = [
    "1", '"s"', "[1, 2]", "{a = 1; b = 2}", "`Q(1)", "`Q(`R(2))", "fun z -> z",
    "{a = [1]; b = `Q(1)}", "[[1]]", "`Lit(3)", "ref(2)", "g",
]


def _val_of(name: str, source: str) -> str:
    result = check_source(source)
    for line in result.val_lines():
        if line.startswith(f"val {name} : "):
            return line
    raise AssertionError(f"no val {name} in {result.val_lines()}")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=st.sampled_from(BODIES),
       applications=st.lists(st.sampled_from(ARGUMENTS), min_size=1, max_size=4),
       nested=st.booleans())
def test_applying_a_generalised_function_leaves_its_scheme_unchanged(
        body: str, applications: list[str], nested: bool) -> None:
    prelude = ("let rec g e = match e with | `Lit(n) -> n | `Neg(a) -> 0 - g(a)\n"
               f"let f x = {body}\n")
    before = _val_of("f", prelude)
    uses = []
    for index, argument in enumerate(applications):
        call = f"f(f({argument}))" if nested else f"f({argument})"
        uses.append(f"let u{index} = {call}\n")
    after_source = prelude + "".join(uses) + "let again = f\n"
    assert _val_of("f", after_source) == before
    # A later use sees the same scheme: its instance prints as the scheme does.
    assert _val_of("again", after_source).removeprefix("val again") == \
        before.removeprefix("val f")


def test_a_recursive_monomorphic_function_is_unchanged_by_its_uses() -> None:
    prelude = "let rec g e = match e with | `Lit(n) -> n | `Neg(a) -> 0 - g(a) | `Two(a, b) -> g(a) + g(b)\n"
    before = _val_of("g", prelude)
    uses = "".join(f"let u{i} = g({'`Neg(' * i}`Lit(1){')' * i})\n" for i in range(12))
    uses += "let w = g(`Two(`Neg(`Lit(1)), `Two(`Lit(2), `Neg(`Lit(3)))))\n"
    assert _val_of("g", prelude + uses) == before


# --------------------------------------------------------------------------- sharing


class _Counter:
    """Counts type nodes built while checking (records and copies of any node)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        original_init = TRecord.__init__
        original_fill = schemes._fill

        def counting_init(record: TRecord, *args: Any, **kwargs: Any) -> None:
            self.count += 1
            original_init(record, *args, **kwargs)

        def counting_fill(node: Any, copy: Any, parts: list[Any]) -> None:
            self.count += 1
            original_fill(node, copy, parts)

        monkeypatch.setattr(TRecord, "__init__", counting_init)
        monkeypatch.setattr(schemes, "_fill", counting_fill)


def _chain(n: int, body: str = "{a = x; b = x}") -> str:
    lines = [f"let f0 x = {body}"]
    lines += [f"let f{i} x = f{i - 1}(f{i - 1}(x))" for i in range(1, n + 1)]
    return "\n".join(lines) + "\n"


def test_instantiation_copies_a_schemes_graph_once_per_node(
        monkeypatch: pytest.MonkeyPatch) -> None:
    counter = _Counter(monkeypatch)
    counts = []
    for n in (4, 6, 8):
        counter.count = 0
        result = check_source(_chain(n))
        assert result.ok
        counts.append(counter.count)
    # f_n's type is a chain of 2^n shared record nodes (2^(2^n) when written as a
    # tree): the work is linear in the graph, so it grows about 4x per two lines.
    assert counts[1] < 6 * counts[0] and counts[2] < 6 * counts[1], counts
    assert counts[2] < 40 * 2 ** 8, counts


def test_the_thirty_line_doubling_chain_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    counter = _Counter(monkeypatch)
    result = check_source(_chain(30))
    # The graph of f_n has 2^n nodes (depth 2^n): past the checker's depth budget a
    # line is reported as too deep and the rest of the chain costs nothing more.
    assert counter.count < 40 * 2 ** 15, counter.count
    codes = {d.code for d in result.diagnostics}
    assert codes <= {"chatml.too_deep"}
    for line in result.val_lines():
        assert len(line) < TYPE_LENGTH_LIMIT + 200
    # the message blames the type, not the (shallow) syntax of the line
    for diagnostic in result.diagnostics:
        assert diagnostic.message.startswith("The type inferred for this statement"), diagnostic
        assert "duplicates its argument" in (diagnostic.hint or "")


def test_only_a_shallow_statement_has_its_type_blamed() -> None:
    from chatml.syntax.parser import parse_program
    from chatml.typecheck.statements import SHALLOW_STATEMENT, syntax_depth

    chain = parse_program(_chain(3)).program
    deep = parse_program("let x = " + "[" * 5_000 + "1" + "]" * 5_000 + "\n").program
    assert chain is not None and deep is not None
    assert all(syntax_depth(stmt, SHALLOW_STATEMENT) < 10 for stmt in chain.statements)
    assert syntax_depth(deep.statements[0], SHALLOW_STATEMENT) == SHALLOW_STATEMENT


@pytest.mark.parametrize("body", ["`P(x, x)", "fun y -> y(x, x)"])
def test_the_chain_stays_linear_with_variants_and_callbacks(
        monkeypatch: pytest.MonkeyPatch, body: str) -> None:
    counter = _Counter(monkeypatch)
    result = check_source(_chain(8, body))
    assert result.ok
    # no records here: count the copies (2^8 nodes per line at most)
    assert counter.count < 40 * 2 ** 8, counter.count
    assert len(result.val_lines()[-1]) < TYPE_LENGTH_LIMIT + 200


def test_a_shared_node_is_printed_once_and_named() -> None:
    inner = TRecord(Row({"x": INT, "y": INT, "z": TArray(INT)}, ROW_EMPTY), RECORD)
    big = TRecord(Row({f"field_number_{i}": inner for i in range(3)}, ROW_EMPTY), RECORD)
    level = big
    for _ in range(20):  # {a: L; b: L}: a million paths to the innermost record
        level = TRecord(Row({"a": level, "b": level}, ROW_EMPTY), RECORD)
    text = show_type(level)
    assert text.count("field_number_0") == 1
    assert "mu t1. " in text and text.endswith("b: t1}")
    assert len(text) < 40 * 20 + 200
    small = TRecord(Row({"p": inner, "q": inner}, ROW_EMPTY), RECORD)
    # a short shared node is simply printed again, as before
    assert show_type(small) == ("{p: {x: int; y: int; z: int array}; "
                                "q: {x: int; y: int; z: int array}}")


def test_a_back_edge_still_prints_as_rec() -> None:
    var = TVar(0)
    record = TRecord(Row({"next": var, "value": INT}, ROW_EMPTY), RECORD)
    var.link = record
    assert show_type(record) == "{next: 'rec; value: int}"


# --------------------------------------------------------------------------- the bound


def test_long_types_are_elided_with_what_was_left_out() -> None:
    result = check_source(_chain(9))
    last = result.val_lines()[-1]
    assert len(last) < TYPE_LENGTH_LIMIT + 200
    assert "more characters of this type" in last
    with type_length_limited(None):
        full = check_source(_chain(9)).val_lines()[-1]
    left_out = int(last.split("...[")[1].split()[0])
    assert len(full) == len(last.split(" ...[")[0]) + left_out
    assert len(full) > TYPE_LENGTH_LIMIT


def test_messages_are_bounded_too() -> None:
    source = _chain(9) + "let bad : int = f9\n"
    (diagnostic,) = check_source(source).diagnostics
    assert len(diagnostic.message) + len(diagnostic.hint or "") < 3 * (TYPE_LENGTH_LIMIT + 200)
    assert "more characters of this type" in diagnostic.message + (diagnostic.hint or "")


def test_full_types_flag_and_json_give_the_whole_type(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "chain.chatml"
    path.write_text(_chain(9))
    assert main(["check", str(path)]) == 0
    short = capsys.readouterr().out.splitlines()[-1]
    assert main(["check", "--full-types", str(path)]) == 0
    full = capsys.readouterr().out.splitlines()[-1]
    assert main(["check", "--format", "json", str(path)]) == 0
    document = json.loads(capsys.readouterr().out)
    assert "more characters" in short and "more characters" not in full
    assert "val f9 : " + document["bindings"][-1]["type"] == full
    # the bound is back in force after the command
    assert "more characters" in check_source(_chain(9)).val_lines()[-1]


# --------------------------------------------------------------------------- occurs check


def test_a_deeply_nested_array_literal_needs_no_occurs_check_per_level(
        monkeypatch: pytest.MonkeyPatch) -> None:
    walked = [0]
    original = unify_module._walk_shared

    def counting(*args: Any) -> bool:
        walked[0] += 1
        return original(*args)

    monkeypatch.setattr(unify_module, "_walk_shared", counting)
    depth = 3000
    result = check_source("let x = " + "[" * depth + "1" + "]" * depth + "\n")
    assert result.ok
    assert walked[0] < 10
    assert check_source("let y = [[1], [2, 3], [[4]]]\n").diagnostics  # still checked
