"""Completion: tags allowed at the cursor, attributes and their values, ChatML names.

ChatMD (read from the text before the cursor, so it works while a tag is
half typed): after ``<`` the tags the enclosing element may contain (the
shell vocabulary's elements inside shell sections), after ``</`` the
innermost open element, inside an opening tag the attributes it does not
have yet, and inside a quoted value the enumerated values of that attribute.
ChatML (``.chatml`` buffers and inline ``<script>`` bodies): the names in
scope at the cursor, the surface's builtins and keywords, and after
``Module.`` the exports of that module (one the script defines, or the
surface's). While a script does not parse, names come from the last analysis
in which it did.
"""

from __future__ import annotations

import re

from lsprotocol import types as lsp

from chatcommon.diagnostics import Diagnostic
from chatcommon.sources import SourceFile
from chatmd.lexer import END, START, iter_tokens
from chatml.syntax.tokens import KEYWORDS
from runtime.lsp.analysis import Analysis, ScriptInfo, surface_names
from runtime.lsp.vocabulary_table import TAGS, children_of

__all__ = ["complete"]

_OPEN_TAG = re.compile(r"<([A-Za-z_][A-Za-z0-9_]*)?$")
_CLOSE_TAG = re.compile(r"</([A-Za-z_][A-Za-z0-9_]*)?$")
_IN_TAG = re.compile(r"<([A-Za-z_][A-Za-z0-9_]*)(\s[^<>]*)?$", re.S)
_VALUE = re.compile(r"([A-Za-z0-9_:\-]+)\s*=\s*[\"']([^\"']*)$")
_ATTRIBUTE_NAMES = re.compile(r"([A-Za-z0-9_:\-]+)\s*(?==|\s|$)")
_MEMBER = re.compile(r"([A-Z][A-Za-z0-9_]*)\s*\.\s*([A-Za-z0-9_]*)$")


def _item(label: str, kind: lsp.CompletionItemKind, detail: str | None = None
          ) -> lsp.CompletionItem:
    return lsp.CompletionItem(label=label, kind=kind, detail=detail)


def _open_elements(text: str) -> list[str]:
    """The tags open at the end of ``text``, outermost first."""
    stack: list[str] = []
    problems: list[Diagnostic] = []
    for token in iter_tokens(SourceFile("<completion>", text), problems):
        if token[0] == START:
            stack.append(token[1])
        elif token[0] == END and token[1] in stack:
            while stack and stack.pop() != token[1]:
                pass
    return stack


def _tag_items(parent: str | None) -> list[lsp.CompletionItem]:
    return [_item(name, lsp.CompletionItemKind.Class, TAGS[name].description)
            for name in children_of(parent)]


def _attribute_items(tag: str, written: str) -> list[lsp.CompletionItem]:
    info = TAGS.get(tag)
    if info is None:
        return []
    present = set(_ATTRIBUTE_NAMES.findall(written))
    items = []
    for name, attribute in info.attributes.items():
        if name not in present or written.rstrip().endswith(name):
            item = _item(name, lsp.CompletionItemKind.Property, attribute.description)
            items.append(item)
    return items


def _value_items(tag: str, attribute: str) -> list[lsp.CompletionItem]:
    info = TAGS.get(tag)
    found = None if info is None else info.attributes.get(attribute)
    if found is None:
        return []
    return [_item(value, lsp.CompletionItemKind.EnumMember, f"{attribute} of <{tag}>")
            for value in found.values]


def _chatmd(analysis: Analysis, offset: int) -> list[lsp.CompletionItem]:
    before = analysis.text[:offset]
    opening = _OPEN_TAG.search(before)
    if opening is not None:
        stack = _open_elements(before[: opening.start()])
        return _tag_items(stack[-1] if stack else None)
    closing = _CLOSE_TAG.search(before)
    if closing is not None:
        stack = _open_elements(before[: closing.start()])
        return [] if not stack else [_item(stack[-1], lsp.CompletionItemKind.Class,
                                           f"close <{stack[-1]}>")]
    in_tag = _IN_TAG.search(before)
    if in_tag is None or in_tag.group(1) not in TAGS:
        return []
    written = in_tag.group(2) or ""
    value = _VALUE.search(written)
    if value is not None:
        return _value_items(in_tag.group(1), value.group(1))
    if written and not re.search(r"[\"'][^\"'\s]*$", written.split("=")[-1]):
        return _attribute_items(in_tag.group(1), written)
    return []


def _keywords() -> list[lsp.CompletionItem]:
    return [_item(word, lsp.CompletionItemKind.Keyword) for word in KEYWORDS if word.isalpha()]


def _chatml(script: ScriptInfo, previous: ScriptInfo | None, offset: int
            ) -> list[lsp.CompletionItem]:
    index = script.index or (previous.index if previous is not None else None)
    modules, globals_ = surface_names(script.surface)
    before = script.source.text[:offset]
    member = _MEMBER.search(before)
    if member is not None:
        module = member.group(1)
        names = index.members(module) if index is not None else list(modules.get(module, ()))
        return [_item(name, lsp.CompletionItemKind.Function, f"{module}.{name}")
                for name in names]
    items: list[lsp.CompletionItem] = []
    if index is not None:
        for name, binder in sorted(index.in_scope(offset).items()):
            kind = (lsp.CompletionItemKind.Module if binder.kind == "module"
                    else lsp.CompletionItemKind.Variable)
            items.append(_item(name, kind, binder.kind))
    items += [_item(name, lsp.CompletionItemKind.Function, "builtin") for name in globals_]
    items += [_item(name, lsp.CompletionItemKind.Module, "builtin module") for name in modules]
    return items + _keywords()


def complete(analysis: Analysis, position: lsp.Position,
             previous: Analysis | None = None) -> lsp.CompletionList:
    """The completions at ``position``; ``previous`` is the last analysis of the same buffer."""
    line, column = analysis.index.to_line_column(position)
    script = analysis.script_at(line, column)
    if script is not None:
        offset = script.local_offset(line, column)
        if offset is not None:
            earlier = None
            if previous is not None:
                earlier = next((s for s in previous.scripts if s.script_id == script.script_id
                                and s.index is not None), None)
            return lsp.CompletionList(is_incomplete=False,
                                      items=_chatml(script, earlier, offset))
    if analysis.language != "chatmd":
        return lsp.CompletionList(is_incomplete=False, items=[])
    return lsp.CompletionList(is_incomplete=False,
                              items=_chatmd(analysis, analysis.index.offset(position)))
