"""The parser's whole-element fast path reads every document as the plain path does.

``iter_tokens(elements=True)`` hands the parser a run of elements that hold
just text (and the blanks before each) as one token, the nodes already built
(:mod:`chatmd.element_runs`). Over generated documents mixing
such elements with everything that must not take the fast path -- nested and
self-closing elements, unknown tags, stray ``<`` and ``|``, RAW blocks not
directly closed, attributes with entities, escapes or ``>``, shell scopes,
comments, entities, CRLF and lone CR line ends, unterminated comments and RAW
blocks, mismatched and unclosed tags -- both readings must give the same
tree (spans included), the same diagnostics, the same depth and the same
stray candidates, in document and in content mode.
"""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from chatcommon.sources import SourceFile
from chatmd.ast import Element, Text
from chatmd.element_runs import SIMPLE_OPEN
from chatmd.parser import Parser, parse
from tests.support import REPO_ROOT

WORDS = ["hello", "the model", "x > y", "a|b", "RAW", "RAW|", "|RAW", "&amp;", "  ", "\n", "\r\n",
         "<!-- unterminated", "RAW|unterminated", "&bogus;", "&#x41;",
         "<", "<b>bold</b>", "é", "<!-- c -->", "</user >"]
TAGS = ["user", "assistant", "system", "developer", "tool_call", "tool_response", "msg",
        "reasoning", "summary", "config", "doc", "img", "import", "tool", "shell_access",
        "allow", "unknown", "User", "tool-call"]
ATTRIBUTES = ['', ' id="m1"', ' tool_call_id="call_1" function_name="f"', " a='1'", ' a="x&amp;y"',
              ' a="b\\"c"', ' flag', ' a="x>y"', ' a="1"/', ' role="user"  ', ' type="shell"',
              ' a="<"', ' a="unclosed', ' ochat-history-id="1:s:0"', ' ochat-source-context="x.md"',
              ' role="tool" tool_call function_name="f" tool_call_id="c" status="done"',
              ' id="a"\n status="s"\tphase="p" name="n"', ' id="a" id="b" type="t" type="u"',
              ' tool_call_id="x" function_name="f" tool_call_id="y" function_name="g"',
              ' tool_call_id="c" role="r" name="n" phase="p" status="s" other="o" type="t"']


def _simple(tag: str, attributes: str, body: str, raw: bool, gap: str) -> str:
    content = f"{gap}RAW|{body}|RAW" if raw else body
    return f"<{tag}{attributes}>{content}</{tag}>"


simple = st.builds(_simple, st.sampled_from(TAGS), st.sampled_from(ATTRIBUTES),
                   st.text(st.sampled_from("ab <|>&\n\r\tRAW/"), max_size=12),
                   st.booleans(), st.sampled_from(["", " ", "\n", "\n \t", "\r\n", "\r"]))
fragment = st.one_of(
    simple, simple, simple,
    st.sampled_from(WORDS),
    st.builds(lambda t, a: f"<{t}{a}/>", st.sampled_from(TAGS), st.sampled_from(ATTRIBUTES)),
    st.builds(lambda t, a: f"<{t}{a}>", st.sampled_from(TAGS), st.sampled_from(ATTRIBUTES)),
    st.builds(lambda t: f"</{t}>", st.sampled_from(TAGS)),
    st.sampled_from(["\n", "\n\n", " ", "", "\r\n", "\r\n\r\n"]),
)
documents = st.lists(fragment, max_size=25).map("".join)


def _tree(node: Any) -> Any:
    """The node with every position, for an exact comparison."""
    if isinstance(node, Text):
        return ("text", node.text, node.span.start, node.span.end)
    assert isinstance(node, Element)
    end = None if node.end_span is None else (node.end_span.start, node.end_span.end)
    return ("element", node.tag, node.attrs, node.span.start, node.span.end, end,
            node.self_closing, tuple(_tree(child) for child in node.children))


def _reading(text: str, content_mode: bool, fast: bool) -> Any:
    source = SourceFile("doc.chatmd", text)
    parser = Parser(source, content_mode=content_mode, whole_elements=fast)
    document = parser.run()
    diagnostics = sorted((d.code, d.line, d.column, d.end_line, d.end_column, d.message)
                         for d in parser.lex_diagnostics + parser.diagnostics)
    return (tuple(_tree(node) for node in document.nodes), diagnostics, parser.depth,
            parser.stray_candidates)


@settings(max_examples=600, deadline=None)
@given(documents, st.booleans())
def test_both_readings_agree(text: str, content_mode: bool) -> None:
    assert _reading(text, content_mode, True) == _reading(text, content_mode, False)


def test_the_dense_transcript_takes_the_fast_path_and_agrees() -> None:
    import sys

    sys.path.insert(0, str(REPO_ROOT / "benchmarks"))
    from chatmd_parse import generate_dense

    text, _ = generate_dense(40)
    assert _reading(text, False, True) == _reading(text, False, False)
    from chatmd.lexer import ELEMENTS, iter_tokens

    tokens = list(iter_tokens(SourceFile("d", text), [], elements=True))
    # every message element comes in one run (after <config/> and <tool/>, self-closing)
    assert sum(len(token[1]) for token in tokens if token[0] == ELEMENTS) == 4 * 40
    assert [token[0] for token in tokens].count(ELEMENTS) == 1
    assert parse(SourceFile("d", text)).ok


def test_real_prompts_agree() -> None:
    for path in sorted((REPO_ROOT / "examples").glob("*.chatmd")):
        text = path.read_text(encoding="utf-8")
        assert _reading(text, False, True) == _reading(text, False, False), path


#: SIMPLE_OPEN as first written, with backtracking quantifiers.
_BACKTRACKING_OPEN = re.compile(
    r"([ \t\r\n]*)<([A-Za-z_][A-Za-z0-9_]*)"
    r"((?:[ \t\n\r\x0b\x0c]+[A-Za-z0-9_:\-]+=\"[^\"\\\\&<>]*\")*)[ \t\n\r\x0b\x0c]*>")
opening_tags = st.builds(
    lambda blanks, name, inside, tail: f"{blanks}<{name}{''.join(inside)}{tail}",
    st.sampled_from(["", "\n", " \t\r\n", "x"]), st.sampled_from(["user", "a_1", "tool_call", "1"]),
    st.lists(st.sampled_from([" ", "\n", "\t", "\x0b", "\x0c", "id", "a:b-c", "=", '"', "v", "\\",
                              "&", "<", ">", "'", ' id="v"', 'id="v"', ' a="x\\y"', ' a="&"', ' a="x>y"',
                              ' a="<"']), max_size=10),
    st.sampled_from([">", " >", "/>", "", "\x0c>", '">']))


@settings(max_examples=3000, deadline=None)
@given(opening_tags)
def test_the_possessive_opening_tag_pattern_matches_as_the_backtracking_one(text: str) -> None:
    new, old = SIMPLE_OPEN.match(text), _BACKTRACKING_OPEN.match(text)
    assert (new is None) == (old is None)
    if new is not None and old is not None:
        assert new.groups() == old.groups() and new.end() == old.end()
