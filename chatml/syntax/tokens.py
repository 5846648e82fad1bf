"""ChatML tokens: the token kinds, their spellings, and the :class:`Token` record.

The kind names are the terminal names of the grammar in :mod:`chatml.syntax.grammar`
(they follow the reference's ``chatml_parser.mly``), which :mod:`chatml.syntax.parser`
drives. This module also owns the
friendly names used in syntax-error messages ("expected `)`") and the groups of
kinds that messages summarise ("an expression", "a binary operator").
"""

from __future__ import annotations

from typing import Any

from chatcommon.sources import SourceFile, Span

# Literals and names.
INT = "INT"
FLOAT = "FLOAT"
BOOL = "BOOL"
STRING = "STRING"
LIDENT = "LIDENT"
UIDENT = "UIDENT"
TAG = "TAG"
EOF = "$end"  # ply's name for the end marker

#: Keyword spelling -> token kind (``true``/``false`` are BOOL literals, see :data:`BOOLEANS`).
KEYWORDS: dict[str, str] = {
    "fun": "FUN",
    "if": "IF",
    "then": "THEN",
    "else": "ELSE",
    "while": "WHILE",
    "do": "DO",
    "done": "DONE",
    "let": "LET",
    "let*": "LETSTAR",
    "let+": "LETPLUS",
    "in": "IN",
    "match": "MATCH",
    "with": "WITH",
    "module": "MODULE",
    "struct": "STRUCT",
    "end": "END",
    "open": "OPEN",
    "ref": "REF",
    "rec": "REC",
    "and": "AND",
    "type": "TYPE",
}

BOOLEANS: dict[str, bool] = {"true": True, "false": False}

#: Operator and punctuation spelling -> token kind.
SYMBOLS: dict[str, str] = {
    "->": "ARROW",
    "<-": "LEFTARROW",
    ":": "COLON",
    ":=": "COLONEQ",
    "=": "EQ",
    "==": "EQEQ",
    "!=": "BANGEQ",
    "!": "BANG",
    "<": "LT",
    ">": "GT",
    "<=": "LE",
    ">=": "GE",
    "<.": "LTDOT",
    ">.": "GTDOT",
    "<=.": "LEDOT",
    ">=.": "GEDOT",
    "+": "PLUS",
    "-": "MINUS",
    "*": "STAR",
    "/": "SLASH",
    "+.": "PLUSDOT",
    "-.": "MINUSDOT",
    "*.": "STARDOT",
    "/.": "SLASHDOT",
    "++": "PLUSPLUS",
    "(": "LPAREN",
    ")": "RPAREN",
    "{": "LBRACE",
    "}": "RBRACE",
    "[": "LBRACKET",
    "]": "RBRACKET",
    ";": "SEMI",
    ",": "COMMA",
    ".": "DOT",
    "|": "BAR",
    "_": "UNDERSCORE",
}

SPELLING: dict[str, str] = {kind: text for text, kind in SYMBOLS.items()}
SPELLING.update({kind: text for text, kind in KEYWORDS.items()})

#: Every terminal of the grammar (ply's end marker excluded).
TERMINALS: tuple[str, ...] = (
    INT, FLOAT, BOOL, STRING, LIDENT, UIDENT, TAG,
    *KEYWORDS.values(),
    *(kind for kind in SYMBOLS.values()),
)

#: Binary operator kinds by binding level (comparison 10, additive 20, multiplicative 30).
COMPARISON_OPS = ("EQEQ", "BANGEQ", "LT", "GT", "LE", "GE", "LTDOT", "GTDOT", "LEDOT", "GEDOT")
ADDITIVE_OPS = ("PLUS", "MINUS", "PLUSPLUS", "PLUSDOT", "MINUSDOT")
MULTIPLICATIVE_OPS = ("STAR", "SLASH", "STARDOT", "SLASHDOT")
BINARY_OPS = COMPARISON_OPS + ADDITIVE_OPS + MULTIPLICATIVE_OPS

#: Kinds that can begin an expression (the two error productions ``!=``/``.`` excluded).
EXPRESSION_START = frozenset({
    INT, FLOAT, BOOL, STRING, LIDENT, UIDENT, TAG, "LPAREN", "LBRACKET", "LBRACE",
    "FUN", "IF", "WHILE", "MATCH", "LET", "LETSTAR", "LETPLUS", "REF", "BANG",
    "MINUS", "MINUSDOT",
})

#: Kinds that can begin a pattern.
PATTERN_START = frozenset({
    "UNDERSCORE", LIDENT, "LPAREN", INT, FLOAT, BOOL, STRING, TAG, "LBRACE",
})

#: Kinds that can begin a type expression.
TYPE_START = frozenset({LIDENT, "LPAREN", "LBRACE", "LBRACKET"})

_DESCRIPTIONS = {
    INT: "an integer",
    FLOAT: "a float",
    BOOL: "a boolean",
    STRING: "a string",
    LIDENT: "a lowercase name",
    UIDENT: "a module name",
    TAG: "a variant tag",
    EOF: "end of input",
}


def describe_kind(kind: str) -> str:
    """A friendly name for a token kind, as used after "expected"."""
    if kind in _DESCRIPTIONS:
        return _DESCRIPTIONS[kind]
    return f"`{SPELLING.get(kind, kind)}`"


class Token:
    """One token: ``type`` (kind), ``value``, offsets ``lexpos``/``end`` into ``source``.

    The attribute names are those ply.yacc expects (``type``, ``value``,
    ``lineno``, ``lexpos``). ``value`` is the literal's value (int, float, bool,
    decoded string), the name for identifiers and tags (tags without the
    backtick), and the spelling for keywords and symbols. ``newline`` is set on
    ``(``, ``[``, ``-`` and ``-.`` tokens that begin a line outside any bracket
    (where they silently continue the previous statement).
    """

    __slots__ = ("type", "value", "lexpos", "end", "source", "newline")

    def __init__(self, type: str, value: Any, lexpos: int, end: int, source: SourceFile,
                 newline: bool = False) -> None:
        self.type = type
        self.value = value
        self.lexpos = lexpos
        self.end = end
        self.source = source
        self.newline = newline

    @property
    def lineno(self) -> int:
        """1-based line of the token's start, as reported to users."""
        return self.source.position(self.lexpos)[0]

    @property
    def span(self) -> Span:
        return Span(self.source, self.lexpos, self.end)

    @property
    def text(self) -> str:
        return self.source.text[self.lexpos : self.end]

    def describe(self) -> str:
        """The token as named in "unexpected ..." messages."""
        if self.type == EOF:
            return "end of input"
        text = self.text
        if len(text) > 30:
            text = text[:27] + "..."
        if self.type == STRING:
            return f"string {text}"
        if self.type in (INT, FLOAT):
            return f"number `{text}`"
        if self.type in KEYWORDS.values():
            return f"keyword `{text}`"
        return f"`{text}`"

    def __repr__(self) -> str:
        return f"Token({self.type}, {self.value!r}, {self.lexpos}, {self.end})"
