"""The ChatMD parser: grammar, text merging, the top-level rule and error recovery."""

from __future__ import annotations

import pytest

from chatcommon.diagnostics import DiagnosticError
from chatcommon.sources import SourceFile
from chatmd.ast import Element, Text
from chatmd.parser import parse, parse_text


def only_element(text: str) -> Element:
    (node,) = parse_text(text).nodes
    assert isinstance(node, Element)
    return node


def content(text: str) -> str:
    element = only_element(text)
    (child,) = element.children
    assert isinstance(child, Text)
    return child.text


def errors(text: str) -> list[tuple[str, int, int]]:
    result = parse(SourceFile("p", text))
    return [(d.code, d.line, d.column) for d in result.diagnostics]


@pytest.mark.parametrize(("text", "expected"), [
    ("<user>Hello</user>", "Hello"),
    ("<user>Hello <b>world</b></user>", "Hello <b>world</b>"),
    ("<user>Hello > < world</user>", "Hello > < world"),
    ("<user>a<!-- note -->b</user>", "ab"),
    ('<user>RAW|<doc src="x"/>|RAW</user>', '<doc src="x"/>'),
    ("<user>\nRAW|abc|RAW\n</user>", "abc\n"),
    ("<user>Intro: RAW|x|RAW</user>", "Intro: x"),
    ("<user>RAW|a<!--b-->c|RAW</user>", "a<!--b-->c"),
    ("<user>a|b x |RAW y</user>", "a|b x |RAW y"),
    ("<user>RAW|a|RAWRAW|b|RAW</user>", "ab"),
    ("<user>&lt;b&gt;</user>", "&lt;b&gt;"),
    ("<user>RAW||RAW</user>", ""),
])
def test_element_text(text: str, expected: str) -> None:
    assert content(text) == expected


def test_empty_and_blank_documents_have_no_nodes() -> None:
    assert parse_text("").nodes == ()
    assert parse_text("\n\n  <!-- c -->\n\t").nodes == ()
    assert parse_text("RAW|  |RAW").nodes == ()


def test_leading_bom_is_stripped_and_crlf_counts_as_one_line_break() -> None:
    with pytest.raises(DiagnosticError) as raised:
        parse_text("\ufeff<user>a</user>\r\n<user>b</user>\r\nx")
    assert [(d.code, d.line, d.column) for d in raised.value.diagnostics] == [
        ("chatmd.top_level_text", 3, 1)]


def test_self_closing_element_and_nested_helpers() -> None:
    user = only_element('<user>see <doc src="a" local/> and <img src="b"/></user>')
    assert [type(c).__name__ for c in user.children] == ["Text", "Element", "Text", "Element"]
    doc = user.children[1]
    assert isinstance(doc, Element) and doc.self_closing and doc.get("local") == ""


def test_whitespace_text_children_are_kept() -> None:
    user = only_element('<user>\n  <img src="u"/>\n</user>')
    assert [c.text for c in user.children if isinstance(c, Text)] == ["\n  ", "\n"]


def test_empty_raw_block_is_a_child() -> None:
    assert only_element("<user>RAW||RAW</user>").children == (Text("", None),)  # type: ignore[arg-type]


def test_unknown_markup_around_recognised_tags() -> None:
    user = only_element('<user><x><doc src="a"/></x></user>')
    assert [c.text if isinstance(c, Text) else c.tag for c in user.children] == ["<x>", "doc", "</x>"]


def test_element_spans() -> None:
    user = only_element("<user a='1'>hi</user>")
    assert user.span.text == "<user a='1'>"
    assert user.end_span is not None and user.end_span.text == "</user>"
    assert user.full_span.text == "<user a='1'>hi</user>"


def test_attribute_lookup_helpers() -> None:
    element = only_element('<tool name="a" name="b" local/>')
    assert element.get("name") == "b"
    assert element.get_first("name") == "a"
    assert element.get("local") == ""
    assert element.get("missing") is None
    assert element.has("local") and not element.has("x")


