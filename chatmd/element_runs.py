"""Runs of text-only elements read at once: the lexer's fast path for element-dense transcripts.

A transcript is mostly elements that hold just text: ``<user>...</user>``,
``<tool_call ...>RAW|...|RAW</tool_call>``. :func:`read_run` reads as many of
them as follow each other from an offset and builds their syntax nodes
directly (:class:`~chatmd.ast.Element` with one :class:`~chatmd.ast.Text`
child, or none), where the general path of :func:`chatmd.lexer.iter_tokens`
would produce a START, a TEXT and an END token for each, and a TEXT token for
the blanks before it, for the parser to assemble.

An element qualifies when it is a known tag that opens no structured scope
(not ``tool`` or ``shell_access``) and is not ``import``, its attributes are simple ``name="value"``
pairs (values without ``\\``, ``&``, ``"``, ``<``, ``>``), and its content is
one text run (rules 2 and 8 of spec §1.4: no ``<`` or ``|``; maybe empty) or
one RAW block (blanks before it dropped, rule 1), directly followed by its own
closing tag. Anything else ends the run, and the general path reads on from
there. Nodes, positions and spans are exactly those of the general path;
``tests/chatmd/test_dense_fast_path.py`` compares the two readings.

The bodies are found with ``str.find``: the regular expression engine is only
used on the opening tag, never stepped through a body character by character.
"""

from __future__ import annotations

import re

from chatcommon.records import fast_constructor
from chatcommon.sources import SourceFile, Span
from chatmd.ast import Attribute, Element, Node, Text, new_element
from chatmd.vocabulary import CORE_TAGS

#: Elements that never open a structured scope (the shell vocabulary is not read in them),
#: but ``import``: the parser notes each ``<import>`` it reads (``ParseResult.import_tags``).
NO_SCOPE = frozenset(CORE_TAGS) - {"tool", "shell_access", "import"}
#: Each of them -> itself (the one string every element of that tag then holds, rather
#: than a copy per element) and its closing tag.
_TAGS = {name: (name, f"</{name}>") for name in NO_SCOPE}

#: Blanks, then an opening tag whose attributes are simple `name="value"` pairs: where a
#: run may start (when the tag is in :data:`NO_SCOPE`).
#: (Possessive quantifiers: no part ever needs to give characters back -- blanks, names,
#: ``=``, values and quotes are disjoint classes -- and the engine then keeps no
#: backtracking state: a fifth less work per opening tag.)
SIMPLE_OPEN = re.compile(
    r"([ \t\r\n]*+)<([A-Za-z_][A-Za-z0-9_]*+)"
    r"((?:[ \t\n\r\x0b\x0c]++[A-Za-z0-9_:\-]++=\"[^\"\\\\&<>]*+\")*+)[ \t\n\r\x0b\x0c]*+>")
# Blanks and a RAW opener (rule 1), matched only up to the first `|` after an opening tag.
_RAW_OPENER = re.compile(r"[ \t\r\n]*RAW\|")

_new_attribute = fast_constructor(Attribute)
_new_object = object.__new__
_new_element = new_element
_new_text = fast_constructor(Text)

#: Attribute texts already read (a whole text, or ``(" name=", value)`` for one attribute as
#: written) -> their attributes; filled as they are read. An attribute written alike on many
#: elements (``tool_call_id="call_7"`` on a call and on its response) is made once.
AttributeCache = dict[str | tuple[str, str], tuple[Attribute, ...]]


def _attribute(written: str, value: str, cache: AttributeCache) -> tuple[Attribute, ...]:
    """``(Attribute,)`` for ``written`` (blanks, the name and ``=``) and ``value``."""
    key = (written, value)
    found = cache.get(key)
    if found is None:
        found = cache[key] = (_new_attribute(written.lstrip()[:-1], value),)
    return found


def read_run(source: SourceFile, i: int, attribute_cache: AttributeCache,
             first: re.Match[str] | None = None) -> tuple[list[Element], list[int], int]:
    """The text-only elements that follow each other from offset ``i`` of ``source``.

    Returns the elements, the offset where the blanks before each begin (the
    element itself begins where they end: ``element.span.start``), and the
    offset after the last one (``i`` when none was read). ``attribute_cache``
    holds the attributes already read (:data:`AttributeCache`). ``first`` is :data:`SIMPLE_OPEN`'s match at ``i``, if the caller
    made it (its tag in :data:`NO_SCOPE`).
    """
    text = source.text
    n = len(text)
    find = text.find
    startswith = text.startswith
    simple_at = SIMPLE_OPEN.match
    raw_at = _RAW_OPENER.match
    tags = _TAGS
    new = _new_object  # spans are made inline: `Span(...)` would run a frame per span
    elements: list[Element] = []
    blanks_at: list[int] = []
    children: tuple[Node, ...]
    simple = first
    while True:
        if simple is None:
            simple = simple_at(text, i)
            if simple is None:
                break
        blanks, name, attribute_text = simple.groups()
        known = tags.get(name)
        if known is None:
            break
        name, closing = known
        after = simple.end()
        lt = find("<", after)
        if lt < 0:
            lt = n
        bar = find("|", after, lt)
        if bar < 0:  # one text run up to the `<` (none when the element is empty)
            if not startswith(closing, lt):
                break
            end = lt
            if lt > after:
                span = new(Span)
                span.source, span.start, span.end = source, after, lt
                children = (_new_text(text[after:lt], span),)
            else:
                children = ()
        else:  # blanks (dropped), then RAW| body |RAW
            if raw_at(text, after, bar + 1) is None:
                break
            close = find("|RAW", bar + 1)
            if close < 0 or not startswith(closing, close + 4):
                break
            end = close + 4
            span = new(Span)
            span.source, span.start, span.end = source, bar - 3, end
            children = (_new_text(text[bar + 1:close], span),)
        attributes = attribute_cache.get(attribute_text)
        if attributes is None:  # blanks, name, =", value, " ...: split at the quotes
            parts = attribute_text.split('"')
            if len(parts) == 3:  # (one or two attributes: the common cases, unrolled)
                attributes = _attribute(parts[0], parts[1], attribute_cache)
            elif len(parts) == 5:
                attributes = (_attribute(parts[0], parts[1], attribute_cache)
                              + _attribute(parts[2], parts[3], attribute_cache))
            else:
                attributes = tuple([_new_attribute(parts[k].lstrip()[:-1], parts[k + 1])
                                    for k in range(0, len(parts) - 1, 2)])
            attribute_cache[attribute_text] = attributes
        i_next = end + len(closing)
        span = new(Span)
        span.source, span.start, span.end = source, i + len(blanks), after
        end_span = new(Span)
        end_span.source, end_span.start, end_span.end = source, end, i_next
        elements.append(_new_element(name, attributes, children, span, end_span, False))
        blanks_at.append(i)
        i = i_next
        simple = None
    return elements, blanks_at, i
