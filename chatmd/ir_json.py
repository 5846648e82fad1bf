"""JSON for the IR: a cattrs converter between :class:`~chatmd.ir.Prompt` and plain JSON data.

``ir_from_json(ir_to_json(p)) == p`` and ``ir_to_json(ir_from_json(j)) == j``
(provenance and locations included). This module imports cattrs, so only
``chatmdc compile --emit ir`` and library users load it — never ``check``.

Shape: the prompt's fields as an object (``config``, ``tools``, ``scripts``,
``shell_runtimes``, ``moderator_runtime``, ``items``, ``name``,
``prompt_dir``) plus ``"ir_version": 1``. Every union member carries a
``"node"`` tag: content items ``text|image|doc|agent``, tools
``read_file|builtin|custom|agent|mcp|shell``, conversation items
``message|reasoning``, script sources ``inline|src``. Message ``content`` is
``null``, a string, or a list of content items. The syntax tree kept by
pass-through shell declarations is ``{"tag", "attrs": [[name, value|null]],
"children", "self_closing"}`` with text children ``{"text": ...}``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import cattrs
from cattrs.strategies import configure_tagged_union

from chatcommon.records import evolve
from chatcommon.sources import SourceFile, Span
from chatmd.ast import Attribute, Element, Node, Text
from chatmd.ir import (
    AgentItem,
    AgentTool,
    BuiltinTool,
    Content,
    ContentItem,
    ConversationItem,
    CustomTool,
    DocItem,
    ImageItem,
    InlineSource,
    McpTool,
    Message,
    Prompt,
    ReadFileTool,
    Reasoning,
    ScriptSource,
    ShellTool,
    SrcSource,
    TextItem,
    Tool,
)
from chatmd.nested_fold import Nested, fold_nested

__all__ = ["IR_VERSION", "converter", "dumps_indented", "ir_from_json", "ir_to_json",
           "ir_to_json_text"]

IR_VERSION = 1
TAG = "node"

_TAGS: dict[type, str] = {
    TextItem: "text",
    ImageItem: "image",
    DocItem: "doc",
    AgentItem: "agent",
    ReadFileTool: "read_file",
    BuiltinTool: "builtin",
    CustomTool: "custom",
    AgentTool: "agent",
    McpTool: "mcp",
    ShellTool: "shell",
    Message: "message",
    Reasoning: "reasoning",
    InlineSource: "inline",
    SrcSource: "src",
}

#: Elements rebuilt from JSON have no source text; their spans point here.
_DETACHED = SourceFile("<ir>", "")


def _node_to_json(node: Node) -> dict[str, Any]:
    """A syntax node as JSON data (walked with an explicit stack: elements nest deep)."""
    result: dict[str, Any] = {}
    stack: list[tuple[Node, dict[str, Any]]] = [(node, result)]
    while stack:
        current, data = stack.pop()
        if isinstance(current, Text):
            data["text"] = current.text
            continue
        children: list[dict[str, Any]] = [{} for _ in current.children]
        data.update({"tag": current.tag, "attrs": [[a.name, a.value] for a in current.attrs],
                     "children": children, "self_closing": current.self_closing})
        stack.extend(zip(current.children, children, strict=True))
    return result


def _node_from_json(data: dict[str, Any]) -> Node:
    """The inverse of :func:`_node_to_json` (nodes built bottom-up, with an explicit stack)."""
    span = Span(_DETACHED, 0, 0)
    # (the data of an element, its children's data left, the nodes built from them)
    root: list[Node] = []
    stack: list[tuple[dict[str, Any] | None, Iterator[Any], list[Node]]] = [
        (None, iter((data,)), root)]
    while stack:
        element, remaining, built = stack[-1]
        child: Any = next(remaining, _END)
        if child is _END:
            stack.pop()
            if element is not None:
                self_closing = bool(element.get("self_closing", False))
                stack[-1][2].append(Element(
                    element["tag"],
                    tuple(Attribute(name, value) for name, value in element["attrs"]),
                    tuple(built), span, None if self_closing else span, self_closing))
            continue
        if "text" in child:
            built.append(Text(child["text"], span))
        else:
            stack.append((child, iter(child["children"]), []))
    return root[0]


def _items_to_json(converter: cattrs.Converter, items: tuple[ContentItem, ...]) -> list[Any]:
    """Content items as cattrs unstructures them; ``<agent>`` items (which nest as deep as
    elements may) walked with an explicit stack instead of cattrs' recursion."""
    top: list[Any] = []
    stack: list[tuple[Iterator[ContentItem], list[Any]]] = [(iter(items), top)]
    while stack:
        remaining, out = stack[-1]
        item = next(remaining, None)
        if item is None:
            stack.pop()
        elif type(item) is AgentItem:
            data = converter.unstructure(evolve(item, items=()), ContentItem)
            nested: list[Any] = []
            data["items"] = nested
            out.append(data)
            stack.append((iter(item.items), nested))
        else:
            out.append(converter.unstructure(item, ContentItem))
    return top


