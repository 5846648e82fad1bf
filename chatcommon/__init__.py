"""Shared infrastructure for every phase of both languages: sources, diagnostics, atomic writes.

The base layer: it imports neither ``chatmd``, ``chatml`` nor ``runtime`` (the import
graph test in ``tests/test_project.py`` keeps it so). One module per concern:

* :mod:`~chatcommon.sources` -- source files, spans, line/column positions;
* :mod:`~chatcommon.diagnostics` / :mod:`~chatcommon.render` -- diagnostics and their
  text and JSON renderings;
* :mod:`~chatcommon.atomic` / :mod:`~chatcommon.output` -- atomic file writes, unwritable
  output reported as a diagnostic;
* :mod:`~chatcommon.records` -- ``frozen_record``: the attrs classes of the trees and the IR;
* :mod:`~chatcommon.allocation` -- pausing the cyclic collector (parsers, one-shot CLIs);
* :mod:`~chatcommon.argparsing` / :mod:`~chatcommon.quick_args` -- argparse defaults, and
  the argparse-free fast path of ``check`` command lines;
* :mod:`~chatcommon.numbers` -- number formatting shared by both languages.
"""

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
