"""Rendering syntax back to text where the language says markup is kept as text.

Three places need it: an ``<import>`` that is not expanded (spec §3.1, shown
to the model as ``<import src="x"/>``), a ``<summary>`` whose children include
elements, and a ``<script>`` body (recognised child elements rendered back to
tag form). Attribute values are re-emitted decoded, as the reference does.
"""

from __future__ import annotations

from collections.abc import Iterable

from chatmd.ast import Element, Node, Text


def render_import(element: Element) -> str:
    """The literal text of an unexpanded import: ``<import src="x"/>``, flags as ``name=""``."""
    if not element.attrs:
        return "<import />"
    attributes = "".join(f' {a.name}="{"" if a.value is None else a.value}"'
                         for a in element.attrs)
    return f"<import{attributes}/>"


def render_element(element: Element) -> str:
    """``element`` back in tag form, children included."""
    attributes = "".join(f" {a.name}" if a.value is None else f' {a.name}="{a.value}"'
                         for a in element.attrs)
    if element.self_closing:
        return f"<{element.tag}{attributes}/>"
    return f"<{element.tag}{attributes}>{render_nodes(element.children)}</{element.tag}>"


def render_nodes(nodes: Iterable[Node]) -> str:
    """Text children verbatim, element children in tag form, concatenated."""
    return "".join(node.text if isinstance(node, Text) else render_element(node) for node in nodes)