def _items_from_json(converter: cattrs.Converter, data: Any) -> tuple[ContentItem, ...]:
    """The inverse of :func:`_items_to_json` (nested ``<agent>`` items built bottom-up by
    :func:`fold_nested`)."""
    def visit(entry: Any) -> ContentItem | Nested[Any, ContentItem]:
        if isinstance(entry, dict) and entry.get(TAG) == "agent" and isinstance(
                entry.get("items"), list):
            def finish(items: list[ContentItem]) -> ContentItem:
                shell: AgentItem = converter.structure({**entry, "items": []}, ContentItem)  # type: ignore[arg-type]  # ContentItem: a union alias, which cattrs structures
                return evolve(shell, items=tuple(items))
            return Nested(entry["items"], finish)
        return converter.structure(entry, ContentItem)  # type: ignore[arg-type]  # as above

    return tuple(fold_nested(data, visit))


_END = object()


def _make_converter() -> cattrs.Converter:
    converter = cattrs.Converter(forbid_extra_keys=True)
    converter.register_unstructure_hook(Element, _node_to_json)
    converter.register_structure_hook(Element, lambda data, _: _node_from_json(data))
    def unstructure_content(content: Content) -> Any:
        if content is None or isinstance(content, str):
            return content
        return _items_to_json(converter, content)

    def structure_content(data: Any, _: object) -> Content:
        if data is None or isinstance(data, str):
            return data
        return _items_from_json(converter, data)

    converter.register_unstructure_hook_func(lambda t: t == Content, unstructure_content)
    converter.register_structure_hook_func(lambda t: t == Content, structure_content)
    for union in (ContentItem, Tool, ConversationItem, ScriptSource):
        configure_tagged_union(union, converter, tag_generator=_TAGS.__getitem__, tag_name=TAG)
    return converter


converter = _make_converter()


def ir_to_json(prompt: Prompt) -> dict[str, Any]:
    """The JSON data (dicts, lists, strings, numbers) of ``prompt``."""
    data = converter.unstructure(prompt, Prompt)
    return {"ir_version": IR_VERSION, **data}


def ir_to_json_text(prompt: Prompt) -> str:
    """``ir_to_json(prompt)`` as indented JSON text (:func:`dumps_indented`)."""
    return dumps_indented(ir_to_json(prompt))


def dumps_indented(value: Any) -> str:
    """``json.dumps(value, indent=2, ensure_ascii=False)``, written with an explicit stack.

    The standard encoder recurses once per level of nesting (twice per nested
    ``<agent>``), so the IR of a prompt whose elements nest as deep as the
    parser allows would exhaust the interpreter's stack.
    """
    out: list[str] = []
    # (the entries left, whether they are a dict's items, their indentation level, how many
    # were written)
    stack: list[list[Any]] = []

    def write(item: Any, level: int) -> None:
        if isinstance(item, dict):
            if not item:
                out.append("{}")
                return
            out.append("{")
            stack.append([iter(item.items()), True, level + 1, 0])
        elif isinstance(item, (list, tuple)):
            if not item:
                out.append("[]")
                return
            out.append("[")
            stack.append([iter(item), False, level + 1, 0])
        else:
            out.append(json.dumps(item, ensure_ascii=False))

    write(value, 0)
    while stack:
        frame = stack[-1]
        entries, is_dict, level, written = frame
        entry: Any = next(entries, _END)
        if entry is _END:
            stack.pop()
            out.append("\n" + "  " * (level - 1) + ("}" if is_dict else "]"))
            continue
        frame[3] = written + 1
        out.append(("," if written else "") + "\n" + "  " * level)
        if is_dict:
            key, item = entry
            if not isinstance(key, str):  # (as json does: true, false, null, numbers)
                key = json.dumps(key)
            out.append(json.dumps(key, ensure_ascii=False) + ": ")
            write(item, level)
        else:
            write(entry, level)
    return "".join(out)


def ir_from_json(data: dict[str, Any] | str) -> Prompt:
    """The prompt encoded by ``data`` (a JSON object or its text).

    Raises ``ValueError`` when the version is unknown and a cattrs
    ``BaseValidationError`` when the data does not have the IR's shape.
    """
    if isinstance(data, str):
        data = json.loads(data)
    assert isinstance(data, dict)
    fields = dict(data)
    version = fields.pop("ir_version", None)
    if version != IR_VERSION:
        raise ValueError(f"unsupported IR version {version!r}: expected {IR_VERSION}")
    return converter.structure(fields, Prompt)
