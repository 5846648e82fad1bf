"""Rendering diagnostics for people (compiler-style text) and for tools (JSON).

Text form, modelled on rustc::

    error[chatmd.mismatched_tag]: closing tag </assistant> does not match <user>
     --> prompt.md:1:8
      |
    1 | <user>x</assistant>
      |        ^^^^^^^^^^^^
      = hint: close <user> with </user>
      = note: <user> opened here: prompt.md:1:1

Text output is bounded: a source line longer than :data:`MAX_EXCERPT`
characters is shown as a window around the column with ``...`` where it was
cut, and after :data:`MAX_PER_FILE` diagnostics in one file one line says how
many more there are. JSON output keeps every diagnostic, in one document.

JSON form: one object per diagnostic with the keys ``file line column end_line
end_column severity code message phase`` (and ``hint`` when there is one).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from chatcommon.diagnostics import Diagnostic
from chatcommon.sources import SourceFile, SourceRegistry

JSON_KEYS = ("file", "line", "column", "end_line", "end_column", "severity", "code",
             "message", "phase")


def diagnostic_to_json(diagnostic: Diagnostic) -> dict[str, Any]:
    """The JSON object for one diagnostic."""
    record: dict[str, Any] = {
        "file": diagnostic.file,
        "line": diagnostic.line,
        "column": diagnostic.column,
        "end_line": diagnostic.end_line,
        "end_column": diagnostic.end_column,
        "severity": diagnostic.severity.value,
        "code": diagnostic.code,
        "message": diagnostic.message,
        "phase": diagnostic.phase,
    }
    if diagnostic.hint is not None:
        record["hint"] = diagnostic.hint
    if diagnostic.related:
        record["related"] = [
            {"message": r.message, "file": r.file, "line": r.line, "column": r.column}
            for r in diagnostic.related
        ]
    return record


def render_json(diagnostics: Iterable[Diagnostic], **extra: Any) -> str:
    """``{"diagnostics": [...]}`` (plus any ``extra`` top-level keys) as JSON text."""
    import json  # only JSON output needs it: kept off the start-up path of text output

    document: dict[str, Any] = dict(extra)
    document["diagnostics"] = [diagnostic_to_json(d) for d in diagnostics]
    return json.dumps(document, indent=2, ensure_ascii=False)


#: A source line longer than this is shown as a window around the diagnostic's column.
MAX_EXCERPT = 120
#: Characters of the line shown before the column when the excerpt is a window.
EXCERPT_BEFORE = 40
#: Where the line was cut in an excerpt.
CUT = "..."
#: Text diagnostics rendered per file; the rest are counted in one line.
MAX_PER_FILE = 100


def _caret_line(line_text: str, column: int, width: int) -> str:
    """Spaces (tabs kept, so the caret lines up) to ``column``, then ``width`` carets."""
    prefix = "".join("\t" if ch == "\t" else " " for ch in line_text[: column - 1])
    if len(prefix) < column - 1:
        prefix += " " * (column - 1 - len(prefix))
    return prefix + "^" * max(1, width)


def excerpt(source: SourceFile, line: int, column: int, width: int) -> tuple[str, int, int]:
    """The text shown for ``line`` and the column and width of the caret in it.

    A line up to :data:`MAX_EXCERPT` characters is shown whole; a longer one as
    a window of that many characters starting :data:`EXCERPT_BEFORE` before
    ``column``, with :data:`CUT` where it was cut (the caret clipped to the
    window), so one diagnostic prints a bounded amount of text however long the line.
    """
    length = source.line_length(line)
    if length <= MAX_EXCERPT:
        return source.line_slice(line, 0, length), column, width
    start = max(0, min(column - 1 - EXCERPT_BEFORE, length - MAX_EXCERPT))
    end = min(length, start + MAX_EXCERPT)
    text = source.line_slice(line, start, end)
    lead = CUT if start > 0 else ""
    tail = CUT if end < length else ""
    caret = column - start + len(lead)
    width = max(1, min(width, end - (column - 1)))
    return lead + text + tail, caret, width


def render_text(diagnostic: Diagnostic, registry: SourceRegistry | None = None) -> str:
    """One diagnostic as compiler-style text, with (a window of) its source line when available."""
    header = f"{diagnostic.severity.value}[{diagnostic.code}]: {diagnostic.message}"
    location = f"{diagnostic.file}:{diagnostic.line}:{diagnostic.column}"
    source = diagnostic.source
    if source is None and registry is not None:
        source = registry.get(diagnostic.file)
    lines = [header]
    line_length = source.line_length(diagnostic.line) if source is not None else 0
    gutter = len(str(diagnostic.line))
    pad = " " * gutter
    lines.append(f"{pad}--> {location}")
    if source is not None and (line_length or diagnostic.column == 1):
        if diagnostic.end_line == diagnostic.line and diagnostic.end_column is not None:
            width = diagnostic.end_column - diagnostic.column
        elif diagnostic.end_line is not None and diagnostic.end_line > diagnostic.line:
            width = line_length - diagnostic.column + 1
        else:
            width = 1
        shown, column, width = excerpt(source, diagnostic.line, diagnostic.column, width)
        lines.append(f"{pad} |")
        lines.append(f"{diagnostic.line} | {shown}")
        lines.append(f"{pad} | {_caret_line(shown, column, width)}")
    if diagnostic.hint:
        lines.append(f"{pad} = hint: {diagnostic.hint}")
    for related in diagnostic.related:
        lines.append(f"{pad} = note: {related.message}: "
                     f"{related.file}:{related.line}:{related.column}")
    return "\n".join(lines)


def _more_line(file: str, count: int) -> str:
    noun = "diagnostic" if count == 1 else "diagnostics"
    return (f"note: {count} more {noun} in {file} not shown "
            f"(only the first {MAX_PER_FILE} per file; --format json lists them all)")


def render_all_text(diagnostics: Iterable[Diagnostic],
                    registry: SourceRegistry | None = None) -> str:
    """Every diagnostic as text, separated by blank lines, ending with a newline.

    At most :data:`MAX_PER_FILE` are rendered per file; after them, one line per
    such file says how many more there are (JSON output keeps them all).
    """
    parts = []
    shown: dict[str, int] = {}
    hidden: dict[str, int] = {}
    for diagnostic in diagnostics:
        count = shown.get(diagnostic.file, 0)
        if count >= MAX_PER_FILE:
            hidden[diagnostic.file] = hidden.get(diagnostic.file, 0) + 1
            continue
        shown[diagnostic.file] = count + 1
        parts.append(render_text(diagnostic, registry))
    parts.extend(_more_line(file, count) for file, count in hidden.items())
    return "\n\n".join(parts) + ("\n" if parts else "")
