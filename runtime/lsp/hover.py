"""Hover: ChatML names show their type, ChatMD tags and attributes their description.

ChatML identifiers (in ``.chatml`` buffers and inline ``<script>`` bodies,
whose positions map back into the prompt) show ``val name : type`` from the
typechecker's binder types, or the builtin's scheme from the surface. ChatMD
tags show the tag's one-line description and allowed children; attributes
(and their values) the attribute's description and allowed values.
"""

from __future__ import annotations

from lsprotocol import types as lsp

from runtime.lsp.analysis import Analysis, ScriptInfo
from runtime.lsp.chatmd_locate import locate
from runtime.lsp.chatml_index import Binder, Use
from runtime.lsp.vocabulary_table import TAGS

__all__ = ["hover", "type_of"]


def _markdown(text: str) -> lsp.MarkupContent:
    return lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=text)


def _builtin_scheme(qualified: str) -> str | None:
    from chatml.surfaces import scheme_of
    from chatml.typecheck.types import show_signature

    try:
        return show_signature(scheme_of(qualified))
    except KeyError:
        return None


def _binder_type(script: ScriptInfo, binder: Binder) -> str | None:
    from chatml.typecheck.types import show_signature

    types = script.result.types
    if types is None:
        return None
    found = types.binder_types.get(binder.span)
    return None if found is None else show_signature(found)


def type_of(script: ScriptInfo, item: Use | Binder) -> str | None:
    """``val name : type`` (or ``module M``) for a name of ``script``."""
    binder = item if isinstance(item, Binder) else item.binder
    if binder is not None:
        if binder.kind == "module":
            shown = _binder_type(script, binder)
            return f"module {binder.qualified}" + (f" : {shown}" if shown else "")
        shown = _binder_type(script, binder)
        return None if shown is None else f"val {binder.qualified} : {shown}"
    builtin = item.builtin if isinstance(item, Use) else None
    if builtin is None:
        return None
    modules, _ = _surface(script)
    if builtin in modules:
        return f"module {builtin} (builtin)"
    scheme = _builtin_scheme(builtin)
    return None if scheme is None else f"val {builtin} : {scheme}  (builtin)"


def _surface(script: ScriptInfo) -> tuple[dict[str, tuple[str, ...]], tuple[str, ...]]:
    from runtime.lsp.analysis import surface_names

    return surface_names(script.surface)


def _chatml_hover(analysis: Analysis, script: ScriptInfo, offset: int) -> lsp.Hover | None:
    index = script.index
    if index is None:
        return None
    item = index.at(offset)
    if item is None:
        return None
    shown = type_of(script, item)
    if shown is None:
        return None
    start_line, start_column = script.source.position(item.span.start)
    end_line, end_column = script.source.position(item.span.end)
    text_index = analysis.index
    where = lsp.Range(start=text_index.from_line_column(start_line, start_column),
                      end=text_index.from_line_column(end_line, end_column))
    return lsp.Hover(contents=_markdown(f"```chatml\n{shown}\n```"), range=where)


def _tag_hover(analysis: Analysis, offset: int) -> lsp.Hover | None:
    spot = locate(analysis.document, offset)
    if spot is None:
        return None
    tag = TAGS.get(spot.element.tag)
    if tag is None:
        return None
    where = analysis.index.range(spot.start, spot.end)
    if spot.part == "tag":
        text = f"**<{spot.element.tag}>** — {tag.description}"
        if tag.children:
            text += "\n\nChildren: " + ", ".join(f"`<{c}>`" for c in tag.children)
        return lsp.Hover(contents=_markdown(text), range=where)
    assert spot.attribute is not None
    attribute = tag.attributes.get(spot.attribute)
    if attribute is None:
        text = f"**{spot.attribute}** is not an attribute of `<{spot.element.tag}>`"
    else:
        text = f"**{spot.attribute}** (on `<{spot.element.tag}>`) — {attribute.description}"
        if attribute.values:
            text += "\n\nValues: " + " | ".join(f"`{v}`" for v in attribute.values)
    return lsp.Hover(contents=_markdown(text), range=where)


def hover(analysis: Analysis, position: lsp.Position) -> lsp.Hover | None:
    """The hover at ``position`` of the analysed buffer, or None."""
    line, column = analysis.index.to_line_column(position)
    script = analysis.script_at(line, column)
    if script is not None:
        offset = script.local_offset(line, column)
        if offset is not None:
            return _chatml_hover(analysis, script, offset)
    if analysis.language != "chatmd":
        return None
    return _tag_hover(analysis, analysis.index.offset(position))
