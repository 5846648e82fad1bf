"""Toolchain diagnostics as LSP diagnostics, published on the file they are in.

:func:`to_lsp` converts one :class:`~chatcommon.diagnostics.Diagnostic` (1-based
code-point columns) into an LSP diagnostic in UTF-16 positions: code,
severity, ``source`` (``chatmdc``), the hint and every related location
("imported from", "opened here", "declared here") as related information.
:func:`chain_start` turns a problem found in another file (an import, a
``<script src>``) into the diagnostic the root document shows where the chain
that reaches it starts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from lsprotocol import types as lsp

from chatcommon.diagnostics import Diagnostic, Related, Severity
from runtime.lsp.positions import TextIndex

__all__ = ["chain_start", "path_uri", "to_lsp", "uri_path"]

SOURCE = "chatmdc"
_SEVERITY = {Severity.ERROR: lsp.DiagnosticSeverity.Error,
             Severity.WARNING: lsp.DiagnosticSeverity.Warning,
             Severity.NOTE: lsp.DiagnosticSeverity.Information}

#: Display name → absolute path (None when the name is not a file).
Resolver = Callable[[str], "str | None"]
#: Absolute path → its text index (None when unknown).
Indexer = Callable[[str], "TextIndex | None"]


def path_uri(path: str) -> str:
    from pygls.uris import from_fs_path

    return from_fs_path(path) or ("file://" + path)


def uri_path(uri: str) -> str | None:
    from pygls.uris import to_fs_path

    return to_fs_path(uri)


def _range(index: TextIndex | None, line: int, column: int, end_line: int | None,
           end_column: int | None) -> lsp.Range:
    if index is None:
        zero = lsp.Position(line=max(line - 1, 0), character=max(column - 1, 0))
        return lsp.Range(start=zero, end=zero)
    start = index.from_line_column(line, column)
    if end_line is None or end_column is None:
        return lsp.Range(start=start, end=_tag_end(index, start))
    return lsp.Range(start=start, end=index.from_line_column(end_line, end_column))


def _tag_end(index: TextIndex, start: lsp.Position) -> lsp.Position:
    """The end of the tag (or word) at ``start``, for locations that have no end."""
    offset = index.offset(start)
    text = index.text
    line_end = text.find("\n", offset)
    line_end = len(text) if line_end < 0 else line_end
    close = text.find(">", offset, line_end)
    return index.position(close + 1 if close >= 0 else line_end)


def _location(related: Related, resolve: Resolver, indexes: Indexer) -> lsp.Location | None:
    path = resolve(related.file)
    if path is None:
        return None
    return lsp.Location(uri=path_uri(path), range=_range(indexes(path), related.line,
                                                         related.column, None, None))


def to_lsp(diagnostic: Diagnostic, index: TextIndex | None, own_uri: str, resolve: Resolver,
           indexes: Indexer) -> lsp.Diagnostic:
    """``diagnostic`` in the file whose text ``index`` holds (``own_uri``)."""
    where = _range(index, diagnostic.line, diagnostic.column, diagnostic.end_line,
                   diagnostic.end_column)
    information: list[lsp.DiagnosticRelatedInformation] = []
    if diagnostic.hint:
        information.append(lsp.DiagnosticRelatedInformation(
            location=lsp.Location(uri=own_uri, range=where), message=f"hint: {diagnostic.hint}"))
    for related in diagnostic.related:
        location = _location(related, resolve, indexes)
        if location is not None:
            information.append(lsp.DiagnosticRelatedInformation(location=location,
                                                                 message=related.message))
    return lsp.Diagnostic(range=where, message=diagnostic.message,
                          severity=_SEVERITY.get(diagnostic.severity,
                                                 lsp.DiagnosticSeverity.Error),
                          code=diagnostic.code, source=SOURCE,
                          related_information=information or None)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def chain_start(start: Related, problems: Sequence[tuple[Diagnostic, lsp.Location]],
                index: TextIndex, files: Sequence[str]) -> lsp.Diagnostic:
    """The root document's diagnostic at ``start`` for problems found along its chain.

    ``files`` names the files the problems are in, as the message shows them.
    """
    errors = sum(1 for d, _ in problems if d.is_error)
    warnings = len(problems) - errors
    first = problems[0][0]
    counts = ", ".join(part for part in (_plural(errors, "error") if errors else "",
                                         _plural(warnings, "warning") if warnings else "")
                       if part)
    message = (f"{counts} in {', '.join(files)} (reached from here): "
               f"{first.code}: {first.message}")
    information = [lsp.DiagnosticRelatedInformation(location=location,
                                                    message=f"{d.code}: {d.message}")
                   for d, location in problems[:50]]
    severity = lsp.DiagnosticSeverity.Error if errors else lsp.DiagnosticSeverity.Warning
    return lsp.Diagnostic(range=_range(index, start.line, start.column, None, None),
                          message=message, severity=severity, code="chatmd.problems_in_chain",
                          source=SOURCE, related_information=information)
