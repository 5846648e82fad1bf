"""Diagnostics: the one error/warning record every phase of both languages reports.

A :class:`Diagnostic` names a file, a 1-based start (and optional end) line and
column, a severity, a stable machine-readable ``code``, a human ``message``, an
optional ``hint``, the ``phase`` that produced it, and optional related
locations (an opening tag, the chain of imports that led to a file).

Phases that stop at their first error raise :class:`DiagnosticError`; phases
that recover collect into a :class:`DiagnosticSink`. Rendering lives in
:mod:`chatcommon.render`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from enum import StrEnum

import attrs

from chatcommon.sources import SourceFile, Span


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


@attrs.frozen
class Related:
    """A secondary location attached to a diagnostic ("opened here", "imported from")."""

    message: str
    file: str
    line: int
    column: int

    @classmethod
    def at(cls, span: Span, message: str) -> Related:
        line, column = span.start_position
        return cls(message, span.file, line, column)


@attrs.frozen
class Diagnostic:
    """One reported problem, positioned in a source file."""

    code: str
    message: str
    file: str
    line: int
    column: int
    end_line: int | None = None
    end_column: int | None = None
    severity: Severity = Severity.ERROR
    phase: str = ""
    hint: str | None = None
    related: tuple[Related, ...] = ()
    path: tuple[str, ...] = ()
    source: SourceFile | None = attrs.field(default=None, eq=False, repr=False)

    @classmethod
    def at(
        cls,
        span: Span,
        code: str,
        message: str,
        *,
        phase: str,
        severity: Severity = Severity.ERROR,
        hint: str | None = None,
        related: Iterable[Related] = (),
        path: Iterable[str] = (),
    ) -> Diagnostic:
        """A diagnostic covering ``span``."""
        line, column = span.start_position
        end_line, end_column = span.end_position
        return cls(
            code=code,
            message=message,
            file=span.file,
            line=line,
            column=column,
            end_line=end_line,
            end_column=end_column,
            severity=severity,
            phase=phase,
            hint=hint,
            related=tuple(related),
            path=tuple(path),
            source=span.source,
        )

    @classmethod
    def for_file(
        cls,
        file: str,
        code: str,
        message: str,
        *,
        phase: str,
        severity: Severity = Severity.ERROR,
        hint: str | None = None,
    ) -> Diagnostic:
        """A diagnostic about a whole file (unreadable input): line 1, column 1."""
        return cls(code=code, message=message, file=file, line=1, column=1,
                   severity=severity, phase=phase, hint=hint)

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def with_related(self, *extra: Related) -> Diagnostic:
        return attrs.evolve(self, related=self.related + tuple(extra))

    def __str__(self) -> str:
        where = ".".join(self.path)
        at = f" at {where}" if where else ""
        return (f"{self.file}:{self.line}:{self.column}: "
                f"{self.severity.value}[{self.code}]{at}: {self.message}")


class DiagnosticError(Exception):
    """Raised by a phase that cannot go on; carries one or more diagnostics."""

    def __init__(self, diagnostics: Diagnostic | Iterable[Diagnostic]) -> None:
        if isinstance(diagnostics, Diagnostic):
            diagnostics = [diagnostics]
        self.diagnostics: list[Diagnostic] = list(diagnostics)
        super().__init__("\n".join(str(d) for d in self.diagnostics))

    @property
    def first(self) -> Diagnostic:
        return self.diagnostics[0]

    @property
    def code(self) -> str:
        return self.first.code


class DiagnosticSink:
    """Collects diagnostics from a phase that recovers and goes on."""

    def __init__(self) -> None:
        self.items: list[Diagnostic] = []

    def add(self, diagnostic: Diagnostic) -> None:
        self.items.append(diagnostic)

    def extend(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.items.extend(diagnostics)

    @property
    def has_errors(self) -> bool:
        return any(d.is_error for d in self.items)

    def __iter__(self) -> Iterator[Diagnostic]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def raise_if_errors(self) -> None:
        if self.has_errors:
            raise DiagnosticError(self.items)
