"""Compile-phase diagnostics: positioned at the declaration they are about (spec §7).

A declaration is located by its source span when the compiler was given the
syntax tree, or else by its provenance (file, line and column of the
top-level element). Compile-phase paths start with ``runtime.ID``,
``tool.NAME``, ``script.ID``, ``moderator_runtime``, ``dependencies`` or
``features``. :func:`finalise` deduplicates and sorts them deterministically
(by code, path, then message, as the spec requires), so the same input always
reports the same list.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from chatcommon.diagnostics import Diagnostic, Related, Severity
from chatcommon.sources import Span
from chatmd.provenance import Provenance

PHASE = "shell.compile"

#: Where a diagnostic points: a source span, or a top-level element's provenance.
Where = Span | Provenance


def location(*candidates: Span | Provenance | None) -> Where:
    """The first known location among ``candidates``."""
    for candidate in candidates:
        if candidate is not None:
            return candidate
    raise AssertionError("a compile diagnostic needs a declaration with a location")


def where_of(declaration: Any) -> Where:
    """Where a declaration (with ``span`` and ``provenance``) was written."""
    return location(getattr(declaration, "span", None), getattr(declaration, "provenance", None))


def related_at(where: Where, message: str) -> Related:
    if isinstance(where, Span):
        return Related.at(where, message)
    return Related(message, where.file, where.line, where.column)


def compile_diagnostic(where: Where, code: str, message: str, path: tuple[str, ...], *,
                       hint: str | None = None, severity: Severity = Severity.ERROR,
                       related: Iterable[Related] = (), phase: str = PHASE) -> Diagnostic:
    if isinstance(where, Span):
        return Diagnostic.at(where, code, message, phase=phase, hint=hint, path=path,
                             severity=severity, related=related)
    return Diagnostic(code=code, message=message, file=where.file, line=where.line,
                      column=where.column, severity=severity, phase=phase, hint=hint,
                      related=tuple(related), path=path)


def finalise(diagnostics: Iterable[Diagnostic]) -> tuple[Diagnostic, ...]:
    """Deduplicated and sorted by code, path, message, then position."""
    unique: dict[tuple[object, ...], Diagnostic] = {}
    for diagnostic in diagnostics:
        key = (diagnostic.code, diagnostic.path, diagnostic.message, diagnostic.file,
               diagnostic.line, diagnostic.column, diagnostic.severity)
        unique.setdefault(key, diagnostic)
    return tuple(sorted(unique.values(), key=lambda d: (d.code, d.path, d.message, d.file,
                                                        d.line, d.column)))
