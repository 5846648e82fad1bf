"""Issue 16, row "many diagnostics on one long line": text output is bounded, JSON complete.

Text diagnostics show at most a window of the source line around the column
(with ``...`` where it was cut) and at most 100 diagnostics per file, then one
line counting the rest; ``--format json`` lists every diagnostic in one document.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from chatcommon.diagnostics import Diagnostic
from chatcommon.render import MAX_EXCERPT, MAX_PER_FILE, render_all_text, render_text
from chatcommon.sources import SourceFile, Span
from tests.robustness.support import chatmdc, chatml, write_files

COUNT = 10_000


def test_chatmdc_text_output_is_bounded(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    write_files(tmp_path, {"p.chatmd": "</user>" * COUNT + "\n"})
    outcome = chatmdc(["check", str(tmp_path / "p.chatmd")], capsys)
    assert outcome.status == 1
    assert outcome.err.count("error[chatmd.unexpected_close]") == MAX_PER_FILE
    assert f"note: {COUNT - MAX_PER_FILE} more diagnostics in " in outcome.err
    assert f"chatmdc: {COUNT} errors" in outcome.err
    assert len(outcome.err) < 600 * MAX_PER_FILE  # was 168 MB at 4,000
    assert max(len(line) for line in outcome.err.splitlines()) < MAX_EXCERPT + 200


def test_chatmdc_json_keeps_every_diagnostic(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    write_files(tmp_path, {"p.chatmd": "</user>" * COUNT + "\n"})
    outcome = chatmdc(["check", "--format", "json", str(tmp_path / "p.chatmd")], capsys)
    document = outcome.json()
    assert len(document["diagnostics"]) == COUNT
    assert document["summary"]["errors"] == COUNT
    assert document["diagnostics"][-1]["column"] == 7 * (COUNT - 1) + 1


def test_chatml_text_output_is_bounded(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "p.chatml"
    source.write_text(" ".join(f"let a{i} = u{i}" for i in range(3000)) + "\n", encoding="utf-8")
    outcome = chatml(["check", str(source)], capsys)
    assert outcome.status == 1
    assert outcome.err.count("error[chatml.") == MAX_PER_FILE
    assert "note: 2900 more diagnostics in " in outcome.err
    json_outcome = chatml(["check", "--format", "json", str(source)], capsys)
    assert len(json_outcome.json()["diagnostics"]) == 3000


@pytest.mark.parametrize("column", [1, 50, 5000, 9990])
def test_excerpt_is_a_window_around_the_column(column: int) -> None:
    line = "".join(chr(ord("a") + i % 26) for i in range(10_000))
    source = SourceFile("f", line + "\nnext\n")
    diagnostic = Diagnostic.at(Span(source, column - 1, column + 2), "c", "m", phase="p")
    lines = render_text(diagnostic).splitlines()
    shown, carets = lines[3], lines[4]
    assert len(shown) <= len("1 | ") + MAX_EXCERPT + 6
    caret_at = carets.index("^") - len("  | ")
    excerpt = shown[len("1 | "):]
    assert excerpt[caret_at:caret_at + 3] == line[column - 1:column + 2]
    assert carets.endswith("^^^")
    assert excerpt.startswith("...") == (column > 41)
    assert excerpt.endswith("...") == (column < 10_000 - 80)


def test_short_lines_are_shown_whole() -> None:
    source = SourceFile("f", "x" * MAX_EXCERPT)
    diagnostic = Diagnostic.at(Span(source, 3, 4), "c", "m", phase="p")
    assert render_text(diagnostic).splitlines()[3] == "1 | " + "x" * MAX_EXCERPT


def test_inline_script_offsets_survive_the_window() -> None:
    source = SourceFile("f", "y" * 300, first_line_column_offset=10)
    diagnostic = Diagnostic.at(Span(source, 200, 201), "c", "m", phase="p")
    lines = render_text(diagnostic).splitlines()
    assert lines[1].endswith("f:1:211")
    caret_at = lines[4].index("^") - len("  | ")
    assert lines[3][len("1 | "):][caret_at] == "y"


def test_the_per_file_cap_counts_each_file() -> None:
    a, b = SourceFile("a", "x\n"), SourceFile("b", "x\n")
    diagnostics = [Diagnostic.at(Span(s, 0, 1), "c", "m", phase="p")
                   for s in (a, b) for _ in range(MAX_PER_FILE + 5)]
    text = render_all_text(diagnostics)
    assert text.count("error[c]") == 2 * MAX_PER_FILE
    assert "note: 5 more diagnostics in a not shown" in text
    assert "note: 5 more diagnostics in b not shown" in text
