"""Go to definition: referenced files of ChatMD tags, and ChatML names to their binding.

Files: ``<import src>``, ``<script src>``, ``<doc src local>``, ``<img src
local>``, ``<agent src>`` and ``<tool agent=...>``, resolved against the
buffer's folder (documents and agents also against the working directory, as
the request converter does). URLs and missing files have no definition.
ChatML: a name (in a ``.chatml`` buffer or an inline ``<script>`` body) goes to
the binder it refers to; builtins have none.
"""

from __future__ import annotations

import os

from lsprotocol import types as lsp

from runtime.lsp.analysis import Analysis, ScriptInfo
from runtime.lsp.chatmd_locate import locate
from runtime.lsp.chatml_index import Binder
from runtime.lsp.diagnostics import path_uri

__all__ = ["definition"]

#: (tag, attribute) → whether the element needs the ``local`` flag to name a file.
FILE_ATTRIBUTES: dict[tuple[str, str], bool] = {
    ("import", "src"): False, ("script", "src"): False, ("doc", "src"): True,
    ("img", "src"): True, ("agent", "src"): False, ("tool", "agent"): False,
}
_CWD_FALLBACK = frozenset({"doc", "agent", "tool"})


def _file_location(analysis: Analysis, tag: str, reference: str) -> lsp.Location | None:
    if not reference.strip() or "://" in reference:
        return None
    candidates = [os.path.join(analysis.folder, reference)]
    if tag in _CWD_FALLBACK:
        candidates.append(os.path.abspath(reference))
    for candidate in candidates:
        if os.path.isfile(candidate):
            start = lsp.Position(line=0, character=0)
            return lsp.Location(uri=path_uri(os.path.normpath(candidate)),
                                range=lsp.Range(start=start, end=start))
    return None


def _binder_location(analysis: Analysis, script: ScriptInfo, binder: Binder) -> lsp.Location:
    start_line, start_column = script.source.position(binder.span.start)
    end_line, end_column = script.source.position(binder.span.end)
    index = analysis.index
    return lsp.Location(uri=analysis.uri, range=lsp.Range(
        start=index.from_line_column(start_line, start_column),
        end=index.from_line_column(end_line, end_column)))


def _chatml_definition(analysis: Analysis, script: ScriptInfo,
                       offset: int) -> lsp.Location | None:
    index = script.index
    item = None if index is None else index.at(offset)
    if item is None:
        return None
    binder = item if isinstance(item, Binder) else item.binder
    return None if binder is None else _binder_location(analysis, script, binder)


def definition(analysis: Analysis, position: lsp.Position) -> lsp.Location | None:
    """Where the name or file reference at ``position`` is defined, or None."""
    line, column = analysis.index.to_line_column(position)
    script = analysis.script_at(line, column)
    if script is not None:
        offset = script.local_offset(line, column)
        if offset is not None:
            return _chatml_definition(analysis, script, offset)
    if analysis.language != "chatmd":
        return None
    spot = locate(analysis.document, analysis.index.offset(position))
    if spot is None or spot.attribute is None:
        return None
    element = spot.element
    needs_local = FILE_ATTRIBUTES.get((element.tag, spot.attribute))
    if needs_local is None or (needs_local and not element.has("local")):
        return None
    # `<agent src>`: the first occurrence wins (chatmd-language §4.0)
    reference = (element.get_first(spot.attribute) if element.tag == "agent"
                 else element.get(spot.attribute))
    return None if reference is None else _file_location(analysis, element.tag, reference)
