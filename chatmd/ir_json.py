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
from typing import Any

import cattrs
from cattrs.strategies import configure_tagged_union

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

__all__ = ["IR_VERSION", "converter", "ir_from_json", "ir_to_json", "ir_to_json_text"]

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
    if isinstance(node, Text):
        return {"text": node.text}
    return {
        "tag": node.tag,
        "attrs": [[a.name, a.value] for a in node.attrs],
        "children": [_node_to_json(child) for child in node.children],
        "self_closing": node.self_closing,
    }


def _node_from_json(data: dict[str, Any]) -> Node:
    span = Span(_DETACHED, 0, 0)
    if "text" in data:
        return Text(data["text"], span)
    self_closing = bool(data.get("self_closing", False))
    return Element(
        data["tag"],
        tuple(Attribute(name, value) for name, value in data["attrs"]),
        tuple(_node_from_json(child) for child in data["children"]),
        span,
        None if self_closing else span,
        self_closing,
    )


def _make_converter() -> cattrs.Converter:
    converter = cattrs.Converter(forbid_extra_keys=True)
    converter.register_unstructure_hook(Element, _node_to_json)
    converter.register_structure_hook(Element, lambda data, _: _node_from_json(data))
    def unstructure_content(content: Content) -> Any:
        if content is None or isinstance(content, str):
            return content
        return [converter.unstructure(item, ContentItem) for item in content]

    def structure_content(data: Any, _: object) -> Content:
        if data is None or isinstance(data, str):
            return data
        return tuple(converter.structure(item, ContentItem) for item in data)  # type: ignore[arg-type]  # ContentItem: a union alias, which cattrs structures

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
    """``ir_to_json(prompt)`` as indented JSON text."""
    return json.dumps(ir_to_json(prompt), indent=2, ensure_ascii=False)


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
