"""The ChatML lexer: source text to tokens.

:func:`lex` produces a :class:`TokenStream` (parallel lists of kinds, values
and offsets: what the parser consumes, and cheap to build); :func:`tokenize`
produces :class:`~chatml.tokens.Token` objects with ply's token interface.

Owns spec section 2 (lexical structure) as amended by DECISIONS 6c: comments
nest and lines inside them are counted (positions come from the
:class:`~common.sources.SourceFile`, which counts every ``\\n``). Longest match
wins; keywords and symbols beat identifiers of the same length.

Lexical errors raise :class:`~common.diagnostics.DiagnosticError` carrying one
``phase="parse"`` diagnostic (codes ``chatml.unknown_character``,
``chatml.unterminated_string``, ``chatml.unterminated_comment``,
``chatml.int_out_of_range``); the messages are the reference's (``Unknown token
'&' at line 1, char 8``, ``Unterminated string literal``, ...). Unknown string
escapes are kept verbatim, as in the reference, and draw a
``chatml.unknown_escape`` warning.

Positions: spans are character offsets into the source text (code points,
not bytes, so "char C" in messages counts code points). A lone ``\\r`` is
treated as whitespace, not as a line break, because
:class:`~common.sources.SourceFile` only breaks lines at ``\\n``. Comments
do not treat string literals specially: ``(* "*)" *)`` ends at the first
``*)``.
"""

from __future__ import annotations

import re
from typing import Any

from chatml.tokens import BOOLEANS, EOF, KEYWORDS, SYMBOLS, Token
from common.diagnostics import Diagnostic, DiagnosticError, Severity
from common.numbers import MAX_DIGITS, abbreviate_digits, parse_int
from common.sources import SourceFile, Span

PHASE = "parse"
MAX_INT = 4611686018427387903  # OCaml's max_int on 64-bit platforms (63-bit ints)

_MASTER = re.compile(
    r"[ \t\r\n]*+(?:"
    r"(let[*+]|[a-z_][A-Za-z0-9_]*)"  # 1: lowercase identifier, keyword, `_`
    r"|(->|<-|:=|==|!=|<=\.|>=\.|<=|>=|<\.|>\.|\+\.|-\.|\*\.|/\.|\+\+|[-+*/<>=:!;,.|])"  # 2
    r"|(\(\*|[(\[{])"  # 3: comment opener or opening bracket
    r"|([)\]}])"  # 4: closing bracket
    r"|([A-Z][A-Za-z0-9_]*)"  # 5: uppercase identifier
    r"|([0-9]+\.[0-9]+)"  # 6: float (before int: longest match)
    r"|([0-9]+)"  # 7: int
    r'|("(?:[^"\\]|\\[\s\S])*")'  # 8: complete string literal
    r"|(`[A-Za-z0-9_]+)"  # 9: variant tag
    r"|([^ \t\r\n])"  # 10: anything else
    r")"
)
#: Lowercase words that are not plain identifiers: word -> (token kind, token value).
_SPECIAL_WORDS: dict[str, tuple[str, Any]] = {
    **{word: (kind, word) for word, kind in KEYWORDS.items()},
    **{word: ("BOOL", value) for word, value in BOOLEANS.items()},
    "_": ("UNDERSCORE", "_"),
}
_COMMENT_DELIMITER = re.compile(r"\(\*|\*\)")
_ESCAPE_OR_CR = re.compile(r"\\([\s\S])|\r\n?")
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", '"': '"'}


_UNKNOWN_HINTS = {
    "&": "ChatML has no `&&` or `&`; write `if a then b else false`",
    "'": "ChatML has no character literals or type variables; strings use double quotes",
    "`": "a variant tag needs a name right after the backtick, as in `Some",
    "^": "use `++` to concatenate strings",
    "%": "ChatML has no `%` operator",
    "#": "ChatML has no `#` syntax; comments are written (* ... *)",
    "@": "ChatML has no `@` operator; use Array functions to join arrays",
    "~": "ChatML has no labelled arguments or `~` operator",
    "?": "ChatML has no optional arguments or `?` operator",
    "\\": "a backslash is only meaningful inside a string literal",
    '"': "this string is never closed with `\"`",
}


def _error(source: SourceFile, start: int, end: int, code: str, message: str,
           hint: str | None = None) -> DiagnosticError:
    return DiagnosticError(Diagnostic.at(Span(source, start, end), code, message, phase=PHASE,
                                         hint=hint))


def _show_char(ch: str) -> str:
    return ch if ch.isprintable() else ascii(ch)[1:-1]


def _unknown_character(source: SourceFile, pos: int) -> DiagnosticError:
    ch = source.text[pos]
    line, column = source.position(pos)
    hint = _UNKNOWN_HINTS.get(ch)
    if hint is None and ord(ch) > 127:
        hint = "non-ASCII characters are only allowed inside string literals"
    elif hint is None and not ch.isprintable():
        hint = "control characters other than tab and line breaks are not allowed"
    if ch == '"':
        return _error(source, pos, pos + 1, "chatml.unterminated_string",
                      "Unterminated string literal", hint)
    return _error(source, pos, pos + 1, "chatml.unknown_character",
                  f"Unknown token '{_show_char(ch)}' at line {line}, char {column - 1}", hint)


def _skip_comment(source: SourceFile, start: int) -> int:
    """Offset just past the comment opened at ``start`` (comments nest)."""
    text = source.text
    search = _COMMENT_DELIMITER.search
    depth = 1
    pos = start + 2
    while True:
        m = search(text, pos)
        if m is None:
            open_count = "1 comment is" if depth == 1 else f"{depth} comments are"
            raise _error(source, start, start + 2, "chatml.unterminated_comment",
                         "Unterminated comment",
                         f"{open_count} still open at end of input; comments nest, so every "
                         "`(*` needs its own `*)`")
        pos = m.end()
        if m.group() == "(*":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return pos


