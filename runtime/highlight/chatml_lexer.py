"""The Pygments lexer for ChatML source (``pygmentize -l chatml FILE``).

The token set follows :mod:`chatml.syntax.tokens` (keywords, ``true``/``false``,
operators and punctuation) and :mod:`chatml.syntax.lexer` (nested ``(* ... *)``
comments, strings with ``\\n \\t \\\\ \\"`` escapes, backtick variant tags,
``Module.name`` paths). Text the ChatML lexer would reject (a stray ``&``, an
unterminated string or comment) is still highlighted as well as it can be:
never with an ``Error`` token, and always covering every character.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from pygments.lexer import RegexLexer, words
from pygments.token import (
    Comment,
    Keyword,
    Name,
    Number,
    Operator,
    Punctuation,
    String,
    Text,
    Whitespace,
)

from chatml.syntax.tokens import BOOLEANS, KEYWORDS, SYMBOLS

__all__ = ["ChatMLLexer"]

_PUNCTUATION = frozenset({"(", ")", "{", "}", "[", "]", ";", ",", ".", "|", ":"})
#: Operators, longest spelling first (so ``<=.`` wins over ``<=`` and ``<``).
_OPERATORS = tuple(sorted((s for s in SYMBOLS if s not in _PUNCTUATION and s != "_"),
                          key=len, reverse=True))
_KEYWORDS = tuple(sorted((k for k in KEYWORDS if k[-1].isalpha()), key=len, reverse=True))
_TYPE_NAMES = ("int", "float", "string", "bool", "unit", "array", "ref", "json", "task")


class ChatMLLexer(RegexLexer):
    """ChatML: keywords, operators, strings with escapes, nested comments, tags, module paths."""

    name = "ChatML"
    aliases: ClassVar[list[str]] = ["chatml"]
    filenames: ClassVar[list[str]] = ["*.chatml"]
    mimetypes: ClassVar[list[str]] = ["text/x-chatml"]
    flags = re.MULTILINE

    tokens: ClassVar[dict[str, Any]] = {
        "root": [
            (r"[ \t\r\n]+", Whitespace),
            (r"\(\*", Comment.Multiline, "comment"),
            (r"let[*+]", Keyword.Declaration),
            (words(("let", "type", "module", "open", "rec", "and"), suffix=r"\b"),
             Keyword.Declaration),
            (words(tuple(BOOLEANS), suffix=r"\b"), Keyword.Constant),
            (words(_KEYWORDS, suffix=r"\b"), Keyword),
            (r"[A-Z][A-Za-z0-9_]*(?=\s*\.)", Name.Namespace),
            (r"[A-Z][A-Za-z0-9_]*", Name.Namespace),
            (r"`[A-Za-z0-9_]+", Name.Constant),
            (words(_TYPE_NAMES, suffix=r"\b"), Keyword.Type),
            (r"_\b", Keyword.Pseudo),
            (r"[a-z_][A-Za-z0-9_]*", Name),
            (r"[0-9]+\.[0-9]+", Number.Float),
            (r"[0-9]+", Number.Integer),
            (r'"', String.Double, "string"),
            (words(_OPERATORS), Operator),
            (r"[()\[\]{};,.|:]", Punctuation),
            (r".", Text),  # a character ChatML rejects: shown as text, never as an error
        ],
        "comment": [
            (r"\(\*", Comment.Multiline, "#push"),
            (r"\*\)", Comment.Multiline, "#pop"),
            (r"[^(*]+", Comment.Multiline),
            (r"[(*]", Comment.Multiline),
        ],
        "string": [
            (r'\\[nt\\"]', String.Escape),
            (r"\\[\s\S]", String.Escape),  # unknown escape: kept verbatim by ChatML
            (r'[^"\\]+', String.Double),
            (r'"', String.Double, "#pop"),
            (r"\\", String.Double),  # a backslash at the very end of the input
        ],
    }

    def __init__(self, **options: Any) -> None:
        options.setdefault("stripnl", False)
        super().__init__(**options)
