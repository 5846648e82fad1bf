"""Shared infrastructure for every phase of both languages: sources, diagnostics, atomic writes."""

from common.diagnostics import Diagnostic, DiagnosticError, DiagnosticSink, Related, Severity
from common.sources import SourceFile, SourceRegistry, Span

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
