"""Positions: LSP (0-based line, UTF-16 character) against offsets and 1-based columns.

The toolchain counts columns in code points from 1 (:mod:`chatcommon.sources`);
LSP counts code units of the negotiated position encoding from 0 (UTF-16
unless client and server agree on ``utf-8`` or ``utf-32``). :class:`TextIndex`
converts between the two for one text, and clamps out-of-range positions
instead of failing.
"""

from __future__ import annotations

from bisect import bisect_right

from lsprotocol import types as lsp

__all__ = ["TextIndex"]


def _units(ch: str, encoding: str) -> int:
    """How many code units ``ch`` takes in the position encoding."""
    code = ord(ch)
    if encoding == "utf-8":
        return 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4
    if encoding == "utf-32":
        return 1
    return 2 if code > 0xFFFF else 1


def _length(text: str, encoding: str) -> int:
    if text.isascii():
        return len(text)
    return sum(_units(ch, encoding) for ch in text)


class TextIndex:
    """Line starts of one text, for position conversions."""

    __slots__ = ("text", "starts", "encoding")

    def __init__(self, text: str, encoding: str = "utf-16") -> None:
        self.text = text
        self.encoding = encoding
        starts = [0]
        find = text.find
        i = find("\n")
        while i >= 0:
            starts.append(i + 1)
            i = find("\n", i + 1)
        self.starts = starts

    def _line_bounds(self, line: int) -> tuple[int, int]:
        line = max(0, min(line, len(self.starts) - 1))
        start = self.starts[line]
        end = self.starts[line + 1] - 1 if line + 1 < len(self.starts) else len(self.text)
        return start, end

    def offset(self, position: lsp.Position) -> int:
        """The offset of an LSP position (clamped to its line)."""
        if position.line >= len(self.starts):
            return len(self.text)
        start, end = self._line_bounds(position.line)
        units = 0
        offset = start
        while offset < end and units < position.character:
            units += _units(self.text[offset], self.encoding)
            offset += 1
        return offset

    def position(self, offset: int) -> lsp.Position:
        """The LSP position of an offset."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect_right(self.starts, offset) - 1
        start = self.starts[line]
        return lsp.Position(line=line, character=_length(self.text[start:offset], self.encoding))

    def from_line_column(self, line: int, column: int) -> lsp.Position:
        """The LSP position of a 1-based line and code-point column."""
        if line < 1:
            return lsp.Position(line=0, character=0)
        if line > len(self.starts):
            return self.position(len(self.text))
        start, end = self._line_bounds(line - 1)
        offset = min(start + max(column - 1, 0), end)
        return lsp.Position(line=line - 1, character=_length(self.text[start:offset], self.encoding))

    def to_line_column(self, position: lsp.Position) -> tuple[int, int]:
        """The 1-based line and code-point column of an LSP position."""
        offset = self.offset(position)
        line = bisect_right(self.starts, offset) - 1
        return line + 1, offset - self.starts[line] + 1

    def range(self, start: int, end: int) -> lsp.Range:
        return lsp.Range(start=self.position(start), end=self.position(end))
