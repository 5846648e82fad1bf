"""Source files and spans: the text every phase reports positions into.

A :class:`SourceFile` owns one file's text and maps character offsets to
1-based line and column numbers (columns count Unicode code points; a CR before
an LF is an ordinary column character, so CRLF counts as one line break).
A :class:`Span` is a half-open range of offsets into one source file.
A :class:`SourceRegistry` keeps the files a run has read, by display name, so
that diagnostics can be rendered with their source lines.
"""

from __future__ import annotations

from bisect import bisect_right

import attrs


@attrs.define(eq=False, repr=False)
class SourceFile:
    """One file's text, with lazy line/column mapping.

    ``name`` is the display name used in diagnostics (a path as the user wrote
    it, or a pseudo-name such as ``<prompt>``). ``base_offset`` lets a file be a
    slice of a larger one (an inline script inside a prompt): offsets are local
    to ``text``, but reported lines and columns are those of the enclosing file.
    """

    name: str
    text: str
    line_offset: int = 0
    first_line_column_offset: int = 0
    _line_starts: list[int] | None = attrs.field(default=None, init=False)

    def __repr__(self) -> str:
        return f"SourceFile({self.name!r}, {len(self.text)} chars)"

    @property
    def line_starts(self) -> list[int]:
        starts = self._line_starts
        if starts is None:
            starts = [0]
            text = self.text
            find = text.find
            i = find("\n")
            while i >= 0:
                starts.append(i + 1)
                i = find("\n", i + 1)
            self._line_starts = starts
        return starts

    def local_position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of ``offset`` within this text alone."""
        offset = max(0, min(offset, len(self.text)))
        starts = self.line_starts
        index = bisect_right(starts, offset) - 1
        return index + 1, offset - starts[index] + 1

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of ``offset`` as reported to users."""
        line, column = self.local_position(offset)
        if line == 1:
            column += self.first_line_column_offset
        return line + self.line_offset, column

    def line_length(self, line: int) -> int:
        """The length of reported line ``line`` as :meth:`line_text` would give it (0 if none)."""
        local = line - self.line_offset
        starts = self.line_starts
        if local < 1 or local > len(starts):
            return 0
        start = starts[local - 1]
        end = starts[local] - 1 if local < len(starts) else len(self.text)
        if end > start and self.text[end - 1] == "\r":
            end -= 1
        return end - start + (self.first_line_column_offset if local == 1 else 0)

    def line_slice(self, line: int, start: int, end: int) -> str:
        """Columns ``start + 1`` to ``end`` of reported line ``line`` (a slice of
        :meth:`line_text` that copies only what it returns)."""
        local = line - self.line_offset
        starts = self.line_starts
        if local < 1 or local > len(starts) or end <= start:
            return ""
        end = min(end, self.line_length(line))
        pad = self.first_line_column_offset if local == 1 else 0
        base = starts[local - 1] - pad
        lead = " " * max(0, min(end, pad) - start)
        return lead + self.text[base + max(start, pad):base + max(end, pad)]

    def line_text(self, line: int) -> str:
        """The text of reported line ``line`` (without its line break), or ''."""
        local = line - self.line_offset
        starts = self.line_starts
        if local < 1 or local > len(starts):
            return ""
        start = starts[local - 1]
        end = starts[local] - 1 if local < len(starts) else len(self.text)
        text = self.text[start:end]
        if text.endswith("\r"):
            text = text[:-1]
        if local == 1 and self.first_line_column_offset:
            text = " " * self.first_line_column_offset + text
        return text

    def span(self, start: int, end: int | None = None) -> Span:
        return Span(self, start, start if end is None else end)


class Span:
    """A half-open range ``[start, end)`` of character offsets in ``source``.

    Immutable by convention; a plain slotted class because the lexers create
    one per token and attrs' frozen ``__init__`` costs five times as much.
    """

    __slots__ = ("source", "start", "end")

    def __init__(self, source: SourceFile, start: int, end: int) -> None:
        self.source = source
        self.start = start
        self.end = end

    def __repr__(self) -> str:
        line, column = self.source.position(self.start)
        return f"<{self.source.name}:{line}:{column}>"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Span):
            return NotImplemented
        return (self.source is other.source and self.start == other.start
                and self.end == other.end)

    def __hash__(self) -> int:
        # Equal spans have equal offsets; leaving the source out keeps this cheap (checkers
        # key dictionaries by spans) at the price of collisions only across files.
        return self.start * 1_000_003 + self.end

    @property
    def file(self) -> str:
        return self.source.name

    @property
    def start_position(self) -> tuple[int, int]:
        return self.source.position(self.start)

    @property
    def end_position(self) -> tuple[int, int]:
        return self.source.position(self.end)

    def to(self, other: Span) -> Span:
        """The span from the start of ``self`` to the end of ``other``."""
        return Span(self.source, self.start, max(self.end, other.end))

    @property
    def text(self) -> str:
        return self.source.text[self.start : self.end]


class SourceRegistry:
    """The source files read during one run, by display name."""

    def __init__(self) -> None:
        self._files: dict[str, SourceFile] = {}

    def add(self, name: str, text: str, **kwargs: int) -> SourceFile:
        source = SourceFile(name, text, **kwargs)
        self._files[name] = source
        return source

    def register(self, source: SourceFile) -> SourceFile:
        self._files[source.name] = source
        return source

    def get(self, name: str) -> SourceFile | None:
        return self._files.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._files

    def __iter__(self):
        return iter(self._files.values())
