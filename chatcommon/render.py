"""Rendering diagnostics for people (compiler-style text) and for tools (JSON).

Text form, modelled on rustc::

    error[chatmd.mismatched_tag]: closing tag </assistant> does not match <user>
     --> prompt.md:1:8
      |
    1 | <user>x</assistant>
      |        ^^^^^^^^^^^^
      = hint: close <user> with </user>
      = note: <user> opened here: prompt.md:1:1

JSON form: one object per diagnostic with the keys ``file line column end_line
end_column severity code message phase`` (and ``hint`` when there is one).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from chatcommon.diagnostics import Diagnostic
from chatcommon.sources import SourceRegistry

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


def _caret_line(line_text: str, column: int, width: int) -> str:
    """Spaces (tabs kept, so the caret lines up) to ``column``, then ``width`` carets."""
    prefix = "".join("\t" if ch == "\t" else " " for ch in line_text[: column - 1])
    if len(prefix) < column - 1:
        prefix += " " * (column - 1 - len(prefix))
    return prefix + "^" * max(1, width)


def render_text(diagnostic: Diagnostic, registry: SourceRegistry | None = None) -> str:
    """One diagnostic as compiler-style text, with its source line when available."""
    header = f"{diagnostic.severity.value}[{diagnostic.code}]: {diagnostic.message}"
    location = f"{diagnostic.file}:{diagnostic.line}:{diagnostic.column}"
    source = diagnostic.source
    if source is None and registry is not None:
        source = registry.get(diagnostic.file)
    lines = [header]
    line_text = source.line_text(diagnostic.line) if source is not None else ""
    gutter = len(str(diagnostic.line))
    pad = " " * gutter
    lines.append(f"{pad}--> {location}")
    if source is not None and (line_text or diagnostic.column == 1):
        if diagnostic.end_line == diagnostic.line and diagnostic.end_column is not None:
            width = diagnostic.end_column - diagnostic.column
        elif diagnostic.end_line is not None and diagnostic.end_line > diagnostic.line:
            width = len(line_text) - diagnostic.column + 1
        else:
            width = 1
        lines.append(f"{pad} |")
        lines.append(f"{diagnostic.line} | {line_text}")
        lines.append(f"{pad} | {_caret_line(line_text, diagnostic.column, width)}")
    if diagnostic.hint:
        lines.append(f"{pad} = hint: {diagnostic.hint}")
    for related in diagnostic.related:
        lines.append(f"{pad} = note: {related.message}: "
                     f"{related.file}:{related.line}:{related.column}")
    return "\n".join(lines)


def render_all_text(diagnostics: Iterable[Diagnostic],
                    registry: SourceRegistry | None = None) -> str:
    """Every diagnostic as text, separated by blank lines, ending with a newline."""
    parts = [render_text(d, registry) for d in diagnostics]
    return "\n\n".join(parts) + ("\n" if parts else "")
