"""``chatmdc lsp``: the pygls language server for ``.chatmd`` and ``.chatml`` over stdio.

On open, change and save the buffer's unsaved text is analysed when it is
ChatMD or ChatML (a ``.chatmd``/``.chatml`` path, or the language id
``chatmd``/``chatml``; other documents are left alone)
(:func:`runtime.lsp.analysis.analyse`, the ``chatmdc check`` / ``chatml
check`` pipeline) and the diagnostics are published on every file they are
in. Several open documents may report on the same file (a prompt and its
import): each file's published set is the union of what every open document
found there, without duplicates, and a file no document reports on any more
is cleared. A burst of changes is analysed once, at its last version.
Hover, definition, completion and document symbols answer from the analysis
of the current text (:mod:`runtime.lsp.hover`, :mod:`~runtime.lsp.definition`,
:mod:`~runtime.lsp.completion`, :mod:`~runtime.lsp.symbols`).

``initializationOptions`` may set ``{"chatmlSurface": NAME}``: the surface a
``.chatml`` file is checked against when no open prompt declares it as a
``<script src>`` (default ``core``; a prompt's script kind wins).
A request that fails inside the server is logged and answered with no result
rather than crashing the server.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from chatcommon.allocation import gc_paused
from runtime.lsp.analysis import Analysis, analyse, language_of
from runtime.lsp.diagnostics import path_uri, uri_path

__all__ = ["ChatServer", "build_server", "serve"]

T = TypeVar("T")
_LOG = logging.getLogger("chatmdc.lsp")


def _key(diagnostic: lsp.Diagnostic) -> tuple[Any, ...]:
    r = diagnostic.range
    return (r.start.line, r.start.character, r.end.line, r.end.character, diagnostic.code,
            diagnostic.message)


class ChatServer(LanguageServer):
    """The language server and its per-document state."""

    def __init__(self) -> None:
        super().__init__("chatmdc", "0.1.0",
                         text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental)
        self.analyses: dict[str, Analysis] = {}
        self.previous: dict[str, Analysis] = {}
        #: file uri → {analysed document uri → its diagnostics there}
        self.reports: dict[str, dict[str, list[lsp.Diagnostic]]] = {}
        self.default_surface = "core"

    def surface_for(self, path: str) -> str:
        for analysis in self.analyses.values():
            kind = analysis.script_kinds.get(path)
            if kind is not None:
                return kind
        return self.default_surface

    def refresh(self, uri: str) -> Analysis | None:
        """Analyse the open document ``uri`` and publish what changed."""
        path = uri_path(uri)
        document = self.workspace.get_text_document(uri)
        language = None if path is None else language_of(path, document.language_id)
        if path is None or language is None:
            return None  # not a file, or neither ChatMD nor ChatML
        text = document.source
        version = document.version
        encoding = str(self.workspace.position_encoding or "utf-16")
        try:
            with gc_paused():  # as in `chatmdc check`: the analysis allocates in one go
                analysis = analyse(path, text, surface=self.surface_for(path),
                                   encoding=encoding, language=language)
        except Exception as exc:  # a toolchain bug: say so on the document, keep serving
            _LOG.exception("analysis failed on %s", uri)
            start = lsp.Position(line=0, character=0)
            self._report(uri, {uri: [lsp.Diagnostic(
                range=lsp.Range(start=start, end=start), severity=lsp.DiagnosticSeverity.Error,
                code="chatmdc.internal_error", source="chatmdc",
                message=f"the checker failed on this document: {type(exc).__name__}: {exc}")]})
            return None
        analysis.version = version
        old = self.analyses.get(uri)
        if old is not None:
            self.previous[uri] = old
        self.analyses[uri] = analysis
        published = {path_uri(p): found for p, found in analysis.published.items()}
        self._report(uri, published)
        self._recheck_scripts(analysis)
        return analysis

    def _recheck_scripts(self, analysis: Analysis) -> None:
        """Check again the open ``.chatml`` files this prompt declares with another surface."""
        for path, surface in analysis.script_kinds.items():
            script_uri = path_uri(path)
            opened = self.analyses.get(script_uri)
            if opened is not None and opened.scripts and opened.scripts[0].surface != surface:
                self.refresh(script_uri)

    def forget(self, uri: str) -> None:
        self.analyses.pop(uri, None)
        self.previous.pop(uri, None)
        self._report(uri, {})

    def _report(self, owner: str, published: dict[str, list[lsp.Diagnostic]]) -> None:
        touched = set(published)
        for target, owners in self.reports.items():
            if owner in owners:
                touched.add(target)
                del owners[owner]
        for target, found in published.items():
            self.reports.setdefault(target, {})[owner] = found
        for target in sorted(touched):
            merged: dict[tuple[Any, ...], lsp.Diagnostic] = {}
            for found in self.reports.get(target, {}).values():
                for diagnostic in found:
                    merged.setdefault(_key(diagnostic), diagnostic)
            self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
                uri=target, diagnostics=list(merged.values())))

    def current(self, uri: str) -> Analysis | None:
        """The analysis of the document's current text (analysed now if it is stale)."""
        analysis = self.analyses.get(uri)
        if analysis is not None and analysis.version == self.workspace.get_text_document(
                uri).version:
            return analysis
        return self.refresh(uri)

    def answer(self, uri: str, compute: Callable[[Analysis], T]) -> T | None:
        analysis = self.current(uri)
        if analysis is None:
            return None
        try:
            return compute(analysis)
        except Exception:  # a feature bug must not take the server down
            _LOG.exception("request failed on %s", uri)
            return None


