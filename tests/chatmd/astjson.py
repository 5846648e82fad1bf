"""The conformance corpus's JSON form of a ChatMD syntax tree."""

from __future__ import annotations

from typing import Any

from chatmd.ast import Element, Node, Text


def node_to_json(node: Node, *, drop_blank_text: bool = False) -> dict[str, Any]:
    """``{"text": ...}`` or ``{"tag", "attrs": [[name, value|None]...], "children"}``."""
    if isinstance(node, Text):
        return {"text": node.text}
    assert isinstance(node, Element)
    children = [
        node_to_json(child, drop_blank_text=drop_blank_text)
        for child in node.children
        if not (drop_blank_text and isinstance(child, Text) and not child.text.strip())
    ]
    return {"tag": node.tag, "attrs": [[a.name, a.value] for a in node.attrs],
            "children": children}
