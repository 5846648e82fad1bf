"""Unit tests for the ChatML lexer (spec section 2, DECISIONS 6c)."""

from __future__ import annotations

import pytest

from chatcommon.diagnostics import DiagnosticError, Severity
from chatcommon.sources import SourceFile
from chatml.syntax.lexer import MAX_INT, lex, tokenize


def kinds(text: str) -> list[str]:
    stream, _ = lex(SourceFile("t", text))
    return stream.kinds[:-1]


def values(text: str) -> list[object]:
    stream, _ = lex(SourceFile("t", text))
    return stream.values[:-1]


def lex_error(text: str) -> DiagnosticError:
    with pytest.raises(DiagnosticError) as raised:
        lex(SourceFile("t", text))
    return raised.value


@pytest.mark.parametrize(("text", "expected"), [
    ("letx", ["LIDENT"]),
    ("let*", ["LETSTAR"]),
    ("let+ x", ["LETPLUS", "LIDENT"]),
    ("let *", ["LET", "STAR"]),
    ("_", ["UNDERSCORE"]),
    ("_x __y", ["LIDENT", "LIDENT"]),
    ("1.5e3", ["FLOAT", "LIDENT"]),
    ("0x10", ["INT", "LIDENT"]),
    ("1.", ["INT", "DOT"]),
    (".5", ["DOT", "INT"]),
    ("x<.5", ["LIDENT", "LTDOT", "INT"]),
    ("!=x", ["BANGEQ", "LIDENT"]),
    ("007", ["INT"]),
    ("a<=.b>=.c", ["LIDENT", "LEDOT", "LIDENT", "GEDOT", "LIDENT"]),
    ("->:=<-==", ["ARROW", "COLONEQ", "LEFTARROW", "EQEQ"]),
    ("++ +. -. *. /.", ["PLUSPLUS", "PLUSDOT", "MINUSDOT", "STARDOT", "SLASHDOT"]),
    ("||", ["BAR", "BAR"]),
    ("true false", ["BOOL", "BOOL"]),
    ("Module M2_x", ["UIDENT", "UIDENT"]),
    ("`Some `ok `1 `_x", ["TAG", "TAG", "TAG", "TAG"]),
    ("(){}[];,.:", ["LPAREN", "RPAREN", "LBRACE", "RBRACE", "LBRACKET", "RBRACKET", "SEMI",
                    "COMMA", "DOT", "COLON"]),
    ("fun if then else while do done let in match with module struct end open ref rec and "
     "type", ["FUN", "IF", "THEN", "ELSE", "WHILE", "DO", "DONE", "LET", "IN", "MATCH", "WITH",
              "MODULE", "STRUCT", "END", "OPEN", "REF", "REC", "AND", "TYPE"]),
    ("not begin of when as mod land list option", ["LIDENT"] * 9),
])
def test_tokenisation_rule(text: str, expected: list[str]) -> None:
    assert kinds(text) == expected


def test_values() -> None:
    assert values('007 1.25 true "a" x `Tag M') == [7, 1.25, True, "a", "x", "Tag", "M"]
    assert values(str(MAX_INT)) == [MAX_INT]


def test_string_escapes_and_line_breaks() -> None:
    assert values(r'"a\nb\tc\\d\"e"') == ['a\nb\tc\\d"e']
    assert values('"x\r\ny\rz"') == ["x\ny\nz"]
    stream, warnings = lex(SourceFile("t", r'"a\qb" "\r"'))
    assert stream.values[:2] == ["a\\qb", "\\r"]
    assert [w.code for w in warnings] == ["chatml.unknown_escape"] * 2
    assert all(w.severity is Severity.WARNING for w in warnings)
    assert (warnings[0].line, warnings[0].column, warnings[0].end_column) == (1, 3, 5)


def test_strings_keep_unicode() -> None:
    assert values('"héllo ✓"') == ["héllo ✓"]


def test_comments_nest_and_count_lines() -> None:
    assert kinds("(* a (* b *) c *) x") == ["LIDENT"]
    assert kinds("(**) (*)*) x") == ["LIDENT"]
    stream, _ = lex(SourceFile("t", "(* one\n (* two\n *)\n *)\nx"))
    token = stream.token(0)
    assert token.lineno == 5
    assert SourceFile("t", "").name == "t"


