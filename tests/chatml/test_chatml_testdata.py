"""Runs the data-driven parse cases in tests/chatml/testdata/parse (marker syntax: harness.py).

Each file must produce exactly the diagnostics its markers state; a file that
parses must also survive print -> parse unchanged.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from chatcommon.diagnostics import DiagnosticError
from chatcommon.sources import SourceFile
from chatml.syntax.parser import parse_source
from chatml.syntax.printer import print_program
from tests.chatml.harness import TESTDATA, Outcome, case_files, check, parse_expectations

CASES = case_files("parse")


def test_there_are_enough_parse_cases() -> None:
    assert len(CASES) >= 30


@pytest.mark.parametrize("path", CASES, ids=lambda p: str(p.relative_to(TESTDATA)))
def test_parse_case(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    expectations = parse_expectations(text)
    source = SourceFile(path.name, text)
    program = None
    try:
        result = parse_source(source)
    except DiagnosticError as error:
        diagnostics = tuple(error.diagnostics)
    else:
        diagnostics = result.diagnostics
        program = result.program
    problems = check(expectations, Outcome(diagnostics))
    assert not problems, f"{path.name}:\n" + "\n".join(problems)
    if program is not None:
        assert parse_source(SourceFile("<printed>", print_program(program))).program == program
