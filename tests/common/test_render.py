"""Text and JSON rendering of diagnostics."""

from __future__ import annotations

import json

from chatcommon.diagnostics import Diagnostic, DiagnosticError, DiagnosticSink, Related, Severity
from chatcommon.render import JSON_KEYS, render_all_text, render_json, render_text
from chatcommon.sources import SourceFile, SourceRegistry, Span


def _diagnostic() -> Diagnostic:
    source = SourceFile("p.md", "<user>x</assistant>\n")
    return Diagnostic.at(Span(source, 7, 19), "chatmd.mismatched_tag", "does not match",
                         phase="parse", hint="close <user> first",
                         related=[Related.at(Span(source, 0, 6), "opened here")])


def test_text_rendering_shows_source_line_caret_hint_and_note() -> None:
    text = render_text(_diagnostic())
    assert text.splitlines() == [
        "error[chatmd.mismatched_tag]: does not match",
        " --> p.md:1:8",
        "  |",
        "1 | <user>x</assistant>",
        "  |        ^^^^^^^^^^^^",
        "  = hint: close <user> first",
        "  = note: opened here: p.md:1:1",
    ]


def test_caret_keeps_tabs_so_it_lines_up() -> None:
    source = SourceFile("f", "\tabc def")
    text = render_text(Diagnostic.at(Span(source, 5, 8), "c", "m", phase="p"))
    assert text.splitlines()[4] == "  | \t    ^^^"


def test_multiline_span_underlines_to_end_of_first_line() -> None:
    source = SourceFile("f", "abc\ndef")
    text = render_text(Diagnostic.at(Span(source, 1, 6), "c", "m", phase="p"))
    assert text.splitlines()[4] == "  |  ^^"


def test_source_found_through_registry_when_not_attached() -> None:
    registry = SourceRegistry()
    registry.add("f", "hello")
    diagnostic = Diagnostic("c", "m", "f", 1, 2, 1, 4, phase="p")
    assert "1 | hello" in render_text(diagnostic, registry)
    assert "1 | hello" not in render_text(diagnostic)


def test_json_rendering_has_the_contract_keys() -> None:
    document = json.loads(render_json([_diagnostic()]))
    (record,) = document["diagnostics"]
    for key in JSON_KEYS:
        assert key in record
    assert record["line"] == 1 and record["column"] == 8
    assert record["end_line"] == 1 and record["end_column"] == 20
    assert record["severity"] == "error" and record["phase"] == "parse"
    assert record["hint"] == "close <user> first"


def test_render_all_text_separates_with_blank_lines() -> None:
    both = render_all_text([_diagnostic(), _diagnostic()])
    assert both.count("error[chatmd.mismatched_tag]") == 2
    assert "\n\nerror[" in both
    assert render_all_text([]) == ""


def test_diagnostic_error_and_sink() -> None:
    sink = DiagnosticSink()
    warning = Diagnostic("w", "m", "f", 1, 1, severity=Severity.WARNING, phase="p")
    sink.add(warning)
    assert not sink.has_errors
    sink.raise_if_errors()
    sink.add(_diagnostic())
    assert sink.has_errors
    try:
        sink.raise_if_errors()
    except DiagnosticError as error:
        assert error.code == "w"
        assert len(error.diagnostics) == 2
    else:  # pragma: no cover - the assertion above must run
        raise AssertionError("expected DiagnosticError")
    assert str(_diagnostic()) == "p.md:1:8: error[chatmd.mismatched_tag]: does not match"
