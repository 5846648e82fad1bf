"""The shared ChatML conformance corpus, as far as the syntax phase goes.

Every case must parse, except the ``parse_error`` cases, which must fail with
a diagnostic whose message contains ``error_contains`` (and, when recorded,
at ``error_location``). Cases that contradict a decision of
``../shared/spec/DECISIONS.md`` stay in the run as known divergences: the
test then asserts the project's decided behaviour.

The corpus's rendered diagnostics (``error_text``, type errors from the later
phases) also check :mod:`chatml.reference_format`: a diagnostic placed at the
recorded location with the recorded message must render to exactly that text.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from chatcommon.diagnostics import Diagnostic, DiagnosticError
from chatcommon.sources import SourceFile
from chatml.reference_format import format_reference, reference_location
from chatml.syntax.parser import parse_program
from chatml.syntax.printer import print_program
from tests.support import load_cases

CASES = load_cases("chatml/cases.jsonl")

#: id -> (DECISIONS item, what the project does instead). None of the current cases
#: depends on nested comments (6c), the only syntax-phase divergence.
KNOWN_DIVERGENCES: dict[str, tuple[str, str]] = {}


def _ids(case: dict[str, Any]) -> str:
    return str(case["id"])


def test_corpus_is_present() -> None:
    assert len(CASES) >= 150
    assert any(c["expect"] == "parse_error" for c in CASES)


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_case_parses_as_expected(case: dict[str, Any]) -> None:
    assert case["id"] not in KNOWN_DIVERGENCES
    source = case["source"]
    if case["expect"] != "parse_error":
        result = parse_program(source, name=case["id"])
        assert all(not d.is_error for d in result.diagnostics)
        printed = print_program(result.program)
        assert parse_program(printed).program == result.program
        return
    with pytest.raises(DiagnosticError) as raised:
        parse_program(source, name=case["id"])
    error = raised.value.first
    assert error.is_error and error.phase == "parse"
    if case["error_contains"] is not None:
        assert case["error_contains"] in error.message
    if case["error_location"] is not None:
        assert reference_location(error) == case["error_location"]


RENDERED = [c for c in CASES if c["error_text"] and c["error_location"]]
_LOCATION = re.compile(r"line (\d+), characters (\d+)-(\d+)")


@pytest.mark.parametrize("case", RENDERED, ids=_ids)
def test_reference_rendering_matches_the_corpus(case: dict[str, Any]) -> None:
    location = _LOCATION.fullmatch(case["error_location"])
    assert location is not None
    line, start, end = map(int, location.groups())
    kind, message = case["error_text"].rsplit("\n", 1)[-1].split(" error: ", 1)
    source = SourceFile(case["id"], case["source"])
    diagnostic = Diagnostic(code="chatml.test", message=message, file=source.name, line=line,
                            column=start + 1, end_line=line, end_column=end + 1,
                            phase=kind.lower(), source=source)
    assert format_reference(diagnostic) == case["error_text"]


def test_reference_rendering_without_location() -> None:
    diagnostic = Diagnostic.for_file("x.chatml", "chatml.test", "open M would shadow existing "
                                     "binding 'x'", phase="type")
    assert format_reference(diagnostic) == "Type error: open M would shadow existing binding 'x'"
