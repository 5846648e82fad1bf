"""Analysing one open document with the toolchain's own pipeline, for the language server.

:func:`analyse` runs exactly what ``chatmdc check`` runs on a ``.chatmd``
buffer (:func:`chatmd.frontend.check_prompt_text` with the registered
checks, on the unsaved text) or what ``chatml check`` runs on a ``.chatml``
buffer (:func:`chatml.check.check_source`), and keeps what the editor
features need: the diagnostics grouped by the absolute path of the file they
are in (problems of imports and ``src`` scripts on those files, plus one
diagnostic in the root where each chain starts), the ChatML scripts with
their typecheck results, the best-effort prompt and the root syntax tree. ChatML
name indexes are built lazily, on the first request that needs them.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from typing import Any

from lsprotocol import types as lsp

from chatcommon.diagnostics import Diagnostic, Related
from chatcommon.sources import SourceFile
from chatmd.ast import Document
from runtime.lsp.chatml_index import ScriptIndex, index_program
from runtime.lsp.diagnostics import chain_start, path_uri, to_lsp
from runtime.lsp.positions import TextIndex

__all__ = ["Analysis", "ScriptInfo", "analyse", "language_of", "surface_names"]

@functools.cache
def surface_names(surface: str) -> tuple[dict[str, tuple[str, ...]], tuple[str, ...]]:
    """(builtin modules → their export names, global names) of a ChatML surface."""
    from chatml.surfaces import get_surface

    resolved = get_surface(surface)
    modules = {m.name: tuple(e.name for e in m.exports) for m in resolved.modules}
    return modules, resolved.global_names


class ScriptInfo:
    """One ChatML script: where its text is, its check result, its (lazy) name index."""

    def __init__(self, script_id: str | None, surface: str, source: SourceFile, path: str,
                 inline: bool, result: Any) -> None:
        self.script_id = script_id
        self.surface = surface
        self.source = source
        self.path = path
        self.inline = inline
        self.result = result
        self._index: ScriptIndex | None = None

    @property
    def index(self) -> ScriptIndex | None:
        if self._index is None and self.result.program is not None:
            modules, globals_ = surface_names(self.surface)
            self._index = index_program(self.result.program, modules, globals_)
        return self._index

    def local_offset(self, line: int, column: int) -> int | None:
        """The offset in the script text of a reported 1-based position, None when outside."""
        source = self.source
        local_line = line - source.line_offset
        starts = source.line_starts
        if local_line < 1 or local_line > len(starts):
            return None
        local_column = column - (source.first_line_column_offset if local_line == 1 else 0)
        if local_column < 1:
            return None
        start = starts[local_line - 1]
        end = starts[local_line] - 1 if local_line < len(starts) else len(source.text)
        offset = start + local_column - 1
        return offset if offset <= end else None


class Analysis:
    """What :func:`analyse` found for one document (see the module docstring)."""

    def __init__(self, path: str, language: str, text: str, encoding: str = "utf-16") -> None:
        self.path = path
        self.uri = path_uri(path)
        self.language = language
        self.text = text
        self.encoding = encoding
        self.index = TextIndex(text, encoding)
        self.published: dict[str, list[lsp.Diagnostic]] = {path: []}
        self.scripts: list[ScriptInfo] = []
        self.prompt: Any = None
        self.paths: dict[str, str] = {}
        self.texts: dict[str, str] = {path: text}
        self.script_kinds: dict[str, str] = {}
        self.syntax: Document | None = None
        #: the editor's version of the text analysed (None outside the server)
        self.version: int | None = None

    @property
    def folder(self) -> str:
        return os.path.dirname(self.path)

    @property
    def document(self) -> Document:
        """The ChatMD syntax tree of the buffer (best effort when it has errors)."""
        if self.syntax is None:
            from chatmd.parser import parse

            self.syntax = parse(SourceFile(self.path, self.text)).document
        return self.syntax

    def resolve(self, name: str) -> str | None:
        """The absolute path of a file a diagnostic names (``..`` folded, as editors name it)."""
        if name in self.paths:
            return self.paths[name]
        if name.startswith("<"):
            return None
        return os.path.normpath(os.path.join(self.folder, name))

    def text_index(self, path: str) -> TextIndex | None:
        text = self.texts.get(path)
        return None if text is None else (self.index if path == self.path
                                     else TextIndex(text, self.encoding))

    def script_at(self, line: int, column: int) -> ScriptInfo | None:
        """The script of this buffer whose text holds the reported position."""
        for script in self.scripts:
            if script.path == self.path and script.local_offset(line, column) is not None:
                return script
        return None


def _prompt_checks(results: dict[str, Any]) -> list[Any]:
    """:func:`runtime.prompt_checks.prompt_checks`, the script check collecting its results."""
    from chatmd.frontend import chatmd_checks
    from runtime.script_check import check_prompt_scripts

    return [*chatmd_checks(), functools.partial(check_prompt_scripts, results=results)]


def _chatmd(analysis: Analysis) -> Sequence[Diagnostic]:
    from chatmd.frontend import check_prompt_text
    from chatmd.ir import SrcSource
    from chatml.surfaces import SCRIPT_KIND_SURFACE

    results: dict[str, Any] = {}
    checked = check_prompt_text(analysis.text, name=analysis.path, prompt_dir=analysis.folder,
                                checks=_prompt_checks(results))
    analysis.paths = {name: os.path.normpath(path) for name, path in checked.paths.items()}
    analysis.prompt = checked.partial
    analysis.syntax = checked.syntax
    for source in checked.sources:
        path = analysis.paths.get(source.name)
        if path is not None and path != analysis.path:
            analysis.texts[path] = source.text
    for script in getattr(checked.partial, "scripts", ()):
        result = results.get(script.id)
        surface = SCRIPT_KIND_SURFACE.get(script.kind)
        if result is None or surface is None or result.source is None:
            continue
        if isinstance(script.source, SrcSource):
            path = script.source.path
            analysis.paths.setdefault(script.source.display_name, path)
            analysis.texts[path] = script.source.text
            analysis.script_kinds[path] = surface
            inline = False
        else:
            path = analysis.resolve(script.source.file) or analysis.path
            inline = True
        analysis.scripts.append(ScriptInfo(script.id, surface, result.source, path, inline,
                                           result))
    return checked.diagnostics


def _chatml(analysis: Analysis, surface: str) -> Sequence[Diagnostic]:
    from chatml.check import check_source

    result = check_source(analysis.text, name=analysis.path, surface=surface)
    source = result.source or SourceFile(analysis.path, analysis.text)
    analysis.scripts.append(ScriptInfo(None, surface, source, analysis.path, False, result))
    return result.diagnostics


def _chain_start(diagnostic: Diagnostic, root: str) -> Related | None:
    """The related location in the root file where the chain to ``diagnostic`` starts."""
    for related in reversed(diagnostic.related):
        if related.file == root:
            return related
    return None


def _publish(analysis: Analysis, diagnostics: Sequence[Diagnostic]) -> None:
    chains: dict[tuple[int, int], tuple[Related, list[tuple[Diagnostic, lsp.Location]]]] = {}
    for diagnostic in diagnostics:
        path = analysis.resolve(diagnostic.file) or analysis.path
        index = analysis.text_index(path)
        converted = to_lsp(diagnostic, index, path_uri(path), analysis.resolve,
                           analysis.text_index)
        analysis.published.setdefault(path, []).append(converted)
        if path == analysis.path:
            continue
        start = _chain_start(diagnostic, analysis.path)
        if start is not None:
            entry = chains.setdefault((start.line, start.column), (start, []))
            entry[1].append((diagnostic, lsp.Location(uri=path_uri(path),
                                                      range=converted.range)))
    for start, problems in chains.values():
        files = sorted({_shown(analysis, analysis.resolve(d.file) or d.file) for d, _ in problems})
        analysis.published[analysis.path].append(chain_start(start, problems, analysis.index,
                                                             files))


def _shown(analysis: Analysis, path: str) -> str:
    """``path`` relative to the buffer's folder when it lies beneath it."""
    relative = os.path.relpath(path, analysis.folder)
    return path if relative.startswith("..") else relative


def language_of(path: str, language_id: str | None = None) -> str | None:
    """``chatmd`` or ``chatml`` for a file the server analyses (by extension or language id)."""
    if path.endswith(".chatml") or language_id == "chatml":
        return "chatml"
    if path.endswith(".chatmd") or language_id == "chatmd":
        return "chatmd"
    return None


def analyse(path: str, text: str, *, surface: str = "core", encoding: str = "utf-16",
            language: str | None = None) -> Analysis:
    """Check the buffer ``text`` of the file ``path`` (ChatML against ``surface``).

    ``language`` defaults to the one :func:`language_of` the path gives (else
    ChatMD); ``encoding`` is the LSP position encoding positions are converted to.
    """
    language = language or language_of(path) or "chatmd"
    analysis = Analysis(path, language, text, encoding)
    diagnostics = _chatml(analysis, surface) if language == "chatml" else _chatmd(analysis)
    _publish(analysis, diagnostics)
    return analysis
