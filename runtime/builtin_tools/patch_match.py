"""Applying the hunks of one ``*** Update File`` to a file's text (V4A matching rules).

Each hunk's old lines (context and removals) are looked for at or after the
end of the previous hunk, after its ``@@ header`` line when it names one;
a hunk marked ``*** End of File`` is looked for at the end first. Lines are
compared exactly, then ignoring trailing whitespace, then ignoring surrounding
whitespace, then with typographic punctuation folded to ASCII; the first pass
that finds the block wins. A hunk that matches nowhere fails the whole patch
with ``apply_patch.hunk_mismatch`` naming the file and the hunk's first
context line. The result keeps the file's line ending (LF or CRLF) and ends
with a line break.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from runtime.builtin_tools.failures import ToolFailure
from runtime.builtin_tools.patch_parse import Hunk

MISMATCH = "apply_patch.hunk_mismatch"
_PUNCTUATION = str.maketrans({"\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-",
                              "\u2014": "-", "\u2015": "-", "\u2212": "-", "\u2018": "'",
                              "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u201c": '"',
                              "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u00a0": " ",
                              "\u2002": " ", "\u2003": " ", "\u2009": " ", "\u202f": " "})
_PASSES: tuple[Callable[[str], str], ...] = (
    lambda line: line,
    str.rstrip,
    str.strip,
    lambda line: line.strip().translate(_PUNCTUATION),
)


def _seek(lines: Sequence[str], pattern: Sequence[str], start: int, at_end: bool) -> int | None:
    """The index where ``pattern`` occurs in ``lines`` at or after ``start``, or None."""
    if not pattern:
        return start
    last = len(lines) - len(pattern)
    if last < 0:
        return None
    starts = ([last] if at_end and last >= start else []) + list(range(start, last + 1))
    for normalise in _PASSES:
        wanted = [normalise(line) for line in pattern]
        for index in starts:
            if all(normalise(lines[index + k]) == wanted[k] for k in range(len(pattern))):
                return index
    return None


def _mismatch(path: str, number: int, hunk: Hunk, what: str) -> ToolFailure:
    return ToolFailure(MISMATCH, f"{path}: hunk {number} (first context line "
                       f"\"{hunk.first_context}\") {what}; no file was changed",
                       hint=f"read {path} again and resend the patch with context lines copied "
                       "exactly from the current file")


def _locate(lines: list[str], hunk: Hunk, start: int, path: str,
            number: int) -> tuple[int, int, list[str]]:
    """(index, old line count, new lines) of ``hunk`` in ``lines`` searching from ``start``."""
    if hunk.header is not None:
        found = _seek(lines, [hunk.header], start, False)
        if found is None:
            raise _mismatch(path, number, hunk, f"names the line \"{hunk.header}\" after @@, "
                            "which the file does not have")
        start = found + 1
    old, new = hunk.old, hunk.new
    if not old:  # pure addition: after the header, else at the end of the file
        return (start if hunk.header is not None else len(lines)), 0, new
    index = _seek(lines, old, start, hunk.end_of_file)
    if index is None and old[-1] == "":  # a trailing blank context line the file lacks
        old, new = old[:-1], new[:-1] if new and new[-1] == "" else new
        index = _seek(lines, old, start, hunk.end_of_file)
    if index is None:
        raise _mismatch(path, number, hunk, "does not match the file")
    return index, len(old), new


def apply_hunks(text: str, hunks: Sequence[Hunk], path: str) -> str:
    """``text`` with every hunk applied; :class:`ToolFailure` when one does not match."""
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.split(newline)
    if lines and lines[-1] == "":
        lines.pop()
    replacements: list[tuple[int, int, list[str]]] = []
    start = 0
    for number, hunk in enumerate(hunks, 1):
        index, count, new = _locate(lines, hunk, start, path, number)
        replacements.append((index, count, new))
        start = index + count
    for index, count, new in sorted(replacements, key=lambda r: r[0], reverse=True):
        lines[index:index + count] = new
    return newline.join(lines) + newline if lines else ""