def _decode_string(source: SourceFile, start: int, end: int, warnings: list[Diagnostic]) -> str:
    """The value of the string literal ``text[start:end]`` (quotes included)."""
    body = source.text[start + 1 : end - 1]
    if "\\" not in body and "\r" not in body:
        return body
    base = start + 1

    def replace(m: re.Match[str]) -> str:
        escaped = m.group(1)
        if escaped is None:  # a raw \r or \r\n line break
            return "\n"
        simple = _SIMPLE_ESCAPES.get(escaped)
        if simple is not None:
            return simple
        at = base + m.start()
        shown = _show_char(escaped) if escaped not in "\r\n" else "line break"
        warnings.append(Diagnostic.at(
            Span(source, at, at + 2), "chatml.unknown_escape",
            f"unknown escape `\\{shown}` is kept as a backslash followed by the character",
            phase=PHASE, severity=Severity.WARNING,
            hint="the escapes are \\n \\t \\\\ and \\\"; write \\\\ for a literal backslash"))
        return "\\" + ("\n" if escaped in "\r\n" else escaped)

    return _ESCAPE_OR_CR.sub(replace, body)


class TokenStream:
    """The tokens of one source as parallel lists (what the parser consumes).

    Token ``i`` has kind ``kinds[i]`` (a terminal name, ``$end`` for the final
    EOF token), value ``values[i]`` and offsets ``starts[i]``/``ends[i]``.
    ``continuing`` holds the indices of the ``(``, ``[``, ``-`` and ``-.``
    tokens that begin a line outside any bracket.
    """

    __slots__ = ("source", "kinds", "values", "starts", "ends", "continuing")

    def __init__(self, source: SourceFile) -> None:
        self.source = source
        self.kinds: list[str] = []
        self.values: list[Any] = []
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.continuing: set[int] = set()

    def __len__(self) -> int:
        return len(self.kinds)

    def token(self, index: int) -> Token:
        return Token(self.kinds[index], self.values[index], self.starts[index],
                     self.ends[index], self.source, index in self.continuing)

    def tokens(self) -> list[Token]:
        return [self.token(i) for i in range(len(self.kinds))]


def lex(source: SourceFile) -> tuple[TokenStream, list[Diagnostic]]:
    """All tokens of ``source`` (ending with an EOF token) and the lexer's warnings.

    Raises :class:`DiagnosticError` at the first lexical error.
    """
    text = source.text
    finditer = _MASTER.finditer
    special_words = _SPECIAL_WORDS
    symbols = SYMBOLS
    stream = TokenStream(source)
    kinds = stream.kinds
    values = stream.values
    starts = stream.starts
    ends = stream.ends
    add_kind = kinds.append
    add_value = values.append
    add_start = starts.append
    add_end = ends.append
    warnings: list[Diagnostic] = []
    pos = 0
    depth = 0
    try:
        while True:
            for m in finditer(text, pos):
                group = m.lastindex
                word = m[group]
                end = m.end()  # every group ends the match: cheaper than m.span(group)
                start = end - len(word)
                if group == 1:
                    special = special_words.get(word)
                    if special is None:
                        add_kind("LIDENT")
                        add_value(word)
                    else:
                        add_kind(special[0])
                        add_value(special[1])
                elif group == 2:
                    kind = symbols[word]
                    if depth == 0 and (kind == "MINUS" or kind == "MINUSDOT") and \
                            text.find("\n", ends[-1] if ends else 0, start) >= 0:
                        stream.continuing.add(len(kinds))
                    add_kind(kind)
                    add_value(word)
                elif group == 3:
                    if word == "(*":
                        pos = _skip_comment(source, start)
                        break
                    if depth == 0 and word != "{" and \
                            text.find("\n", ends[-1] if ends else 0, start) >= 0:
                        stream.continuing.add(len(kinds))
                    depth += 1
                    add_kind(symbols[word])
                    add_value(word)
                elif group == 4:
                    if depth:
                        depth -= 1
                    add_kind(symbols[word])
                    add_value(word)
                elif group == 5:
                    add_kind("UIDENT")
                    add_value(word)
                elif group == 7:
                    value = int(word) if len(word) <= MAX_DIGITS else parse_int(word)
                    if value is None or value > MAX_INT:
                        raise _error(source, start, end, "chatml.int_out_of_range",
                                     f"int_of_string: integer literal {abbreviate_digits(word)} "
                                     "is out of range",
                                     f"ChatML integers are 63-bit: the largest is {MAX_INT}")
                    add_kind("INT")
                    add_value(value)
                elif group == 6:
                    add_kind("FLOAT")
                    add_value(float(word))
                elif group == 8:
                    add_kind("STRING")
                    add_value(_decode_string(source, start, end, warnings))
                elif group == 9:
                    add_kind("TAG")
                    add_value(word[1:])
                else:
                    raise _unknown_character(source, start)
                add_start(start)
                add_end(end)
            else:
                break
    except DiagnosticError as error:  # keep the warnings reported before the error
        raise DiagnosticError([*error.diagnostics, *warnings]) from None
    eof = len(text)
    add_kind(EOF)
    add_value(None)
    add_start(eof)
    add_end(eof)
    return stream, warnings


def tokenize(source: SourceFile) -> tuple[list[Token], list[Diagnostic]]:
    """All tokens of ``source`` as :class:`Token` objects (ply's token interface), and warnings.

    Raises :class:`DiagnosticError` at the first lexical error.
    """
    stream, warnings = lex(source)
    return stream.tokens(), warnings
