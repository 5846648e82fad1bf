"""Diagnostics in the reference implementation's text format (spec 4.17).

With a position::

    line 2, characters 6-11:
    2|    p.age
          ^^^^^

    Type error: Row does not contain label 'age'

Lines are 1-based; "characters" are 0-based columns, the end exclusive and
counted on the end's own line (the reference's ``span.right.column``). The
excerpt is the exact source text of the span (it may run over several lines),
after ``L|`` and four spaces; the caret line is six spaces and
``max(1, end - start)`` carets. Without a position (a diagnostic made with
:meth:`~chatcommon.diagnostics.Diagnostic.for_file`, which has no end) the whole
text is ``<Kind> error: <message>``. ``<Kind>`` comes from the phase:
``parse`` -> ``Parse``, ``type`` -> ``Type``, ``runtime`` -> ``Runtime``.

:class:`~chatcommon.diagnostics.Diagnostic` columns are 1-based; this module
converts. Conformance cases store ``error_location`` (:func:`reference_location`)
and ``error_text`` (:func:`format_reference`) in this format.
"""

from __future__ import annotations

from chatcommon.diagnostics import Diagnostic

_KINDS = {"parse": "Parse", "type": "Type", "typecheck": "Type", "runtime": "Runtime"}


def error_kind(diagnostic: Diagnostic) -> str:
    """``Parse``, ``Type`` or ``Runtime`` (the capitalised phase for any other phase)."""
    return _KINDS.get(diagnostic.phase, diagnostic.phase.capitalize() or "Parse")


def reference_location(diagnostic: Diagnostic) -> str | None:
    """``"line L, characters A-B"`` or None when the diagnostic has no span."""
    if diagnostic.end_line is None or diagnostic.end_column is None:
        return None
    return (f"line {diagnostic.line}, characters {diagnostic.column - 1}-"
            f"{diagnostic.end_column - 1}")


def _excerpt(diagnostic: Diagnostic) -> str:
    source = diagnostic.source
    if source is None or diagnostic.end_line is None or diagnostic.end_column is None:
        return ""
    start, end = diagnostic.column - 1, diagnostic.end_column - 1
    if diagnostic.end_line == diagnostic.line:
        return source.line_text(diagnostic.line)[start:end]
    lines = [source.line_text(diagnostic.line)[start:]]
    lines += [source.line_text(n) for n in range(diagnostic.line + 1, diagnostic.end_line)]
    lines.append(source.line_text(diagnostic.end_line)[:end])
    return "\n".join(lines)


def format_reference(diagnostic: Diagnostic) -> str:
    """The whole diagnostic as the reference prints it (no trailing newline)."""
    headline = f"{error_kind(diagnostic)} error: {diagnostic.message}"
    location = reference_location(diagnostic)
    end_column = diagnostic.end_column
    if location is None or end_column is None:
        return headline
    carets = "^" * max(1, end_column - diagnostic.column)
    return (f"{location}:\n{diagnostic.line}|    {_excerpt(diagnostic)}\n"
            f"      {carets}\n\n{headline}")
