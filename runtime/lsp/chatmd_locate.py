"""What is under the cursor in a ChatMD document: a tag name, an attribute, a value.

:func:`locate` finds the element whose opening or closing tag holds an offset
and which part of it (tag name, attribute name, attribute value);
:func:`enclosing` gives the elements whose body holds the offset (outermost
first), which is what completion needs to know which tags are allowed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from chatmd.ast import Document, Element
from chatmd.lexer import attribute_spans

__all__ = ["Spot", "enclosing", "locate", "walk"]


class Spot(NamedTuple):
    """A part of a tag: ``part`` is ``tag``, ``attribute`` or ``value``."""

    element: Element
    part: str
    attribute: str | None
    start: int
    end: int


def walk(document: Document) -> Iterator[Element]:
    """Every element of ``document``, in document order."""
    stack = [node for node in reversed(document.nodes) if isinstance(node, Element)]
    while stack:
        element = stack.pop()
        yield element
        stack.extend(child for child in reversed(element.children) if isinstance(child, Element))


def _in_tag(element: Element, offset: int) -> Spot | None:
    span = element.span
    name_start = span.start + 1
    if name_start <= offset <= name_start + len(element.tag):
        return Spot(element, "tag", None, name_start, name_start + len(element.tag))
    for attribute, attribute_span in zip(element.attrs, attribute_spans(element), strict=False):
        if attribute_span.start <= offset <= attribute_span.end:
            name_end = attribute_span.start + len(attribute.name)
            if offset <= name_end:
                return Spot(element, "attribute", attribute.name, attribute_span.start, name_end)
            return Spot(element, "value", attribute.name, name_end, attribute_span.end)
    return None


def locate(document: Document, offset: int) -> Spot | None:
    """The tag part at ``offset``, or None (text, comments, outside any tag)."""
    for element in walk(document):
        span = element.span
        if span.start <= offset < span.end:
            return _in_tag(element, offset)
        end_span = element.end_span
        if end_span is not None and end_span.start <= offset < end_span.end:
            name_start = end_span.start + 2
            return Spot(element, "tag", None, name_start, name_start + len(element.tag))
    return None


def enclosing(document: Document, offset: int) -> list[Element]:
    """The elements whose body holds ``offset``, outermost first."""
    chain: list[Element] = []
    nodes = document.nodes
    while True:
        for node in nodes:
            if not isinstance(node, Element) or node.end_span is None:
                continue
            if node.span.end <= offset <= node.end_span.start:
                chain.append(node)
                nodes = node.children
                break
        else:
            return chain
