"""The ChatMD lexer: rule order, RAW blocks, attributes, entities and structured scopes."""

from __future__ import annotations

import pytest

from chatcommon.sources import SourceFile
from chatmd.ast import Attribute
from chatmd.lexer import END, SELF, START, TEXT, Token, attribute_spans, decode_entities, tokenize
from chatmd.parser import parse_text


def lex(text: str) -> list[Token]:
    tokens, diagnostics = tokenize(SourceFile("t", text))
    assert not diagnostics, [str(d) for d in diagnostics]
    return tokens


def kinds(text: str) -> list[tuple[int, str]]:
    return [(t.kind, t.value) for t in lex(text)]


def test_blank_run_before_raw_is_dropped_but_text_prefix_is_kept() -> None:
    assert kinds("\n  RAW|x|RAW") == [(TEXT, "x")]
    assert kinds("Intro: RAW|x|RAW") == [(TEXT, "Intro: "), (TEXT, "x")]


def test_raw_contents_are_literal() -> None:
    assert kinds('RAW|<doc src="x"/><!--c-->&amp;|RAW') == [(TEXT, '<doc src="x"/><!--c-->&amp;')]


def test_stray_terminator_and_bars_are_text() -> None:
    assert "".join(v for _, v in kinds("a|b x |RAW y")) == "a|b x |RAW y"


def test_unknown_tags_are_text_with_exact_spelling() -> None:
    assert kinds('<b class="x">') == [(TEXT, '<b class="x">')]
    assert kinds("</b >") == [(TEXT, "</b >")]


def test_end_tag_name_includes_trailing_space() -> None:
    assert kinds("</user >") == [(TEXT, "</user >")]
    assert kinds("</user>") == [(END, "user")]


def test_tag_chunk_is_cut_at_first_gt_and_may_contain_lt() -> None:
    assert kinds("<b then c</user>") == [(TEXT, "<b then c</user>")]


def test_runs_of_lt_and_safe_comparisons() -> None:
    assert kinds("a < b <3 <<x") == [(TEXT, "a "), (TEXT, "<"), (TEXT, " b "), (TEXT, "<"),
                                      (TEXT, "3 "), (TEXT, "<<"), (TEXT, "x")]


def test_comment_does_not_close_itself() -> None:
    assert kinds("a<!-->b-->c") == [(TEXT, "a"), (TEXT, "c")]


def test_self_closing_and_attributes() -> None:
    (token,) = lex("<doc src='a' local strip = \"b\" x=y/>")
    assert token.kind == SELF
    assert token.attrs == (Attribute("src", "a"), Attribute("local", None),
                           Attribute("strip", "b"), Attribute("x", "y"))


def test_attribute_escaped_quote_keeps_backslash() -> None:
    (token,) = lex('<img alt="A \\"q\\"" n=\'it\\\'s\'/>')
    assert token.attrs == (Attribute("alt", 'A \\"q\\"'), Attribute("n", "it\\'s"))


def test_attribute_value_keeps_newlines_and_duplicates() -> None:
    (token,) = lex('<tool name="a\nb" name="c"/>')
    assert token.attrs == (Attribute("name", "a\nb"), Attribute("name", "c"))


def test_stray_characters_in_attribute_text_are_skipped() -> None:
    (token,) = lex('<doc " = src="x" / />')
    assert token.attrs == (Attribute("src", "x"),)


def test_equals_at_end_is_a_flag() -> None:
    (token,) = lex("<doc src= >")
    assert token.kind == START
    assert token.attrs == (Attribute("src", None),)


@pytest.mark.parametrize(("raw", "decoded"), [
    ("a&amp;b", "a&b"),
    ("&lt;&gt;&quot;&apos;", "<>\"'"),
    ("&amp;lt;", "&lt;"),
    ("&copy; &#39;", "&copy; &#39;"),
    ("a & b", "a & b"),
    ("tail &", "tail &"),
])
def test_entities(raw: str, decoded: str) -> None:
    assert decode_entities(raw) == decoded


def test_entities_only_in_quoted_values() -> None:
    (token,) = lex("<doc a=&amp; b=\"&amp;\"/>")
    assert token.attrs == (Attribute("a", "&amp;"), Attribute("b", "&"))


def test_shell_names_only_inside_structured_scopes() -> None:
    assert kinds('<user><read id="a"/></user>')[1] == (TEXT, '<read id="a"/>')
    in_read_file = kinds('<tool name="read_file"><read id="a"/></tool>')
    assert in_read_file[1] == (SELF, "read")
    in_shell = kinds('<shell_access id="x"><limits/><policy></policy></shell_access>')
    assert [k for k, _ in in_shell] == [START, SELF, START, END, END]
    no_scope = kinds('<tool runtime="r"><limits/></tool>')
    assert no_scope[1] == (TEXT, "<limits/>")
    after = kinds('<shell_access id="x"></shell_access><user><limits/></user>')
    assert after[3] == (TEXT, "<limits/>")


def test_self_closing_scope_opener_opens_no_scope() -> None:
    assert kinds('<tool type="shell"/><user><read/></user>')[2] == (TEXT, "<read/>")


def test_attribute_spans_are_found_on_demand() -> None:
    document = parse_text('<config  model="m" show_tool_call temperature=0.5/>')
    (config,) = document.nodes
    spans = attribute_spans(config)  # type: ignore[arg-type]
    assert [s.text for s in spans] == ['model="m"', "show_tool_call", "temperature=0.5"]
    assert spans[0].start_position == (1, 10)


@pytest.mark.parametrize(("text", "code", "position"), [
    ('<user><img src="x/></user>', "chatmd.unterminated_attribute", (1, 7)),
    ('<b title="x></user>', "chatmd.unterminated_attribute", (1, 1)),
    ("<user>RAW|never", "chatmd.unterminated_raw", (1, 7)),
    ("<user>a <!-- open", "chatmd.unterminated_comment", (1, 9)),
])
def test_lexical_errors(text: str, code: str, position: tuple[int, int]) -> None:
    _, diagnostics = tokenize(SourceFile("t", text))
    assert [(d.code, (d.line, d.column)) for d in diagnostics] == [(code, position)]
    assert diagnostics[0].phase == "lex"
