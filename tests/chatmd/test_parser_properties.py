"""Hypothesis properties: the lexer and parser never fail with anything but diagnostics."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from chatcommon.diagnostics import DiagnosticError
from chatcommon.sources import SourceFile
from chatmd.parser import parse, parse_document

FRAGMENTS = [
    "<", ">", "/", "|", "RAW|", "|RAW", "<!--", "-->", "<user>", "</user>", "<assistant>",
    "</assistant>", "<tool_call ", "</tool_call>", "<doc src='a' local/>", "<img", "=", '"',
    "'", "\\", "&amp;", "&", ";", " ", "\n", "\r\n", "\t", "<shell_access id='x'>",
    "</shell_access>", "<read/>", "<limits/>", "<tool name='read_file'>", "</tool>", "<b>",
    "</b>", "<User>", "text", "é", "\ufeff", "<config model=x/>", "<msg role='user'>",
    "</msg>", "<import src='x'/>", "\x00", "\x0b",
]

documents = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=5), max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(documents)
def test_parse_reports_diagnostics_never_exceptions(text: str) -> None:
    for content_mode in (False, True):
        result = parse(SourceFile("fuzz", text), content_mode=content_mode)
        for diagnostic in result.diagnostics:
            assert diagnostic.code.startswith("chatmd.")
            assert diagnostic.line >= 1 and diagnostic.column >= 1


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_arbitrary_unicode_text(text: str) -> None:
    try:
        parse_document(SourceFile("fuzz", text))
    except DiagnosticError as error:
        assert error.diagnostics
