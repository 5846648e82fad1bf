"""The ChatMD syntax tree: elements and text nodes with source spans.

This is the parser's output and the input of import expansion and declaration
lowering. It records the document exactly as written (attributes in order,
duplicates kept, text verbatim); it gives no meaning to any element.
Spans do not take part in equality, so two trees parsed from differently laid
out sources compare by content alone. The classes are frozen and slotted, with
the shared ``repr``/``==``/``hash`` of :mod:`chatcommon.records`.
"""

from __future__ import annotations

from collections.abc import Iterator

from attrs import field

from chatcommon.records import SharedMethods, frozen_record, lean_record, record_builder
from chatcommon.sources import SourceFile, Span


@frozen_record
class Attribute(SharedMethods):
    """``name="value"`` (``value`` is None for a flag such as ``local``); entities decoded.

    Attributes carry no position: :func:`chatmd.lexer.attribute_spans` finds
    them on demand from the element's opening tag.
    """

    name: str
    value: str | None


@frozen_record
class Text(SharedMethods):
    """A run of literal text (RAW block contents included), merged across adjacent tokens."""

    text: str
    span: Span = field(eq=False, repr=False)


@lean_record
class Element(SharedMethods):
    """A recognised ChatMD element.

    ``span`` covers the opening (or self-closing) tag; ``end_span`` the closing
    tag, or None for a self-closing element.
    """

    tag: str
    attrs: tuple[Attribute, ...]
    children: tuple[Node, ...]
    span: Span = field(eq=False, repr=False)
    end_span: Span | None = field(default=None, eq=False, repr=False)
    self_closing: bool = field(default=False, eq=False)

    def get(self, name: str) -> str | None:
        """The value of the last occurrence of ``name`` ('' for a flag), or None if absent."""
        for attribute in reversed(self.attrs):
            if attribute.name == name:
                return "" if attribute.value is None else attribute.value
        return None

    def get_first(self, name: str) -> str | None:
        """Like :meth:`get`, but the first occurrence wins."""
        for attribute in self.attrs:
            if attribute.name == name:
                return "" if attribute.value is None else attribute.value
        return None

    def has(self, name: str) -> bool:
        return any(attribute.name == name for attribute in self.attrs)

    def attribute(self, name: str) -> Attribute | None:
        """The last :class:`Attribute` called ``name``, or None."""
        for attribute in reversed(self.attrs):
            if attribute.name == name:
                return attribute
        return None

    def elements(self) -> Iterator[Element]:
        """The element children, in order."""
        for child in self.children:
            if isinstance(child, Element):
                yield child

    @property
    def full_span(self) -> Span:
        """From the opening tag's ``<`` to the end of the closing tag."""
        return self.span.to(self.end_span) if self.end_span is not None else self.span


class _ElementBuilder(SharedMethods):
    """``_ElementBuilder(*fields)`` is ``Element(*fields)``, made cheaper: every field
    positionally (:func:`chatcommon.records.record_builder`); the parsers' hot path."""

    __slots__ = ("tag", "attrs", "children", "span", "end_span", "self_closing")

    def __init__(self, tag: str, attrs: tuple[Attribute, ...], children: tuple[Node, ...],
                 span: Span, end_span: Span | None, self_closing: bool) -> None:
        self.tag = tag
        self.attrs = attrs
        self.children = children
        self.span = span
        self.end_span = end_span
        self.self_closing = self_closing
        self.__class__ = Element  # type: ignore[assignment]  # the record it builds (same layout)


#: ``new_element(*fields)`` is ``Element(*fields)``, made cheaper (:func:`chatcommon.records.record_builder`).
new_element = record_builder(Element, _ElementBuilder)


Node = Element | Text


@frozen_record
class Document(SharedMethods):
    """A parsed file: its top-level nodes (blank top-level text already dropped)."""

    nodes: tuple[Node, ...]
    source: SourceFile = field(eq=False, repr=False)
