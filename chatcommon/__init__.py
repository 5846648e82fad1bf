"""Shared infrastructure for every phase of both languages: sources, diagnostics, atomic writes."""

from chatcommon.diagnostics import Diagnostic, DiagnosticError, DiagnosticSink, Related, Severity
from chatcommon.sources import SourceFile, SourceRegistry, Span

__all__ = [
    "Diagnostic",
    "DiagnosticError",
    "DiagnosticSink",
    "Related",
    "Severity",
    "SourceFile",
    "SourceRegistry",
    "Span",
]
