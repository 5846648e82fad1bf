"""Property tests of the typechecker (hypothesis, bounded).

The whole frontend (lex + parse + typecheck) answers every input with
diagnostics, never an exception: token soup, operator soups over a prelude
that defines the names they use, generated syntax trees, and mutated valid
programs. Every diagnostic is well formed. Generated well-typed programs
check cleanly, whatever their seed.
"""

from __future__ import annotations

import re
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatml.check import CheckResult, check_source
from chatml.syntax.printer import PrinterError, print_program
from chatml.typecheck.errors import ALL_CODES
from tests.chatml.ast_strategies import operator_soups, programs
from tests.chatml.typed_program_gen import templates, typed_program
from tests.support import load_cases

BOUNDED = settings(max_examples=150, deadline=None,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

PRELUDE = ("let x = 1\nlet y = 2.5\nlet f z = z\nlet r = ref(0)\n"
           "module M = struct let x = 1 let id v = v end\n")
VALID = templates() + [c["source"] for c in load_cases("chatml/cases.jsonl")
                       if c["expect"] == "ok"]
SOUP = ["let", "rec", "in", "=", "x", "y", "f", "M", "M.x", "(", ")", "[", "]", "{", "}", ",",
        ";", "|", "->", "fun", "match", "with", "if", "then", "else", "`A", "`B(", "1", "2.5",
        '"s"', "true", "+", "+.", "==", "++", ":=", "!", "ref", "module", "struct", "end",
        "open", "type", "t", ":", "int", "array", "_", "with", ".", "\n"]


def _well_formed(result: CheckResult) -> None:
    for diagnostic in result.diagnostics:
        assert diagnostic.phase in ("parse", "type")
        assert diagnostic.message
        assert diagnostic.line >= 1 and diagnostic.column >= 1
        if diagnostic.phase == "type":
            assert diagnostic.code in ALL_CODES
        else:
            assert diagnostic.code.startswith("chatml.")


@BOUNDED
@given(st.lists(st.sampled_from(SOUP), max_size=50), st.sampled_from([" ", "\n"]))
def test_token_soup_gets_diagnostics_never_exceptions(tokens: list[str], separator: str) -> None:
    _well_formed(check_source(separator.join(tokens)))


@BOUNDED
@given(operator_soups)
def test_operator_soups_over_defined_names_never_raise(soup: str) -> None:
    _well_formed(check_source(f"{PRELUDE}let result = {soup}\n"))


@BOUNDED
@given(programs)
def test_generated_syntax_trees_never_raise(program: Any) -> None:
    try:
        text = print_program(program)
    except PrinterError:
        return
    _well_formed(check_source(text))


_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+\.\d+|\d+|\"[^\"]*\"|`\w+|\S")
_REPLACEMENTS = ["1", "1.5", '"s"', "true", "()", "x", "M", "`A", "[1]", "{ a = 1 }", "f(1)",
                 "+", "+.", "==", "++", "(", ")", ";", "|", "", "let", "in", "fun x ->"]


@st.composite
def mutated_programs(draw: st.DrawFn) -> str:
    """A valid program with one to four tokens replaced, deleted or duplicated."""
    text = draw(st.sampled_from(VALID))
    tokens = [(m.start(), m.end()) for m in _TOKEN.finditer(text)]
    for _ in range(draw(st.integers(1, 4))):
        if not tokens:
            break
        start, end = tokens[draw(st.integers(0, len(tokens) - 1))]
        action = draw(st.sampled_from(["replace", "delete", "duplicate"]))
        if action == "replace":
            text = text[:start] + draw(st.sampled_from(_REPLACEMENTS)) + text[end:]
        elif action == "delete":
            text = text[:start] + text[end:]
        else:
            text = text[:end] + " " + text[start:end] + text[end:]
        tokens = [(m.start(), m.end()) for m in _TOKEN.finditer(text)]
    return text


@BOUNDED
@given(mutated_programs())
def test_mutated_valid_programs_get_diagnostics_never_exceptions(text: str) -> None:
    _well_formed(check_source(text))


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10_000))
def test_generated_well_typed_programs_check_cleanly(seed: int) -> None:
    result = check_source(typed_program(150, seed))
    assert result.ok, [str(d) for d in result.diagnostics if d.is_error]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(VALID), st.sampled_from(["core", "moderator", "shell_matcher"]))
def test_valid_programs_check_the_same_way_twice(text: str, surface: str) -> None:
    first = check_source(text, surface=surface)
    second = check_source(text, surface=surface)
    assert first.val_lines() == second.val_lines()
    assert [str(d) for d in first.diagnostics] == [str(d) for d in second.diagnostics]
