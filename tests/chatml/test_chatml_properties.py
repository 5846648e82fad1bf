"""Property tests of the syntax phase (hypothesis, bounded to stay fast).

* The lexer and parser raise nothing but DiagnosticError -- on arbitrary text,
  on token soup, and on mutated valid programs.
* The LALR parser agrees with the Pratt-style algorithm of spec 3.3
  (tests/chatml/pratt_oracle.py) on random operator soups.
* print -> parse round-trips generated syntax trees and generated programs
  (the conformance programs are round-tripped in test_chatml_conformance.py).
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from chatcommon.diagnostics import DiagnosticError
from chatml.syntax.parser import parse_program
from chatml.syntax.printer import PrinterError, print_program
from chatml.syntax.tokens import KEYWORDS, SYMBOLS
from tests.chatml.ast_strategies import operator_soups, programs
from tests.chatml.pratt_oracle import OracleError, oracle_parse
from tests.chatml.program_gen import realistic_program
from tests.support import load_cases

BOUNDED = settings(max_examples=200, deadline=None,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

PROGRAMS = [c["source"] for c in load_cases("chatml/cases.jsonl") if c["expect"] != "parse_error"]
SPELLINGS = sorted(set(SYMBOLS) | set(KEYWORDS) | {"x", "M", "1", "2.5", '"s"', "`A", "true",
                                                   "(*", "*)", '"', "\n", "@"})


def _parse_or_diagnose(text: str) -> Any:
    try:
        return parse_program(text).program
    except DiagnosticError as error:
        assert error.diagnostics and error.first.is_error
        assert all(d.phase == "parse" for d in error.diagnostics)
        return None


@BOUNDED
@given(st.text())
def test_arbitrary_text_only_raises_diagnostics(text: str) -> None:
    _parse_or_diagnose(text)


@BOUNDED
@given(st.lists(st.sampled_from(SPELLINGS), max_size=40), st.sampled_from([" ", "", "\n"]))
def test_token_soup_only_raises_diagnostics(tokens: list[str], separator: str) -> None:
    _parse_or_diagnose(separator.join(tokens))


@st.composite
def mutated_programs(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(PROGRAMS))
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(text)))
        j = draw(st.integers(i, min(len(text), i + 8)))
        action = draw(st.sampled_from(["delete", "insert", "duplicate"]))
        if action == "delete":
            text = text[:i] + text[j:]
        elif action == "insert":
            text = text[:i] + draw(st.sampled_from(SPELLINGS)) + text[i:]
        else:
            text = text[:j] + text[i:j] + text[j:]
    return text


@BOUNDED
@given(mutated_programs())
def test_mutated_programs_only_raise_diagnostics(text: str) -> None:
    _parse_or_diagnose(text)


@BOUNDED
@given(operator_soups)
def test_lalr_parser_agrees_with_the_pratt_description(text: str) -> None:
    try:
        expected = oracle_parse(text)
    except (OracleError, DiagnosticError):
        expected = None
    assert _parse_or_diagnose(text) == expected


@BOUNDED
@given(programs)
def test_printing_round_trips_generated_trees(program: Any) -> None:
    try:
        text = print_program(program)
    except PrinterError:
        assume(False)
        return
    reparsed = parse_program(text).program
    assert reparsed == program, text
    assert print_program(reparsed) == text


@BOUNDED
@given(st.integers(0, 10_000))
def test_printing_round_trips_generated_programs(seed: int) -> None:
    program = parse_program(realistic_program(60, seed)).program
    assert parse_program(print_program(program)).program == program
