"""The parser's warnings (DECISIONS 6b): where the reference grammar surprises.

The grammar is reproduced exactly; these warnings only point out the places
where it reads differently from what an OCaml programmer (or the layout)
suggests, with a hint showing the parenthesised reading. Codes:

* ``chatml.else_swallows_sequence`` -- ``if c then a else b; d`` is
  ``if c then a else (b; d)``;
* ``chatml.fun_swallows_sequence`` -- ``fun x -> a; b`` is ``fun x -> (a; b)``;
* ``chatml.match_arm_swallows_sequence`` -- the last arm of a ``match`` takes
  a following ``; d`` (the ``;`` of an earlier arm can only belong to that arm);
* ``chatml.ref_precedence`` -- ``ref`` takes a whole binary expression:
  ``ref 0 + 1`` is ``ref (0 + 1)``;
* ``chatml.assign_precedence`` -- ``:=`` grabs the nearest operand:
  ``a + b := c`` is ``a + (b := c)``, ``!r := v`` is ``!(r := v)``;
* ``chatml.statement_continues`` -- a line starting with ``(``, ``[``, ``-``
  or ``-.`` (outside brackets, not indented past the statement's start)
  continues the previous statement.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from typing import Any

from chatcommon.diagnostics import Diagnostic, Severity
from chatcommon.sources import Span
from chatml.ast import ArraySet, Prim2, Sequence, SetRef
from chatml.syntax.lexer import TokenStream
from chatml.syntax.tokens import SYMBOLS

PHASE = "parse"
_SPACES = re.compile(r"\s+")


def clip(text: str, limit: int = 60) -> str:
    """``text`` on one line, shortened in the middle to about ``limit`` characters."""
    text = _SPACES.sub(" ", text).strip()
    if len(text) <= limit:
        return text
    half = (limit - 5) // 2
    return f"{text[:half].rstrip()} ... {text[-half:].lstrip()}"


_SWALLOWERS = {
    "else": ("chatml.else_swallows_sequence", "the `else` branch", "the `if`"),
    "fun": ("chatml.fun_swallows_sequence", "the `fun` body", "the function"),
    "match": ("chatml.match_arm_swallows_sequence", "the last match arm", "the `match`"),
}

_CONTINUATION_KINDS = {
    "LPAREN": "a function call",
    "LBRACKET": "an index",
    "MINUS": "a subtraction",
    "MINUSDOT": "a float subtraction",
}


class Warner:
    """Builds the 6b warnings of one parse and appends them to ``warnings``."""

    def __init__(self, stream: TokenStream, warnings: list[Diagnostic]) -> None:
        self.stream = stream
        self.src = stream.source
        self.text = stream.source.text
        self.warnings = warnings
        #: id(Sequence node) -> offset of its `;`.
        self.semicolons: dict[int, int] = {}
        #: id(SetRef node) -> offset of its `:=`.
        self.assignments: dict[int, int] = {}

    def _add(self, start: int, end: int, code: str, message: str, hint: str) -> None:
        self.warnings.append(Diagnostic.at(Span(self.src, start, end), code, message,
                                           phase=PHASE, severity=Severity.WARNING, hint=hint))

    def _text(self, start: int, end: int, limit: int = 60) -> str:
        """The tokens between offsets ``start`` and ``end``, comments dropped, clipped.

        Only the tokens the clipped text shows are read (a bounded number from each
        end), so a warning costs the same however long the code it quotes: nested
        ``else`` branches swallowing a 2,000-item sequence were quadratic.
        """
        starts = self.stream.starts
        first, last = bisect_left(starts, start), bisect_left(starts, end)
        window = 2 * limit + 2
        head, complete = self._join(range(first, last), end, window)
        if complete:  # all of it was read: clip as ever
            return clip(head, limit)
        tail, _ = self._join(range(last - 1, first - 1, -1), end, window, backwards=True)
        half = (limit - 5) // 2
        shown_head = _SPACES.sub(" ", head).strip()[:half].rstrip()
        shown_tail = _SPACES.sub(" ", tail).strip()[-half:].lstrip()
        return f"{shown_head} ... {shown_tail}"

    def _join(self, indexes: range, end: int, window: int, *,
              backwards: bool = False) -> tuple[str, bool]:
        """Tokens ``indexes`` (in text order when joined) up to about ``window`` characters,
        and whether that is all of them."""
        starts, ends, text = self.stream.starts, self.stream.ends, self.text
        parts: list[str] = []
        size = 0
        neighbour = -1
        for k in indexes:
            token_start, token_end = starts[k], min(ends[k], end)
            if token_end - token_start > window:  # a long token: only the end that shows
                if backwards:
                    token_start = token_end - window
                else:
                    token_end = token_start + window
            gap = parts and (starts[k] > neighbour if not backwards else ends[k] < neighbour)
            if gap:
                parts.append(" ")
            parts.append(text[token_start:token_end])
            neighbour = ends[k] if not backwards else starts[k]
            size += token_end - token_start + 1
            if size > window and k != indexes[-1]:
                return "".join(reversed(parts) if backwards else parts), False
        return "".join(reversed(parts) if backwards else parts), True

    def swallowed(self, start: int, seq: Sequence, end: int, kind: str) -> None:
        """``kind`` ("else", "fun", "match") at ``start`` ends with the bare sequence ``seq``."""
        code, what, construct = _SWALLOWERS[kind]
        semi = self.semicolons.get(id(seq), seq.first.span.end)
        head = self._text(start, seq.span.start)
        first = self._text(seq.span.start, semi)
        rest = self._text(semi + 1, end)
        self._add(semi, semi + 1, code,
                  f"{what} swallows the following `; ...`",
                  f"this parses as `{head} ({first}; {rest})`; write `({head} {first}); {rest}` "
                  f"if the `;` should end {construct}, or parenthesise the sequence to "
                  "silence this warning")

    def ref_operand(self, index: int, operand: Any, end: int) -> None:
        """``ref`` (token ``index``) took the whole binary/assignment expression ``operand``."""
        tok = self.stream.token(index)
        op_at = self._leftmost_operator(operand)
        whole = self._text(tok.end, end)
        left = self._text(tok.end, op_at)
        rest = self._text(op_at, end)
        self._add(tok.lexpos, tok.end, "chatml.ref_precedence",
                  "`ref` applies to the whole expression after it, not only to its first "
                  "operand as in OCaml",
                  f"this parses as `ref ({whole})`; write `(ref {left}) {rest}` if `ref` "
                  f"should only take `{left}`")

    def assign_right(self, start: int, index: int, assign: SetRef, end: int) -> None:
        """Binary operator token ``index`` has the bare assignment ``assign`` as right operand."""
        tok = self.stream.token(index)
        at = self.assignments.get(id(assign), assign.ref.span.end)
        left = self._text(start, tok.lexpos)
        target = self._text(tok.end, at)
        value = self._text(at + 2, end)
        op = tok.value
        self._add(at, at + 2, "chatml.assign_precedence",
                  f"`:=` binds tighter than `{op}` here, unlike OCaml",
                  f"this parses as `{left} {op} ({target} := {value})`; write "
                  f"`({left} {op} {target}) := {value}` if the whole left side is the reference")

    def assign_operand(self, start: int, op_end: int, assign: SetRef, end: int,
                       op: str) -> None:
        """Prefix ``op`` (``!``, ``-``, ``-.``) has the bare assignment ``assign`` as operand."""
        at = self.assignments.get(id(assign), assign.ref.span.end)
        target = self._text(op_end, at)
        value = self._text(at + 2, end)
        self._add(at, at + 2, "chatml.assign_precedence",
                  f"`:=` binds tighter than prefix `{op}` here, unlike OCaml",
                  f"this parses as `{op}({target} := {value})`; write "
                  f"`({op}{target}) := {value}` if `{op}{target}` is the reference")

    def continuations(self, stmt_start: int, found: list[tuple[int, int, int]]) -> None:
        """Report the continuation tokens (indices) of the statement starting at ``stmt_start``."""
        stmt_column = self.src.local_position(stmt_start)[1]
        for index, start, end in found:
            tok = self.stream.token(index)
            if tok.lexpos <= stmt_start or self.src.local_position(tok.lexpos)[1] > stmt_column:
                continue
            kind = _CONTINUATION_KINDS[tok.type]
            line = self.src.position(start)[0]
            self._add(tok.lexpos, tok.end, "chatml.statement_continues",
                      f"this line continues the expression on line {line} as {kind}: "
                      f"statements have no separator",
                      f"this parses as `{self._text(start, end)}`; a statement cannot start "
                      "with `(`, `[` or `-` (write `f(x)` rather than `(f(x))`, `0 - 1` rather "
                      "than `-1`); indent the line if it is meant to continue")

    def _leftmost_operator(self, node: Any) -> int:
        """Offset of the operator right after the leftmost operand of ``node``.

        Descends through bare left operands only (a parenthesised one starts
        after its parent does), then finds the operator token after that operand.
        """
        while True:
            if type(node) is ArraySet:
                child, symbol = node.index, "<-"
                break
            if type(node) is SetRef:
                child, symbol = node.ref, ":="
            else:
                child, symbol = node.left, node.op.symbol
            if type(child) not in (Prim2, SetRef, ArraySet) or child.span.start != node.span.start:
                break
            node = child
        starts = self.stream.starts
        kinds = self.stream.kinds
        kind = SYMBOLS[symbol]
        for k in range(bisect_left(starts, child.span.end), len(starts)):
            if kinds[k] == kind:
                return starts[k]
        return child.span.end