def test_repeated_tokens_keep_their_own_positions_values_and_warnings() -> None:
    # The lexer remembers each name, number and plain string it has classified; a repeat
    # must still get its own offsets, and a string with an escape its own warning.
    text = 'x 12 "s" x 12 "s" "a\\q" "a\\q" 99999999999999999999'
    with pytest.raises(DiagnosticError) as raised:
        lex(SourceFile("t", text))
    stream, warnings = lex(SourceFile("t", text[: text.rindex(" ")]))
    assert stream.values[:-1] == ["x", 12, "s", "x", 12, "s", "a\\q", "a\\q"]
    assert stream.starts[:-1] == [0, 2, 5, 9, 11, 14, 18, 24]
    assert stream.ends[:-1] == [1, 4, 8, 10, 13, 17, 23, 29]
    assert [w.column for w in warnings] == [21, 27]
    assert raised.value.first.code == "chatml.int_out_of_range"
    assert [w.code for w in raised.value.diagnostics[1:]] == ["chatml.unknown_escape"] * 2


def test_comment_forms() -> None:
    # A comment holding no other comment, one that nests, and stray closers after them.
    assert kinds("a (* x ( * ) **) b (* (* *) (* *) *) c *)") == [
        "LIDENT", "LIDENT", "LIDENT", "STAR", "RPAREN"]
    assert kinds("(*) x *) (* \"*) \"y\"") == ["STRING"]


def test_comment_markers_inside_strings_are_text() -> None:
    assert values('"(* not a comment *)"') == ["(* not a comment *)"]


def test_unterminated_comment_points_at_the_outer_opener() -> None:
    error = lex_error("x (* a (* b *) c")
    d = error.first
    assert (d.code, d.message, d.line, d.column) == (
        "chatml.unterminated_comment", "Unterminated comment", 1, 3)
    assert d.hint is not None and "nest" in d.hint


def test_unterminated_string() -> None:
    d = lex_error('print("abc').first
    assert (d.code, d.message, d.column) == ("chatml.unterminated_string",
                                             "Unterminated string literal", 7)
    assert lex_error('"abc\\"').first.code == "chatml.unterminated_string"


@pytest.mark.parametrize(("text", "shown", "column"), [
    ("print(1 && 2)", "&", 8), ("@", "@", 0), ("x'", "'", 1), ("` x", "`", 0),
    ("a # b", "#", 2), ("é", "é", 0), ("\x0c", "\\x0c", 0),
])
def test_unknown_characters(text: str, shown: str, column: int) -> None:
    d = lex_error(text).first
    assert d.code == "chatml.unknown_character"
    assert d.message == f"Unknown token '{shown}' at line 1, char {column}"
    assert d.phase == "parse"
    assert d.hint


def test_int_out_of_range() -> None:
    d = lex_error(f"let x = {MAX_INT + 1}").first
    assert d.code == "chatml.int_out_of_range"
    assert "int_of_string" in d.message
    assert lex_error("99999999999999999999").first.code == "chatml.int_out_of_range"


def test_spans_and_positions() -> None:
    stream, _ = lex(SourceFile("t", "let x =\n  foo(1)"))
    assert stream.starts[:-1] == [0, 4, 6, 10, 13, 14, 15]
    assert stream.ends[:-1] == [3, 5, 7, 13, 14, 15, 16]
    assert stream.kinds[-1] == "$end" and stream.starts[-1] == len("let x =\n  foo(1)")


def test_embedded_source_positions() -> None:
    source = SourceFile("prompt.chatmd", "x\n  @", line_offset=10, first_line_column_offset=8)
    d = lex_error_source(source)
    assert (d.line, d.column) == (12, 3)
    assert d.message == "Unknown token '@' at line 12, char 2"


def lex_error_source(source: SourceFile):  # type: ignore[no-untyped-def]
    with pytest.raises(DiagnosticError) as raised:
        lex(source)
    return raised.value.first


def test_ply_token_interface() -> None:
    tokens, _ = tokenize(SourceFile("t", "a\n  (b)"))
    assert [(t.type, t.value, t.lineno, t.lexpos) for t in tokens] == [
        ("LIDENT", "a", 1, 0), ("LPAREN", "(", 2, 4), ("LIDENT", "b", 2, 5),
        ("RPAREN", ")", 2, 6), ("$end", None, 2, 7)]
    assert tokens[1].newline and not tokens[2].newline


def test_line_start_flags_only_outside_brackets() -> None:
    stream, _ = lex(SourceFile("t", "f\n(x)\n[1]\n-2\n-.3\ng(\n(1),\n-1)"))
    flagged = sorted(stream.kinds[i] for i in stream.continuing)
    assert flagged == ["LBRACKET", "LPAREN", "MINUS", "MINUSDOT"]


def test_crlf_counts_as_one_line_break() -> None:
    stream, _ = lex(SourceFile("t", "a\r\nb\r\n  c"))
    assert [stream.token(i).lineno for i in range(3)] == [1, 2, 3]
