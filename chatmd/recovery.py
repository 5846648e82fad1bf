"""Which parts of a document with parse errors can still be lowered and checked.

The parser recovers from errors (a mismatched or unterminated tag, a bad
attribute) and still returns a document. A top-level element whose source
range -- its opening tag through its closing tag -- contains no parse error
was read exactly as written, so its declaration diagnostics (an invalid
``<config>`` value, a bad ``<tool>``) are independent of the broken region and
are worth reporting with the parse errors (issue 2: "all errors in a file are
reported, not just the first, where the parser can recover").
:func:`intact_part` keeps those elements and drops everything an error
touches, and says which element kinds were dropped, so that checks which
relate elements to each other (a tool naming a runtime, a moderator binding)
run only when nothing they could refer to was lost: no cascades from the
broken region.
"""

from __future__ import annotations

import attrs

from chatcommon.records import evolve
from chatmd.ast import Document, Element, Node
from chatmd.parser import ParseResult
from chatmd.vocabulary import MESSAGE_TAGS

#: Top-level elements that no other element refers to: losing one cannot cause a cascade.
_UNREFERENCED_TAGS = MESSAGE_TAGS | {"reasoning", "tool_call", "tool_response", "config",
                                     "doc", "img", "agent"}


@attrs.frozen
class IntactPart:
    """The elements of a document that no parse error touched."""

    document: Document
    #: True when every dropped element is one nothing else refers to (messages, ``<config>``).
    self_contained: bool


def _end_offset(node: Node, end_of_file: int) -> int:
    """Where a top-level node's source range ends: its closing tag, or for an element the
    parser closed at the end of the file (never closed, or cut off by an unterminated
    comment or RAW block) the end of the file -- everything after its opening tag is in it."""
    if isinstance(node, Element):
        if node.end_span is not None:
            return node.end_span.end
        if not node.self_closing:
            return end_of_file
    return node.span.end


def intact_part(result: ParseResult) -> IntactPart:
    """The top-level nodes of ``result`` whose source ranges hold no parse error."""
    document = result.document
    source = document.source
    errors = [((d.line, d.column), (d.end_line or d.line, d.end_column or d.column))
              for d in result.diagnostics if d.is_error and d.file == source.name]
    kept = []
    self_contained = True
    for node in document.nodes:
        start = source.position(node.span.start)
        end = source.position(_end_offset(node, len(source.text)))
        if any(error_start <= end and error_end >= start for error_start, error_end in errors):
            if isinstance(node, Element):
                self_contained = self_contained and node.tag in _UNREFERENCED_TAGS
            continue
        kept.append(node)
    return IntactPart(evolve(document, nodes=tuple(kept)), self_contained)
