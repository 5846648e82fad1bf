"""The ChatML lexer: source text to tokens.

:func:`lex` produces a :class:`TokenStream` (parallel lists of kinds, values
and offsets: what the parser consumes, and cheap to build); :func:`tokenize`
produces :class:`~chatml.syntax.tokens.Token` objects with ply's token interface.

Owns spec section 2 (lexical structure) as amended by DECISIONS 6c: comments
nest and lines inside them are counted (positions come from the
:class:`~chatcommon.sources.SourceFile`, which counts every ``\\n``). Longest match
wins; keywords and symbols beat identifiers of the same length.

Lexical errors raise :class:`~chatcommon.diagnostics.DiagnosticError` carrying one
``phase="parse"`` diagnostic (codes ``chatml.unknown_character``,
``chatml.unterminated_string``, ``chatml.unterminated_comment``,
``chatml.int_out_of_range``); the messages are the reference's (``Unknown token
'&' at line 1, char 8``, ``Unterminated string literal``, ...). Unknown string
escapes are kept verbatim, as in the reference, and draw a
``chatml.unknown_escape`` warning.

Positions: spans are character offsets into the source text (code points,
not bytes, so "char C" in messages counts code points). A lone ``\\r`` is
treated as whitespace, not as a line break, because
:class:`~chatcommon.sources.SourceFile` only breaks lines at ``\\n``. Comments
do not treat string literals specially: ``(* "*)" *)`` ends at the first
``*)``.
"""

from __future__ import annotations

import re
from typing import Any

from chatcommon.diagnostics import Diagnostic, DiagnosticError, Severity
from chatcommon.numbers import MAX_DIGITS, abbreviate_digits, parse_int
from chatcommon.sources import SourceFile, Span
from chatml.syntax.tokens import BOOLEANS, EOF, KEYWORDS, SYMBOLS, Token

PHASE = "parse"
MAX_INT = 4611686018427387903  # OCaml's max_int on 64-bit platforms (63-bit ints)

#: One token (its text is group 1) after any whitespace. The alternatives are tried in
#: order, so longer spellings come before their prefixes, keywords and symbols before
#: identifiers, floats before ints. A comment that holds no other comment is one match;
#: a nesting one matches just its ``(*`` and is skipped by :func:`_skip_comment`. Runs of
#: plain characters in comments and strings are possessive (``++``, ``*+``): the regex
#: engine then keeps no backtracking state per character (a 10 MB string literal cost
#: about 120 bytes of memory per character before).
_TOKEN = re.compile(
    r"[ \t\r\n]*+("
    r"let[*+]|[a-z_][A-Za-z0-9_]*"  # lowercase identifier, keyword, `_`
    r"|->|<-|:=|==|!=|<=\.|>=\.|<=|>=|<\.|>\.|\+\.|-\.|\*\.|/\.|\+\+|[-+*/<>=:!;,.|]"
    r"|\(\*(?:[^(*]++|\((?!\*)|\*(?!\)))*+\*\)"  # a whole comment holding no other comment
    r"|\(\*|[(\[{]|[)\]}]"  # the opener of a nesting comment; brackets
    r"|[A-Z][A-Za-z0-9_]*"  # uppercase identifier
    r"|[0-9]+\.[0-9]+|[0-9]+"  # float (before int: longest match), int
    r'|"(?:[^"\\]++|\\[\s\S])*+"'  # complete string literal
    r"|`[A-Za-z0-9_]+"  # variant tag
    r"|[^ \t\r\n])"  # anything else: an error
)
#: Token text -> (kind, value) for the tokens whose kind and value follow from their
#: text alone: keywords, booleans, ``_`` and the symbols other than brackets and minus
#: signs (which the lexer tracks). :func:`lex` adds each identifier, number and plain
#: string it meets to its own copy, so a repeated token costs one lookup.
_PLAIN: dict[str, tuple[str, Any]] = {
    **{word: (kind, word) for word, kind in KEYWORDS.items()},
    **{word: ("BOOL", value) for word, value in BOOLEANS.items()},
    "_": ("UNDERSCORE", "_"),
    **{word: (kind, word) for word, kind in SYMBOLS.items()
       if word not in ("-", "-.", "(", "[", "{", ")", "]", "}")},
}
_OPENING = frozenset("([{")
_CLOSING = frozenset(")]}")
_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz_")
_UPPER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_DIGITS = frozenset("0123456789")
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
    finditer = _TOKEN.finditer
    known = dict(_PLAIN)
    lookup = known.get
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
                word = m[1]
                end = m.end()
                entry = lookup(word)
                if entry is not None:
                    add_kind(entry[0])
                    add_value(entry[1])
                    add_start(end - len(word))
                    add_end(end)
                    continue
                start = end - len(word)
                first = word[0]
                if first in _OPENING:
                    if word[:2] == "(*":
                        if len(word) > 2:  # a whole comment
                            continue
                        pos = _skip_comment(source, start)
                        break
                    if depth == 0 and word != "{" and \
                            text.find("\n", ends[-1] if ends else 0, start) >= 0:
                        stream.continuing.add(len(kinds))
                    depth += 1
                    add_kind(SYMBOLS[word])
                    add_value(word)
                elif first in _CLOSING:
                    if depth:
                        depth -= 1
                    add_kind(SYMBOLS[word])
                    add_value(word)
                elif word == "-" or word == "-.":
                    if depth == 0 and text.find("\n", ends[-1] if ends else 0, start) >= 0:
                        stream.continuing.add(len(kinds))
                    add_kind(SYMBOLS[word])
                    add_value(word)
                else:
                    entry = _classify(source, word, start, end, warnings)
                    if entry[0] != "STRING" or "\\" not in word and "\r" not in word:
                        known[word] = entry  # the same text is the same token
                    add_kind(entry[0])
                    add_value(entry[1])
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


def _classify(source: SourceFile, word: str, start: int, end: int,
              warnings: list[Diagnostic]) -> tuple[str, Any]:
    """Kind and value of a name, number, string or tag token (or the error it is)."""
    first = word[0]
    if first in _LOWER:
        return "LIDENT", word
    if first in _UPPER:
        return "UIDENT", word
    if first in _DIGITS:
        if "." in word:
            return "FLOAT", float(word)
        value = int(word) if len(word) <= MAX_DIGITS else parse_int(word)
        if value is None or value > MAX_INT:
            raise _error(source, start, end, "chatml.int_out_of_range",
                         f"int_of_string: integer literal {abbreviate_digits(word)} "
                         "is out of range",
                         f"ChatML integers are 63-bit: the largest is {MAX_INT}")
        return "INT", value
    if len(word) > 1:
        if first == '"':
            return "STRING", _decode_string(source, start, end, warnings)
        if first == "`":
            return "TAG", word[1:]
    raise _unknown_character(source, start)


def tokenize(source: SourceFile) -> tuple[list[Token], list[Diagnostic]]:
    """All tokens of ``source`` as :class:`Token` objects (ply's token interface), and warnings.

    Raises :class:`DiagnosticError` at the first lexical error.
    """
    stream, warnings = lex(source)
    return stream.tokens(), warnings
