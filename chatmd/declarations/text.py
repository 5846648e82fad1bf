"""Rendering syntax back to text where the language says markup is kept as text.

Three places need it: an ``<import>`` that is not expanded (spec §3.1, shown
to the model as ``<import src="x"/>``), a ``<summary>`` whose children include
elements, and a ``<script>`` body (recognised child elements rendered back to
tag form). Attribute values are re-emitted decoded, as the reference does.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from chatmd.ast import Element, Node, Text


def render_import(element: Element) -> str:
    """The literal text of an unexpanded import: ``<import src="x"/>``, flags as ``name=""``."""
    if not element.attrs:
        return "<import />"
    attributes = "".join(f' {a.name}="{"" if a.value is None else a.value}"'
                         for a in element.attrs)
    return f"<import{attributes}/>"


def _opening(element: Element) -> str:
    attributes = "".join(f" {a.name}" if a.value is None else f' {a.name}="{a.value}"'
                         for a in element.attrs)
    return f"<{element.tag}{attributes}/>" if element.self_closing else \
        f"<{element.tag}{attributes}>"


def render_element(element: Element) -> str:
    """``element`` back in tag form, children included."""
    return render_nodes((element,))


def render_nodes(nodes: Iterable[Node]) -> str:
    """Text children verbatim, element children in tag form, concatenated.

    Walked with an explicit stack: elements may nest as deep as the parser allows.
    """
    out: list[str] = []
    stack: list[Iterator[Node]] = [iter(nodes)]
    closings: list[str] = []
    while stack:
        node = next(stack[-1], None)
        if node is None:
            stack.pop()
            if closings:
                out.append(closings.pop())
            continue
        if isinstance(node, Text):
            out.append(node.text)
            continue
        out.append(_opening(node))
        if not node.self_closing:
            stack.append(iter(node.children))
            closings.append(f"</{node.tag}>")
    return "".join(out)
