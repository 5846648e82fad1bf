"""The reference's diagnostic text format (spec 4.17)."""

from __future__ import annotations

import pytest

from chatcommon.diagnostics import Diagnostic, DiagnosticError
from chatcommon.sources import SourceFile, Span
from chatml.reference_format import error_kind, format_reference, reference_location
from chatml.syntax.parser import parse_program, parse_source


def test_spec_example() -> None:
    source = SourceFile("t", 'let p = {name = "Ann"}\nprint(p.age)')
    d = Diagnostic.at(Span(source, 29, 34), "chatml.x", "Row does not contain label 'age'",
                      phase="type")
    assert format_reference(d) == ("line 2, characters 6-11:\n2|    p.age\n      ^^^^^\n\n"
                                   "Type error: Row does not contain label 'age'")


def test_parse_error_at_end_of_input() -> None:
    with pytest.raises(DiagnosticError) as raised:
        parse_program("let x =")
    d = raised.value.first
    assert reference_location(d) == "line 1, characters 7-7"
    assert format_reference(d).endswith("\n      ^\n\nParse error: " + d.message)


def test_multi_line_span() -> None:
    source = SourceFile("t", "let x =\n  foo(1,\n      2)\n")
    d = Diagnostic.at(Span(source, 10, 25), "chatml.x", "m", phase="runtime")
    assert reference_location(d) == "line 2, characters 2-8"
    assert format_reference(d) == ("line 2, characters 2-8:\n2|    foo(1,\n      2)\n"
                                   "      ^^^^^^\n\nRuntime error: m")


def test_embedded_script_reports_prompt_positions() -> None:
    source = SourceFile("p.chatmd", "print(1 +)", line_offset=7, first_line_column_offset=8)
    with pytest.raises(DiagnosticError) as raised:
        parse_source(source)
    d = raised.value.first
    assert reference_location(d) == "line 8, characters 17-18"
    assert format_reference(d).splitlines()[1] == "8|    )"


def test_kinds() -> None:
    assert error_kind(Diagnostic.for_file("f", "c", "m", phase="parse")) == "Parse"
    assert error_kind(Diagnostic.for_file("f", "c", "m", phase="runtime")) == "Runtime"