@pytest.mark.parametrize(("text", "expected"), [
    ("Hello", [("chatmd.top_level_text", 1, 1)]),
    ("<user>a</user>\nstray", [("chatmd.top_level_text", 2, 1)]),
    ("<User>Hi</User>", [("chatmd.top_level_text", 1, 1)]),
    ("<yo/>", [("chatmd.top_level_text", 1, 1)]),
    ("RAW|x|RAW", [("chatmd.top_level_text", 1, 1)]),
    # DECISIONS 8 (spec checklist 9 expects unclosed_element): the stray `<` is text
    ("<user>if a<b then c</user>", [("chatmd.stray_less_than", 1, 11)]),
    ("<user>x</assistant>", [("chatmd.mismatched_tag", 1, 8)]),
    ("<user>Hello", [("chatmd.unclosed_element", 1, 1)]),
    ("</user>", [("chatmd.unexpected_close", 1, 1)]),
    ("<user>hi</user >", [("chatmd.unclosed_element", 1, 1)]),
    ("<user>a <!-- open", [("chatmd.unterminated_comment", 1, 9)]),
    ("<user>RAW|never closed</user>", [("chatmd.unterminated_raw", 1, 7)]),
    ('<user><img src="x/></user>', [("chatmd.unterminated_attribute", 1, 7)]),
    ('<user><doc src="x"></user>', [("chatmd.mismatched_tag", 1, 20)]),
])
def test_errors(text: str, expected: list[tuple[str, int, int]]) -> None:
    assert errors(text) == expected


def test_every_independent_error_is_reported() -> None:
    text = "<user>x</assistant>\nfoo\n<user>y</system>\n</developer>\n<user>z"
    assert errors(text) == [
        ("chatmd.mismatched_tag", 1, 8),
        ("chatmd.top_level_text", 2, 1),
        ("chatmd.mismatched_tag", 3, 8),
        ("chatmd.unexpected_close", 4, 1),
        ("chatmd.unclosed_element", 5, 1),
    ]


def test_mismatch_recovers_to_enclosing_element() -> None:
    assert errors("<user><agent src='a'>x</user>\n<system>ok</system>") == [
        ("chatmd.mismatched_tag", 1, 23)]


def test_stray_less_than_is_literal_text_when_the_reference_would_fail() -> None:
    # DECISIONS 8: the reference swallows `</user>` into the chunk `<b then c</user>`
    result = parse(SourceFile("p", "<user>if a<b then c</user>"))
    assert result.ok
    (diagnostic,) = result.diagnostics
    assert diagnostic.severity.value == "warning" and diagnostic.hint is not None
    (user,) = result.document.nodes
    assert isinstance(user, Element) and user.children[0] == Text("if a<b then c", None)  # type: ignore[arg-type]


def test_documents_the_reference_accepts_keep_their_reading() -> None:
    # the chunk `<y <img src="a"/>` is one unknown tag there; no second reading here
    result = parse(SourceFile("p", '<user>x <y <img src="a"/> z</user>'))
    assert result.diagnostics == ()
    (user,) = result.document.nodes
    assert isinstance(user, Element)
    assert [type(child).__name__ for child in user.children] == ["Text"]


def test_stray_reading_still_reports_real_errors() -> None:
    assert errors("<user>a<b c</user>\n<system>oops") == [
        ("chatmd.stray_less_than", 1, 8), ("chatmd.unclosed_element", 2, 1)]


def test_mismatch_notes_where_the_element_opened() -> None:
    (diagnostic,) = parse(SourceFile("p", "<user>\nx</assistant>")).diagnostics
    assert [(r.line, r.column) for r in diagnostic.related] == [(1, 1)]


def test_content_mode_keeps_top_level_text() -> None:
    document = parse_text("Policy text\n<doc src='a'/>\n", content_mode=True)
    assert [type(n).__name__ for n in document.nodes] == ["Text", "Element", "Text"]


def test_nesting_is_limited_so_no_later_phase_runs_out_of_stack() -> None:
    from chatmd.parser import MAX_NESTING

    ok = parse(SourceFile("p", "<user>" * MAX_NESTING + "</user>" * MAX_NESTING))
    assert ok.ok and ok.depth == MAX_NESTING
    deep = "<user>" * 5000 + "</user>" * 5000
    assert errors(deep) == [("chatmd.nesting_too_deep", 1, 6 * MAX_NESTING + 1)]
    self_closing = "<user>" * MAX_NESTING + "<img/>" + "</user>" * MAX_NESTING
    assert [code for code, _, _ in errors(self_closing)] == ["chatmd.nesting_too_deep"]
