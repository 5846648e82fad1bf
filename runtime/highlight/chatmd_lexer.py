"""The Pygments lexer for ChatMD prompts (``pygmentize -l chatmd FILE``).

It follows the ChatMD lexer's rules (:mod:`chatmd.lexer`): only the closed
vocabulary (:mod:`chatmd.vocabulary`) is markup — the nested shell tags only
inside a structured scope (``<shell_access>``, ``<tool type="shell">``,
read_file tools) —, anything else shaped like a tag is literal text;
``<!-- ... -->`` comments; ``RAW| ... |RAW`` blocks are literal text between
two markers. The body of an inline ``<script>`` (up to ``</script>``) is
highlighted as ChatML, RAW markers inside it included. Unterminated comments
and RAW blocks run to the end of the input; no ``Error`` token is ever made.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterator
from typing import Any, ClassVar

from pygments.lexer import Lexer
from pygments.token import Comment, Name, Operator, Punctuation, String, Text, Whitespace

from chatmd.vocabulary import CORE_TAGS, READ_FILE_TOOL_NAMES, SHELL_TAGS
from runtime.highlight.chatml_lexer import ChatMLLexer

__all__ = ["ChatMDLexer"]

Tokens = Iterator[tuple[int, Any, str]]

_MASTER = re.compile(
    r"(?P<raw>RAW\|)"
    r"|(?P<text>(?:[^<R]|R(?!AW\|))+)"
    r"|(?P<comment><!--)"
    r"|(?P<tag><[A-Za-z_][^>]*>)"
    r"|(?P<end></[A-Za-z_][^>]*>)"
    r"|(?P<other><)",
    re.S,
)
_NAME = re.compile(r"[^ \t\n\r\x0b\x0c]*")
_ATTRIBUTE = re.compile(
    r"(?P<ws>[ \t\n\r\x0b\x0c]+)"
    r"|(?P<name>[A-Za-z0-9_:\-]+)"
    r"|(?P<eq>=)"
    r"|(?P<value>\"[^\"]*\"?|'[^']*'?)"
    r"|(?P<other>.)",
    re.S,
)
_QUOTED_VALUE = re.compile(r"\"(.*?)(?<!\\)\"|'(.*?)(?<!\\)'|([^ \t\n\r\x0b\x0c\"']*)", re.S)


_VALUED = re.compile(r"([A-Za-z0-9_:\-]+)\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|(\S+))")


def _values(attributes: str) -> dict[str, str]:
    """The valued attributes of a tag's attribute text (the last occurrence wins)."""
    return {m.group(1): m.group(2) or m.group(3) or m.group(4) or ""
            for m in _VALUED.finditer(attributes)}


def _opens_scope(name: str, attributes: str) -> bool:
    if name == "shell_access":
        return True
    if name != "tool":
        return False
    values = _values(attributes)
    return values.get("type") == "shell" or values.get("name") in READ_FILE_TOOL_NAMES


def _attribute_tokens(start: int, body: str) -> Tokens:
    """Tokens of the attribute text ``body`` (which starts at offset ``start``)."""
    position = 0
    expect_value = False
    while position < len(body):
        match = _ATTRIBUTE.match(body, position)
        assert match is not None
        kind = match.lastgroup
        text = match.group()
        if kind == "ws":
            yield start + position, Whitespace, text
        elif kind == "eq":
            yield start + position, Operator, text
            expect_value = True
            position = match.end()
            continue
        elif expect_value and kind in ("name", "other") and text not in "/":
            value = _QUOTED_VALUE.match(body, position)
            assert value is not None
            text = value.group() or text
            yield start + position, String, text
            position += len(text)
            expect_value = False
            continue
        elif kind == "name":
            yield start + position, Name.Attribute, text
        elif kind == "value":
            yield start + position, String, text
        else:
            yield start + position, Punctuation if text == "/" else Text, text
        expect_value = False
        position = match.end()


class _Scope:
    """Open elements and structured scopes, tracked as :mod:`chatmd.lexer` tracks them."""

    __slots__ = ("depth", "scopes")

    def __init__(self) -> None:
        self.depth = 0
        self.scopes: list[int] = []

    def known(self, name: str) -> bool:
        """Whether ``name`` is a tag here (shell tags only inside a structured scope)."""
        return name in CORE_TAGS or (bool(self.scopes) and name in SHELL_TAGS)

    def open(self, name: str, attributes: str) -> None:
        self.depth += 1
        if _opens_scope(name, attributes):
            self.scopes.append(self.depth)

    def close(self) -> None:
        if self.scopes and self.scopes[-1] == self.depth:
            self.scopes.pop()
        self.depth = max(self.depth - 1, 0)


