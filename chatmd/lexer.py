"""The ChatMD lexer: text to START / SELF / END / TEXT tokens with positions.

It follows the reference's rules exactly (spec §1.4): RAW blocks, comments,
tag-shaped chunks cut at the first ``>``, unknown tags kept as literal text,
attributes always scanned, and the nested shell vocabulary recognised only
inside structured scopes. Lexical errors are collected and lexing goes on where
it safely can, so that one run reports as much as possible.

Tokens are plain tuples ``(kind, value, attrs, start, end)`` (see :class:`Token`)
produced lazily by :func:`iter_tokens`: the parser consumes them as they come,
which keeps the frontend within a small factor of a C XML parser.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

from chatcommon.diagnostics import Diagnostic, Severity
from chatcommon.sources import SourceFile, Span
from chatmd.ast import Attribute, Element
from chatmd.element_runs import NO_SCOPE, SIMPLE_OPEN, AttributeCache, read_run
from chatmd.vocabulary import CORE_TAGS, READ_FILE_TOOL_NAMES, SHELL_TAGS

START = 0
SELF = 1
END = 2
TEXT = 3

#: A run of whole elements that hold just text, in one token (see :func:`iter_tokens`).
ELEMENTS = 4

KIND_NAMES = ("START", "SELF", "END", "TEXT", "ELEMENTS")

PHASE = "lex"


class Token(NamedTuple):
    """One token: ``value`` is the tag name (START/SELF/END) or the text (TEXT).

    ``start``/``end`` are character offsets of the token's source (for a RAW
    block, from ``RAW|`` to past ``|RAW``); ``attrs`` is empty except for
    START and SELF. :func:`iter_tokens` yields plain tuples of this shape.
    """

    kind: int
    value: str
    attrs: tuple[Attribute, ...]
    start: int
    end: int


# The first alternative that matches at a position decides (spec §1.4 rule order).
_MASTER = re.compile(
    r"(?P<raw>[ \t\r\n]*RAW\|)"          # rule 1: blanks (dropped) then a RAW opener
    r"|(?P<text>[^<|]+)"                 # rules 2 and 8: a text run (may end with RAW|)
    r"|(?P<comment><!--)"                # rule 3
    r"|<(?P<tag>[A-Za-z_][^>]*)>"        # rule 4: tag-shaped chunk, cut at the first >
    r"|</(?P<end>[A-Za-z_][^>]*)>"       # rule 5: end tag
    r"|(?P<lt><+)"                       # rule 6
    r"|(?P<bar>\|)",                     # rule 7
    re.S,
)
_NAME_END = re.compile(r"[ \t\n\r\x0b\x0c]")
_SKIP_WS = re.compile(r"[ \t\n\r\x0b\x0c]*")
# One well-formed attribute: name, optionally = and a closed quoted or unquoted value.
# A quote preceded by a backslash does not close a value (the backslash is kept).
_ATTRIBUTE = re.compile(
    r"[ \t\n\r\x0b\x0c]*([A-Za-z0-9_:\-]+)"
    r"(?:[ \t\n\r\x0b\x0c]*=[ \t\n\r\x0b\x0c]*"
    r"(?:\"(.*?)(?<!\\)\"|'(.*?)(?<!\\)'|([^ \t\n\r\x0b\x0c\"'][^ \t\n\r\x0b\x0c]*)))?",
    re.S,
)

_ENTITIES = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'"}


def decode_entities(value: str) -> str:
    """Decode the five named entities the way the reference does (spec §1.6).

    After each ``&`` the text up to the next ``;`` is looked up; anything but
    the five names is kept verbatim. No numeric entities, no double decoding.
    """
    if "&" not in value:
        return value
    out: list[str] = []
    i = 0
    n = len(value)
    while i < n:
        amp = value.find("&", i)
        if amp < 0:
            out.append(value[i:])
            break
        semi = value.find(";", amp + 1)
        if semi < 0:
            out.append(value[i:])
            break
        out.append(value[i:amp])
        replacement = _ENTITIES.get(value[amp + 1 : semi])
        out.append(replacement if replacement is not None else value[amp : semi + 1])
        i = semi + 1
    return "".join(out)


class AttributeScan(NamedTuple):
    """The attributes of one tag, where each starts and ends, and the unclosed quote if any."""

    attributes: tuple[Attribute, ...]
    spans: tuple[tuple[int, int], ...]
    unterminated: tuple[str, str] | None  # (attribute name, quote character)



def scan_attributes(text: str, p: int, end: int) -> AttributeScan:
    """Scan the attribute text ``text[p:end]`` (spec §1.6)."""
    attributes: list[Attribute] = []
    spans: list[tuple[int, int]] = []
    while p < end:
        match = _ATTRIBUTE.match(text, p, end)
        if match is None:
            p = _SKIP_WS.match(text, p, end).end() + 1  # type: ignore[union-attr]  # _SKIP_WS matches ''; never None
            continue  # a stray '/', '"', '=' ... is ignored
        name = match.group(1)
        last = match.lastindex
        if last == 1:
            after = _SKIP_WS.match(text, match.end(), end).end()  # type: ignore[union-attr]  # as above
            if after < end and text[after] == "=":
                # a value follows but is not a closed quoted or unquoted value
                value_start = _SKIP_WS.match(text, after + 1, end).end()  # type: ignore[union-attr]  # as above
                spans.append((match.start(1), end))
                if value_start >= end:  # `name=` at the very end: a flag
                    attributes.append(Attribute(name, None))
                    break
                quote = text[value_start]
                attributes.append(Attribute(name, decode_entities(text[value_start + 1 : end])))
                return AttributeScan(tuple(attributes), tuple(spans), (name, quote))
            attributes.append(Attribute(name, None))
            spans.append((match.start(1), match.end(1)))
        elif last == 4:
            attributes.append(Attribute(name, match.group(4)))
            spans.append((match.start(1), match.end()))
        else:
            value = match.group(last)  # type: ignore[arg-type]  # lastindex: a group matched
            attributes.append(Attribute(name, decode_entities(value) if "&" in value else value))
            spans.append((match.start(1), match.end()))
        p = match.end()
    return AttributeScan(tuple(attributes), tuple(spans), None)


def attribute_spans(element: Element) -> tuple[Span, ...]:
    """The source span of each attribute of ``element`` (same order as ``element.attrs``).

    Attribute positions are only needed for diagnostics, so they are worked out
    on demand by scanning the opening tag again.
    """
    span = element.span
    text = span.source.text
    body_end = span.end - (2 if element.self_closing else 1)
    split = _NAME_END.search(text, span.start + 1, body_end)
    if split is None:
        return ()
    scan = scan_attributes(text, split.start() + 1, body_end)
    return tuple(Span(span.source, start, end) for start, end in scan.spans)


def _opens_tool_scope(attributes: tuple[Attribute, ...]) -> bool:
    for attribute in attributes:
        if attribute.name == "type" and attribute.value == "shell":
            return True
        if attribute.name == "name" and attribute.value in READ_FILE_TOOL_NAMES:
            return True
    return False


def iter_tokens(source: SourceFile, diagnostics: list[Diagnostic], *,
                keep_stray_lt: bool = False,
                stray_candidates: list[int] | None = None,
                elements: bool = False) -> Iterator[tuple]:
    """Yield the tokens of ``source`` as ``(kind, value, attrs, start, end)`` tuples.

    Lexical errors are appended to ``diagnostics``.

    With ``elements`` (the parser's fast path for element-dense transcripts),
    elements that hold just text and follow each other outside any structured
    scope come as one ``ELEMENTS`` token ``(ELEMENTS, nodes, blanks_at, start,
    end)`` (:func:`chatmd.element_runs.read_run`): their finished
    :class:`~chatmd.ast.Element` nodes and where the blanks before each begin,
    instead of the START, TEXT and END tokens of each and the TEXT token of
    the blanks before it (``text[blanks_at[k]:nodes[k].span.start]``, when not
    empty). The positions are the same; ``tests/chatmd/test_dense_fast_path.py``
    checks the two readings give the same documents and diagnostics.

    By default the reference's rules apply exactly: an unknown tag-shaped
    chunk runs to the first ``>`` even when it swallows other tags
    (``a<b then c</user>``). The offset of each such chunk that contains
    another ``<`` is appended to ``stray_candidates``. With ``keep_stray_lt``
    (DECISIONS 8, used only for documents the reference rejects) such a chunk
    is not a tag: its ``<`` and the text up to the next ``<`` are literal text,
    lexing resumes at that ``<``, and a ``chatmd.stray_less_than`` warning says so.
    """
    text = source.text
    n = len(text)
    match_at = _MASTER.match
    find = text.find
    depth = 0
    scopes: list[int] = []
    attribute_cache: AttributeCache = {}

    def error(start: int, end: int, code: str, message: str, hint: str | None = None) -> None:
        diagnostics.append(Diagnostic.at(Span(source, start, end), code, message,
                                         phase=PHASE, hint=hint))

    def stray(start: int) -> int:
        """Warn about the stray ``<`` at ``start``; the offset of the next ``<`` (where to resume)."""
        resume = find("<", start + 1)
        shown = text[start:min(resume, start + 40)].rstrip()
        diagnostics.append(Diagnostic.at(
            Span(source, start, start + 1), "chatmd.stray_less_than",
            f"`{shown}` is not a ChatMD tag: kept as literal text",
            phase=PHASE, severity=Severity.WARNING,
            hint="ochat rejects this document (there the `<` starts a tag-like chunk that "
            "swallows what follows); write `< ` with a space or put the text in RAW| ... |RAW"))
        return resume

    body: str  # a tag's inside
    attributes: tuple[Attribute, ...]
    run_at = SIMPLE_OPEN.match
    i = 0
    while i < n:
        if elements and not scopes:
            first = run_at(text, i)  # (a cheap test before the call: no run starts at most tokens)
            if first is not None and first.group(2) in NO_SCOPE:
                run, blanks_at, after = read_run(source, i, attribute_cache, first)
                if run:
                    yield (ELEMENTS, run, blanks_at, i, after)
                    i = after
                    continue
        m = match_at(text, i)
        assert m is not None  # the alternatives cover every character
        kind = m.lastgroup
        j = m.end()
        if kind == "text":
            if j < n and text[j] == "|" and j - i >= 3 and text.startswith("RAW", j - 3):
                if j - 3 > i:
                    yield (TEXT, text[i : j - 3], (), i, j - 3)
                opener = j - 3
            else:
                yield (TEXT, m.group("text"), (), i, j)
                i = j
                continue
        elif kind == "raw":
            opener = j - 4
        elif kind == "tag":
            body = m.group("tag")
            self_closing = len(body) >= 2 and body[-1] == "/"
            if self_closing:
                body = body[:-1]
            split = _NAME_END.search(body)
            name = body if split is None else body[: split.start()]
            if "<" in body and not (name in CORE_TAGS or (scopes and name in SHELL_TAGS)):
                if keep_stray_lt:
                    resume = stray(i)
                    yield (TEXT, text[i:resume], (), i, resume)
                    i = resume
                    continue
                if stray_candidates is not None:
                    stray_candidates.append(i)
            if split is None:
                attributes = ()
            else:
                attribute_text = body[split.start() + 1 :]
                cached = attribute_cache.get(attribute_text)
                if cached is None:
                    scan = scan_attributes(text, i + 1 + split.start() + 1,
                                           j - (2 if self_closing else 1))
                    cached = scan.attributes
                    if scan.unterminated is None:
                        attribute_cache[attribute_text] = cached
                    else:
                        attr_name, quote = scan.unterminated
                        error(i, i + 1 + len(name), "chatmd.unterminated_attribute",
                              f"quoted value of attribute `{attr_name}` is never closed: "
                              f"expected a closing {quote} before `>`",
                              hint=f"close the value with {quote}; a literal `>` inside a value "
                              "is written &gt;")
                attributes = cached
            if name in CORE_TAGS or (scopes and name in SHELL_TAGS):
                if self_closing:
                    yield (SELF, name, attributes, i, j)
                else:
                    depth += 1
                    if name == "shell_access" or (name == "tool" and _opens_tool_scope(attributes)):
                        scopes.append(depth)
                    yield (START, name, attributes, i, j)
            else:
                yield (TEXT, m.group(), (), i, j)
            i = j
            continue
        elif kind == "end":
            name = m.group("end")
            known = name in CORE_TAGS or (scopes and name in SHELL_TAGS)
            if not known and "<" in name:
                if keep_stray_lt:
                    resume = stray(i)
                    yield (TEXT, text[i:resume], (), i, resume)
                    i = resume
                    continue
                if stray_candidates is not None:
                    stray_candidates.append(i)
            if known:
                if scopes and scopes[-1] == depth:
                    scopes.pop()
                depth = depth - 1 if depth > 0 else 0
                yield (END, name, (), i, j)
            else:
                yield (TEXT, m.group(), (), i, j)
            i = j
            continue
        elif kind == "comment":
            close = find("-->", i + 4)
            if close < 0:
                error(i, i + 4, "chatmd.unterminated_comment",
                      "comment is never closed: expected `-->` before the end of the file")
                return
            i = close + 3
            continue
        else:  # "lt" or "bar"
            yield (TEXT, m.group(), (), i, j)
            i = j
            continue
        # a RAW block whose `RAW|` starts at `opener`
        body_start = opener + 4
        close = find("|RAW", body_start)
        if close < 0:
            error(opener, body_start, "chatmd.unterminated_raw",
                  "RAW block is never closed: expected `|RAW` before the end of the file",
                  hint="close the block with |RAW")
            return
        yield (TEXT, text[body_start:close], (), opener, close + 4)
        i = close + 4


def tokenize(source: SourceFile) -> tuple[list[Token], list[Diagnostic]]:
    """All tokens of ``source`` (as :class:`Token`) and any lexical error diagnostics."""
    diagnostics: list[Diagnostic] = []
    tokens = [Token(*token) for token in iter_tokens(source, diagnostics)]
    return tokens, diagnostics


__all__ = [
    "ELEMENTS",
    "END",
    "SELF",
    "START",
    "TEXT",
    "AttributeScan",
    "Token",
    "attribute_spans",
    "decode_entities",
    "iter_tokens",
    "scan_attributes",
    "tokenize",
]