def build_server() -> ChatServer:
    """A server with every feature registered (not started)."""
    server = ChatServer()

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: ChatServer, params: lsp.InitializeParams) -> None:
        from chatml.surfaces import SURFACE_NAMES

        surface = _surface_option(params)
        if surface in SURFACE_NAMES:
            ls.default_surface = surface

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: ChatServer, params: lsp.DidOpenTextDocumentParams) -> None:
        ls.refresh(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: ChatServer, params: lsp.DidChangeTextDocumentParams) -> None:
        await asyncio.sleep(0)  # let changes already received apply: analyse the last only
        uri = params.text_document.uri
        if ls.workspace.get_text_document(uri).version == params.text_document.version:
            ls.current(uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: ChatServer, params: lsp.DidSaveTextDocumentParams) -> None:
        ls.refresh(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: ChatServer, params: lsp.DidCloseTextDocumentParams) -> None:
        ls.forget(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    def hover(ls: ChatServer, params: lsp.HoverParams) -> lsp.Hover | None:
        from runtime.lsp.hover import hover as compute

        return ls.answer(params.text_document.uri, lambda a: compute(a, params.position))

    @server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
    def definition(ls: ChatServer, params: lsp.DefinitionParams) -> lsp.Location | None:
        from runtime.lsp.definition import definition as compute

        return ls.answer(params.text_document.uri, lambda a: compute(a, params.position))

    @server.feature(lsp.TEXT_DOCUMENT_COMPLETION,
                    lsp.CompletionOptions(trigger_characters=["<", " ", ".", '"', "/"]))
    def completion(ls: ChatServer, params: lsp.CompletionParams) -> lsp.CompletionList | None:
        from runtime.lsp.completion import complete

        uri = params.text_document.uri
        return ls.answer(uri, lambda a: complete(a, params.position, ls.previous.get(uri)))

    @server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def document_symbol(ls: ChatServer, params: lsp.DocumentSymbolParams
                        ) -> list[lsp.DocumentSymbol] | None:
        from runtime.lsp.symbols import symbols

        return ls.answer(params.text_document.uri, symbols)

    return server


def _surface_option(params: lsp.InitializeParams) -> str | None:
    options = params.initialization_options
    if isinstance(options, dict):
        value = options.get("chatmlSurface")
        if isinstance(value, str):
            return value
    return None


def serve() -> int:
    """Run the server on standard input and output until the client exits; exit status 0."""
    build_server().start_io()
    return 0
