"""Diagnostics positioned at IR nodes, for the phases that work on the IR (tools, requests).

The IR keeps where each top-level element (:class:`~chatmd.provenance.Provenance`)
and each content helper or read root (:class:`~chatmd.ir.Location`) was
written; :func:`diagnostic_at` turns the most precise of those into a
:class:`~chatcommon.diagnostics.Diagnostic` (file, line, column). An IR built by
hand has neither: the diagnostic then points at line 1 of the prompt.
"""

from __future__ import annotations

from collections.abc import Iterable

from chatcommon.diagnostics import Diagnostic, Related, Severity
from chatmd.ir import Location
from chatmd.provenance import Provenance


def related_at(provenance: Provenance | None, location: Location | None, message: str,
               fallback_file: str) -> Related:
    """A secondary location ("first declared here") at the same precision."""
    if location is not None:
        return Related(message, location.file, location.line, location.column)
    if provenance is not None:
        return Related(message, provenance.file, provenance.line, provenance.column)
    return Related(message, fallback_file, 1, 1)


def diagnostic_at(code: str, message: str, *, provenance: Provenance | None,
                  location: Location | None = None, fallback_file: str, phase: str,
                  severity: Severity = Severity.ERROR, hint: str | None = None,
                  related: Iterable[Related] = (), path: Iterable[str] = ()) -> Diagnostic:
    """A diagnostic at ``location`` if known, else at ``provenance``, else at the file start."""
    if location is not None:
        file, line, column = location.file, location.line, location.column
    elif provenance is not None:
        file, line, column = provenance.file, provenance.line, provenance.column
    else:
        file, line, column = fallback_file, 1, 1
    return Diagnostic(code=code, message=message, file=file, line=line, column=column,
                      severity=severity, phase=phase, hint=hint, related=tuple(related),
                      path=tuple(path))
