"""Syntax-error diagnostics: what was unexpected, what the grammar expected there, and why.

The expected tokens come from the LR automaton itself: the parser is replayed
(without semantic actions) up to the offending token, and every terminal is
tried from that configuration, following reductions, to see which ones the
parser would shift. This is exact, unlike the action row of the state where an
LALR parser happens to detect the error after default reductions. Groups of
tokens are summarised ("an expression", "an operator", "a statement"), and a
few well-known mistakes get a hint.
"""

from __future__ import annotations

from collections.abc import Sequence

from chatcommon.diagnostics import Diagnostic, DiagnosticError
from chatcommon.sources import Span
from chatml.syntax.lexer import TokenStream
from chatml.syntax.parse_tables import ACCEPT, Tables
from chatml.syntax.tokens import (
    BINARY_OPS,
    EOF,
    EXPRESSION_START,
    PATTERN_START,
    TERMINALS,
    TYPE_START,
    Token,
    describe_kind,
)

PHASE = "parse"
STATEMENT_START = EXPRESSION_START | {"TYPE", "MODULE", "OPEN"}
_OPERATOR_GROUP = frozenset(BINARY_OPS) | {"COLONEQ", "LPAREN", "LBRACKET", "DOT"}
_GROUPS = (
    ("a statement", STATEMENT_START),
    ("an expression", EXPRESSION_START),
    ("a pattern", PATTERN_START),
    ("a type", TYPE_START),
)
_ORDER = {kind: i for i, kind in enumerate((*TERMINALS, EOF))}
_OPENERS = {"LPAREN": "RPAREN", "LBRACKET": "RBRACKET", "LBRACE": "RBRACE",
            "STRUCT": "END", "WHILE": "DONE"}


def _replay(kinds: Sequence[str], index: int, tables: Tables) -> list[int]:
    """The state stack just before the parser looks at token ``index``."""
    ids = tables.terminal_ids
    states = [0]
    i = 0
    while i < index:
        t = tables.action[states[-1]][ids[kinds[i]]]
        if t == 0 or t == ACCEPT:
            break
        if t > 0:
            states.append(t)
            i += 1
        else:
            _reduce(states, -t, tables)
    return states


def _reduce(states: list[int], production: int, tables: Tables) -> None:
    n = tables.length[production]
    if n:
        del states[-n:]
    states.append(tables.goto[production][states[-1]])


def _shiftable(states: list[int], terminal: int, tables: Tables) -> bool:
    states = list(states)
    while True:
        t = tables.action[states[-1]][terminal]
        if t == 0:
            return False
        if t > 0:
            return True
        _reduce(states, -t, tables)


def expected_kinds(kinds: Sequence[str], index: int, tables: Tables) -> set[str]:
    """The token kinds the grammar accepts in place of token ``index`` of ``kinds``."""
    states = _replay(kinds, index, tables)
    return {kind for i, kind in enumerate(tables.terminals) if _shiftable(states, i, tables)}


def describe_expected(expected: set[str]) -> str:
    """``expected`` in words: "`)`, `,` or an operator"."""
    remaining = set(expected)
    groups: list[str] = []
    if set(BINARY_OPS) <= expected:
        groups.append("an operator")
        remaining -= _OPERATOR_GROUP
    covered: set[str] = set()
    for name, members in _GROUPS:
        if members <= expected and not members <= covered:
            groups.append(name)
            covered |= members
            remaining -= members
    if expected >= EXPRESSION_START:
        remaining -= {"BANGEQ", "DOT"}  # the two error productions
    words = [describe_kind(kind) for kind in sorted(remaining, key=lambda k: _ORDER.get(k, 999))]
    words += groups
    if len(words) > 8:
        words = words[:7] + [f"{len(words) - 7} other tokens"]
    if not words:
        return "nothing"
    if len(words) == 1:
        return words[0]
    return ", ".join(words[:-1]) + " or " + words[-1]


def _unclosed(stream: TokenStream, index: int) -> Token | None:
    """The innermost bracket (or ``struct``/``while``) opened before ``index`` and never closed."""
    stack: list[int] = []
    kinds = stream.kinds
    for i in range(index):
        if kinds[i] in _OPENERS:
            stack.append(i)
        elif stack and kinds[i] == _OPENERS[kinds[stack[-1]]]:
            stack.pop()
    return stream.token(stack[-1]) if stack else None


def _hint(stream: TokenStream, index: int, expected: set[str]) -> str | None:
    tok = stream.token(index)
    prev = stream.token(index - 1) if index else None
    prev2 = stream.token(index - 2) if index > 1 else None
    kind = tok.type
    if kind == "SEMI" and prev is not None and prev.type == "SEMI":
        return "statements need no separator: remove `;;`"
    if kind == "SEMI" and "OPEN" in expected:
        return ("a top-level expression statement cannot be a `;` sequence: wrap it in "
                "parentheses, `(a; b)`, or write the expressions as separate statements")
    if kind == "LEFTARROW" and prev is not None and prev2 is not None and prev2.type == "DOT":
        return "records are immutable: build a new one with `{ r with label = value }`"
    if kind == "RPAREN" and prev is not None and prev.type == "STAR" and prev.end == tok.lexpos:
        return ("this `*)` closes no comment; comments nest, so check that every `(*` above "
                "has its own `*)`")
    if kind == "UIDENT" and prev is not None and prev.type == "DOT":
        return ("only lowercase names can follow `.`; a nested module path such as `A.B.x` "
                "is not supported: write `open A` and then `B.x`")
    if kind == "AND":
        return "only `let rec` bindings can be joined with `and`; write separate `let`s"
    if kind == "TYPE":
        return "`type` declarations are only allowed at top level, not inside `struct ... end`"
    if kind == "UNDERSCORE" and "LIDENT" in expected:
        return "`_` cannot be a parameter or a `let` name here; use a name such as `_unused`"
    if expected == {"BAR"} and prev is not None and prev.type == "WITH":
        return "every match arm starts with `|`, the first one included"
    following = stream.token(index + 1) if index + 1 < len(stream) else None
    if kind == "BAR" and following is not None and following.type == "BAR" \
            and following.lexpos == tok.end:
        return "ChatML has no `||`; write `if a then true else b`"
    if kind == "EQ" and prev is not None and prev.type == "LIDENT" and prev2 is not None \
            and prev2.type == "SEMI":
        return ("if this is the next field of a record, the previous field's value (a `fun`, "
                "`if`, `match` or `let` form) swallowed the `;`: parenthesise that value")
    if kind == EOF:
        opener = _unclosed(stream, index)
        if opener is not None:
            line, column = opener.source.position(opener.lexpos)
            closer = describe_kind(_OPENERS[opener.type])
            return f"`{opener.text}` opened at line {line}, column {column} is never closed " \
                   f"with {closer}"
    if "ELSE" in expected:
        return "`if` needs an `else` branch in ChatML"
    return None


def syntax_error(stream: TokenStream, index: int, tables: Tables) -> DiagnosticError:
    """The diagnostic for the unexpected token ``index`` of ``stream``."""
    tok = stream.token(index)
    expected = expected_kinds(stream.kinds, index, tables)
    message = f"Syntax error: unexpected {tok.describe()}"
    if expected:
        message += f"; expected {describe_expected(expected)}"
    return DiagnosticError(Diagnostic.at(Span(tok.source, tok.lexpos, tok.end),
                                         "chatml.syntax_error", message, phase=PHASE,
                                         hint=_hint(stream, index, expected)))
