"""The Pygments lexers: every corpus text round-trips without Error tokens; targeted cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.token import Error, Token, _TokenType

from runtime.highlight import ChatMDLexer, ChatMLLexer
from tests.support import CONFORMANCE, REPO_ROOT


def _repository_files(suffix: str) -> list[Path]:
    return sorted(p for p in REPO_ROOT.rglob(f"*{suffix}")
                  if ".venv" not in p.parts and "build" not in p.parts)


def _conformance_texts(language: str) -> list[tuple[str, str]]:
    path = CONFORMANCE / language / "cases.jsonl"
    texts: list[tuple[str, str]] = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            case = json.loads(line)
            for key in ("document", "source"):
                if isinstance(case.get(key), str):
                    texts.append((case["id"], case[key]))
            for name, text in (case.get("files") or {}).items():
                if name.endswith(".chatmd" if language == "chatmd" else ".chatml"):
                    texts.append((f"{case['id']}:{name}", text))
    return texts


def _check_round_trip(lexer: Lexer, text: str) -> list[tuple[_TokenType, str]]:
    tokens = [(kind, value) for _, kind, value in lexer.get_tokens_unprocessed(text)]
    assert "".join(value for _, value in tokens) == text
    errors = [(kind, value) for kind, value in tokens if kind in Error]
    assert errors == []
    offsets = [offset for offset, _, _ in lexer.get_tokens_unprocessed(text)]
    assert offsets == sorted(offsets)
    return tokens


CHATMD_FILES = _repository_files(".chatmd")
CHATML_FILES = _repository_files(".chatml")


def test_the_repository_has_files_of_both_languages() -> None:
    assert len(CHATMD_FILES) > 40 and len(CHATML_FILES) > 10


@pytest.mark.parametrize("path", CHATMD_FILES, ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_every_chatmd_file_round_trips(path: Path) -> None:
    _check_round_trip(ChatMDLexer(), path.read_text(encoding="utf-8", errors="replace"))


@pytest.mark.parametrize("path", CHATML_FILES, ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_every_chatml_file_round_trips(path: Path) -> None:
    _check_round_trip(ChatMLLexer(), path.read_text(encoding="utf-8", errors="replace"))


def test_every_conformance_text_round_trips() -> None:
    chatmd, chatml = _conformance_texts("chatmd"), _conformance_texts("chatml")
    assert len(chatmd) >= 45 and len(chatml) >= 150
    for _, text in chatmd:
        _check_round_trip(ChatMDLexer(), text)
    for _, text in chatml:
        _check_round_trip(ChatMLLexer(), text)


def test_get_tokens_reproduces_the_text_with_newlines_kept() -> None:
    text = "\n\n<user>hi</user>\n\n"
    assert "".join(v for _, v in ChatMDLexer().get_tokens(text)) == text
    assert "".join(v for _, v in ChatMLLexer().get_tokens("\nlet x = 1\n")) == "\nlet x = 1\n"


def test_registered_through_the_entry_point() -> None:
    assert isinstance(get_lexer_by_name("chatmd"), ChatMDLexer)
    assert isinstance(get_lexer_by_name("chatml"), ChatMLLexer)
    assert isinstance(get_lexer_for_filename("a.chatmd"), ChatMDLexer)
    assert isinstance(get_lexer_for_filename("m.chatml"), ChatMLLexer)


def _kinds(lexer: Lexer, text: str) -> list[tuple[_TokenType, str]]:
    return [(kind, value) for kind, value in _check_round_trip(lexer, text)
            if value.strip()]


# ----------------------------------------------------------------------------- ChatMD


def test_vocabulary_tags_and_attributes() -> None:
    kinds = _kinds(ChatMDLexer(), '<config model="gpt-4o" show_tool_call/>')
    assert kinds == [(Token.Punctuation, "<"), (Token.Name.Tag, "config"),
                     (Token.Name.Attribute, "model"), (Token.Operator, "="),
                     (Token.Literal.String, '"gpt-4o"'), (Token.Name.Attribute, "show_tool_call"),
                     (Token.Punctuation, "/>")]


def test_unknown_markup_is_text() -> None:
    kinds = _kinds(ChatMDLexer(), "<user><b>bold</b> and <capabilities/></user>")
    assert (Token.Text, "<b>") in kinds and (Token.Text, "</b>") in kinds
    assert (Token.Text, "<capabilities/>") in kinds  # a shell tag outside a structured scope
    assert (Token.Name.Tag, "user") in kinds


def test_shell_tags_inside_a_structured_scope() -> None:
    text = '<shell_access id="r"><capabilities network="false"/></shell_access><capabilities/>'
    kinds = _kinds(ChatMDLexer(), text)
    assert (Token.Name.Tag, "capabilities") in kinds
    assert kinds[-1] == (Token.Text, "<capabilities/>")  # the scope has ended


def test_comments_and_raw_blocks() -> None:
    text = "<!-- a <user> comment --><user>RAW|<assistant> is literal|RAW</user>"
    kinds = _kinds(ChatMDLexer(), text)
    assert kinds[0] == (Token.Comment.Multiline, "<!-- a <user> comment -->")
    assert (Token.Literal.String.Delimiter, "RAW|") in kinds
    assert (Token.Text, "<assistant> is literal") in kinds
    assert (Token.Name.Tag, "assistant") not in kinds


def test_unterminated_comment_and_raw_run_to_the_end() -> None:
    assert _kinds(ChatMDLexer(), "<user>x</user><!-- open")[-1] == (Token.Comment.Multiline,
                                                                     "<!-- open")
    assert _kinds(ChatMDLexer(), "<user>RAW|never closed")[-1] == (Token.Text, "never closed")


def test_inline_script_body_is_chatml() -> None:
    text = ('<script language="chatml" kind="moderator">\n(* c (* n *) *)\n'
            'let on_event ctx ev = `Continue\n</script><user>let</user>')
    kinds = _kinds(ChatMDLexer(), text)
    assert (Token.Comment.Multiline, "(*") in kinds
    assert (Token.Keyword.Declaration, "let") in kinds
    assert (Token.Name.Constant, "`Continue") in kinds
    assert kinds[-4:] == [(Token.Text, "let"), (Token.Punctuation, "</"),
                          (Token.Name.Tag, "user"), (Token.Punctuation, ">")]


def test_inline_script_in_a_raw_block_is_chatml() -> None:
    kinds = _kinds(ChatMDLexer(), '<script language="chatml" kind="shell_matcher" id="m">'
                   'RAW|let a = "<x>" |RAW</script>')
    assert (Token.Literal.String.Delimiter, "RAW|") in kinds
    assert (Token.Keyword.Declaration, "let") in kinds
    assert (Token.Literal.String.Double, "<x>") in kinds


def test_unterminated_attribute_value_is_no_error() -> None:
    _check_round_trip(ChatMDLexer(), '<user name="open>text</user>')
    _check_round_trip(ChatMDLexer(), "<user a=b c = 'd' / = >x</user>")


# ----------------------------------------------------------------------------- ChatML


def test_chatml_token_classes() -> None:
    text = 'let rec f x = if x >=. 1.5 then String.length "a\\tb\\q" else `None ++ ()'
    kinds = _kinds(ChatMLLexer(), text)
    assert (Token.Keyword.Declaration, "let") in kinds
    assert (Token.Keyword.Declaration, "rec") in kinds
    assert (Token.Keyword, "if") in kinds
    assert (Token.Operator, ">=.") in kinds
    assert (Token.Literal.Number.Float, "1.5") in kinds
    assert (Token.Name.Namespace, "String") in kinds
    assert (Token.Literal.String.Escape, "\\t") in kinds
    assert (Token.Literal.String.Escape, "\\q") in kinds
    assert (Token.Name.Constant, "`None") in kinds
    assert (Token.Operator, "++") in kinds


def test_nested_comments() -> None:
    kinds = _kinds(ChatMLLexer(), "(* a (* b *) still comment *) let")
    assert all(kind in Token.Comment for kind, _ in kinds[:-1])
    assert kinds[-1] == (Token.Keyword.Declaration, "let")


def test_rejected_input_is_text_not_error() -> None:
    for text in ["let x = a && b", '"unterminated', "(* open", "#", "\\", '"\\']:
        _check_round_trip(ChatMLLexer(), text)


def test_a_script_in_another_language_is_text() -> None:
    kinds = _kinds(ChatMDLexer(), '<script language="python" kind="moderator">let x</script>')
    assert (Token.Text, "let x") in kinds
    assert (Token.Keyword.Declaration, "let") not in kinds
