"""Line/column mapping of source files and spans."""

from __future__ import annotations

from chatcommon.sources import SourceFile, SourceRegistry, Span


def test_positions_are_one_based_and_count_code_points() -> None:
    source = SourceFile("a", "héllo\nwörld")
    assert source.position(0) == (1, 1)
    assert source.position(4) == (1, 5)
    assert source.position(6) == (2, 1)
    assert source.position(8) == (2, 3)


def test_crlf_is_one_line_break_and_cr_is_a_column() -> None:
    source = SourceFile("a", "ab\r\ncd")
    assert source.position(2) == (1, 3)  # the CR itself
    assert source.position(4) == (2, 1)
    assert source.line_text(1) == "ab"
    assert source.line_text(2) == "cd"


def test_position_clamps_out_of_range_offsets() -> None:
    source = SourceFile("a", "xy")
    assert source.position(99) == (1, 3)
    assert source.position(-5) == (1, 1)


def test_embedded_source_reports_enclosing_file_positions() -> None:
    # a script body that starts at line 3, column 9 of a prompt
    script = SourceFile("p.md", "let x = 1\nlet y = 2", line_offset=2, first_line_column_offset=8)
    assert script.position(0) == (3, 9)
    assert script.position(10) == (4, 1)
    assert script.line_text(3) == "        let x = 1"
    assert script.line_text(4) == "let y = 2"
    assert script.line_text(1) == ""


def test_span_text_and_join() -> None:
    source = SourceFile("a", "one two three")
    first = Span(source, 0, 3)
    last = Span(source, 8, 13)
    assert first.text == "one"
    assert first.to(last).text == "one two three"
    assert first == Span(source, 0, 3)
    assert first != Span(SourceFile("a", "one two three"), 0, 3)
    assert hash(first) == hash(Span(source, 0, 3))


def test_registry_finds_files_by_name() -> None:
    registry = SourceRegistry()
    added = registry.add("x.md", "text")
    assert registry.get("x.md") is added
    assert "x.md" in registry
    assert registry.get("y.md") is None