class ChatMDLexer(Lexer):
    """ChatMD: vocabulary tags, attributes and values, comments, RAW blocks, inline ChatML."""

    name = "ChatMD"
    aliases: ClassVar[list[str]] = ["chatmd", "chatmarkdown"]
    filenames: ClassVar[list[str]] = ["*.chatmd"]
    mimetypes: ClassVar[list[str]] = ["text/x-chatmd"]

    def __init__(self, **options: Any) -> None:
        options.setdefault("stripnl", False)
        super().__init__(**options)
        self._chatml = ChatMLLexer(stripnl=False, ensurenl=False)

    def get_tokens_unprocessed(self, text: str) -> Tokens:
        scope = _Scope()
        i = 0
        n = len(text)
        while i < n:
            match = _MASTER.match(text, i)
            assert match is not None
            kind = match.lastgroup
            j = match.end()
            if kind == "raw":
                yield from self._raw(text, i, Text)
                close = text.find("|RAW", i + 4)
                j = n if close < 0 else close + 4
            elif kind == "comment":
                close = text.find("-->", i + 4)
                j = n if close < 0 else close + 3
                yield i, Comment.Multiline, text[i:j]
            elif kind == "tag":
                j = yield from self._start_tag(text, match, scope)
            elif kind == "end" and scope.known(match.group()[2:-1]):
                name = match.group()[2:-1]
                scope.close()
                yield i, Punctuation, "</"
                yield i + 2, Name.Tag, name
                yield i + 2 + len(name), Punctuation, ">"
            else:  # text, a lone `<`, an unknown end tag
                yield i, Text, match.group()
            i = j

    def _start_tag(self, text: str, match: re.Match[str], scope: _Scope
                   ) -> Generator[tuple[int, Any, str], None, int]:
        """The tokens of an opening tag (and of an inline script's body); where lexing resumes."""
        start, end = match.start(), match.end()
        chunk = match.group()
        self_closing = chunk.endswith("/>") and len(chunk) > 3
        inner = chunk[1 : -2 if self_closing else -1]
        name = _NAME.match(inner).group()  # type: ignore[union-attr]  # inner starts with a name (the tag pattern matched it)
        if not scope.known(name):
            yield start, Text, chunk
            return end
        yield from self._tag(start, chunk, name, self_closing)
        if self_closing:
            return end
        scope.open(name, inner[len(name):])
        if name != "script" or _values(inner[len(name):]).get("language", "chatml") != "chatml":
            return end  # only a ChatML body is highlighted as ChatML
        body_end = self._script_body_end(text, end)
        yield from self._script_body(text, end, body_end)
        return body_end

    @staticmethod
    def _tag(start: int, chunk: str, name: str, self_closing: bool) -> Tokens:
        yield start, Punctuation, "<"
        yield start + 1, Name.Tag, name
        closer = "/>" if self_closing else ">"
        body = chunk[1 + len(name) : len(chunk) - len(closer)]
        if body:
            yield from _attribute_tokens(start + 1 + len(name), body)
        yield start + len(chunk) - len(closer), Punctuation, closer

    @staticmethod
    def _script_body_end(text: str, start: int) -> int:
        close = text.find("</script>", start)
        return len(text) if close < 0 else close

    def _raw(self, text: str, start: int, body_token: Any, limit: int | None = None) -> Tokens:
        """The RAW block opened at ``start``: markers and a literal (or ChatML) body."""
        end = len(text) if limit is None else limit
        yield start, String.Delimiter, "RAW|"
        close = text.find("|RAW", start + 4, end)
        body_end = end if close < 0 else close
        if body_end > start + 4:
            if body_token is None:
                yield from self._chatml_tokens(text, start + 4, body_end)
            else:
                yield start + 4, body_token, text[start + 4 : body_end]
        if close >= 0:
            yield close, String.Delimiter, "|RAW"

    def _script_body(self, text: str, start: int, end: int) -> Tokens:
        """An inline script body: ChatML, with RAW blocks' markers shown as markers."""
        i = start
        while i < end:
            opener = text.find("RAW|", i, end)
            if opener < 0:
                yield from self._chatml_tokens(text, i, end)
                return
            if opener > i:
                yield from self._chatml_tokens(text, i, opener)
            yield from self._raw(text, opener, None, end)
            close = text.find("|RAW", opener + 4, end)
            i = end if close < 0 else close + 4

    def _chatml_tokens(self, text: str, start: int, end: int) -> Tokens:
        for offset, token, value in self._chatml.get_tokens_unprocessed(text[start:end]):
            yield start + offset, token, value

