"""The ChatMD parser: tokens to a :class:`~chatmd.ast.Document`, with the top-level rule.

Grammar (spec §2.1)::

    document := { blank_TEXT | element } EOF
    element  := SELF | START children END
    children := { text_run | element }

Adjacent TEXT tokens inside an element merge into one text node. In *document*
mode non-blank top-level text is an error; in *content* mode (a file imported
into a message body) the top level is an element's children and keeps its text.

The parser recovers from its own errors (stray text, mismatched or unexpected
closing tags) so that one run reports every problem it can see; the returned
document is then best-effort and must not be used for anything but reporting.
"""

from __future__ import annotations

import attrs

from chatcommon.allocation import gc_paused
from chatcommon.diagnostics import Diagnostic, DiagnosticError, Related
from chatcommon.records import fast_constructor
from chatcommon.sources import SourceFile, Span
from chatmd.ast import Document, Element, Node, Text, new_element
from chatmd.lexer import ELEMENTS, SELF, START, TEXT, iter_tokens
from chatmd.vocabulary import WS

#: One per element and text run: made without the generated __init__.
_new_element = new_element
_new_text = fast_constructor(Text)


PHASE = "parse"

#: Elements may nest at most this deep (bounds every recursive walk of the tree).
MAX_NESTING = 1000
#: The parser stack's length (the root counts) when an element one level past the limit opens.
_CROSSING = MAX_NESTING + 2

_MAX_SHOWN_TEXT = 60
_TRUNCATING = frozenset({"chatmd.unterminated_raw", "chatmd.unterminated_comment"})


@attrs.frozen
class ParseResult:
    """A document and the diagnostics found while lexing and parsing it.

    ``depth`` is the deepest element nesting in the document (a top-level
    element is at depth 1; a self-closing child of it at depth 2).
    """

    document: Document
    diagnostics: tuple[Diagnostic, ...]
    depth: int = 0
    #: False when no ``<import>`` element was read: import expansion has nothing to do
    #: (:func:`chatmd.imports.may_import`). True when not known.
    import_tags: bool = True

    @property
    def ok(self) -> bool:
        return not any(d.is_error for d in self.diagnostics)


_TokenTuple = tuple  # (kind, value, attrs, start, end), see chatmd.lexer.Token


class _Open:
    """An element whose closing tag has not been seen yet."""

    __slots__ = ("token", "children", "texts", "text_start", "text_end")

    def __init__(self, token: _TokenTuple) -> None:
        self.token = token
        self.children: list[Node] = []
        self.texts: list[str] = []
        self.text_start = 0
        self.text_end = 0


def _shorten(text: str) -> str:
    text = text.strip(WS)
    return text if len(text) <= _MAX_SHOWN_TEXT else text[: _MAX_SHOWN_TEXT - 3] + "..."


class Parser:
    def __init__(self, source: SourceFile, *, content_mode: bool,
                 keep_stray_lt: bool = False, whole_elements: bool = True) -> None:
        self.source = source
        #: read elements that hold just text as one token (the lexer's fast path)
        self.whole_elements = whole_elements
        self.content_mode = content_mode
        self.keep_stray_lt = keep_stray_lt
        #: offsets of unknown tag-like chunks that contain another `<` (DECISIONS 8)
        self.stray_candidates: list[int] = []
        #: one more than the deepest nesting seen so far (the stack includes the root frame)
        self.depth = 1
        #: an ``<import>`` element was read (runs of whole elements never hold one)
        self.import_tags = False
        self.lex_diagnostics: list[Diagnostic] = []
        self.diagnostics: list[Diagnostic] = []
        # the line of the last top-level text reported, so that a run of text
        # tokens on one line (words around an unknown tag) is reported once
        self._reported_line = 0
        # the top-level element under which nesting too deep was last reported
        self._too_deep_under: _Open | None = None

    def _error(self, start: int, end: int, code: str, message: str, *,
               hint: str | None = None, related: tuple[Related, ...] = ()) -> None:
        self.diagnostics.append(Diagnostic.at(Span(self.source, start, end), code, message,
                                              phase=PHASE, hint=hint, related=related))

    def _flush_text(self, frame: _Open) -> None:
        if frame.texts:
            texts = frame.texts
            joined = texts[0] if len(texts) == 1 else "".join(texts)
            frame.children.append(_new_text(joined, Span(self.source, frame.text_start, frame.text_end)))
            frame.texts = []

    def run(self) -> Document:
        source = self.source
        root = _Open((START, "", (), 0, 0))
        stack: list[_Open] = [root]
        top = root
        content_mode = self.content_mode
        for token in iter_tokens(source, self.lex_diagnostics, keep_stray_lt=self.keep_stray_lt,
                                 stray_candidates=self.stray_candidates,
                                 elements=self.whole_elements):
            kind = token[0]
            if kind == TEXT:
                if top is root and not content_mode:
                    self._top_level_text(token)
                    continue
                if not top.texts:
                    top.text_start = token[3]
                top.texts.append(token[1])
                top.text_end = token[4]
                continue
            if kind == ELEMENTS:  # whole elements that hold just text (chatmd.element_runs)
                self._reported_line = 0
                run = token[1]
                if len(stack) >= self.depth or len(stack) == _CROSSING - 1:
                    first = run[0].span
                    self._deeper(len(stack) + 1, first.start, first.end, stack)
                if top is root and not content_mode:  # (blank top-level text is dropped)
                    top.children.extend(run)
                else:
                    self._run_in_body(top, run, token[2])
                continue
            self._reported_line = 0
            if token[1] == "import":
                self.import_tags = True
            if kind == START:
                if top.texts:
                    self._flush_text(top)
                top = _Open(token)
                stack.append(top)
                if len(stack) > self.depth or len(stack) == _CROSSING:
                    self._deeper(len(stack), token[3], token[4], stack)
            elif kind == SELF:
                if len(stack) >= self.depth or len(stack) == _CROSSING - 1:
                    self._deeper(len(stack) + 1, token[3], token[4], stack)
                if top.texts:
                    self._flush_text(top)
                top.children.append(Element(token[1], token[2], (),
                                            Span(source, token[3], token[4]), None, True))
            else:  # END
                if top is root:
                    self._error(token[3], token[4], "chatmd.unexpected_close",
                                f"closing tag </{token[1]}> has no matching opening tag",
                                hint="remove it, or add the opening tag it closes")
                    continue
                if token[1] != top.token[1]:
                    self._mismatch(top.token, token)
                    # recover: close up to an enclosing element of that name, else
                    # take the tag as a misspelt close of the innermost element
                    if any(frame.token[1] == token[1] for frame in stack[1:-1]):
                        while stack[-1].token[1] != token[1]:
                            self._close(stack, None)
                self._close(stack, token)
                top = stack[-1]
        # an unterminated comment or RAW block swallowed the rest of the file:
        # the elements it left open are not worth a second report
        truncated = any(d.code in _TRUNCATING for d in self.lex_diagnostics)
        while len(stack) > 1:
            if not truncated:
                self._unclosed(stack[-1].token)
            self._close(stack, None)
        self._flush_text(root)
        return Document(tuple(root.children), source)

    def _run_in_body(self, top: _Open, run: list[Element], blanks_at: list[int]) -> None:
        """Add a run of whole elements to ``top``, the blanks before each read as the
        TEXT token they would be (not at the document's top level, where they are dropped)."""
        text = self.source.text
        for element, blanks in zip(run, blanks_at, strict=True):
            start = element.span.start
            if blanks < start:
                if not top.texts:
                    top.text_start = blanks
                top.texts.append(text[blanks:start])
                top.text_end = start
            if top.texts:
                self._flush_text(top)
            top.children.append(element)

    def _deeper(self, depth: int, start: int, end: int, stack: list[_Open]) -> None:
        """Record a new deepest nesting (``depth`` counts the root); report (at
        ``start``-``end``), once per top-level element, an element that passes
        :data:`MAX_NESTING` (so that recovery drops every top-level element nesting too
        deeply, not only the first one)."""
        if depth - 1 > MAX_NESTING and stack[1] is not self._too_deep_under:
            self._too_deep_under = stack[1]
            self._error(start, end, "chatmd.nesting_too_deep",
                        f"elements nest deeper than {MAX_NESTING} levels here",
                        hint="ChatMD prompts need only a few levels; deeper nesting is refused "
                        "so that no later phase can run out of stack")
        self.depth = max(self.depth, depth)

    def _close(self, stack: list[_Open], end: _TokenTuple | None) -> None:
        frame = stack.pop()
        if frame.texts:
            self._flush_text(frame)
        _, name, attributes, start, stop = frame.token
        end_span = Span(self.source, end[3], end[4]) if end is not None else None
        stack[-1].children.append(_new_element(name, attributes, tuple(frame.children),
                                          Span(self.source, start, stop), end_span, False))

    def _unclosed(self, opening: _TokenTuple) -> None:
        _, name, _, opening_start, opening_end = opening
        self._error(opening_start, opening_end, "chatmd.unclosed_element",
                    f"element <{name}> is never closed: expected </{name}> before the "
                    "end of the file",
                    hint=f"add </{name}>; a closing tag written `</{name} >` (with a space) "
                    "is not a tag")

    def _mismatch(self, top: _TokenTuple, token: _TokenTuple) -> None:
        """Report a closing tag that does not close the innermost element ``top``."""
        name = top[1]
        opened_at = Related.at(Span(self.source, top[3], top[4]), f"<{name}> opened here")
        self._error(token[3], token[4], "chatmd.mismatched_tag",
                    f"closing tag </{token[1]}> does not match the open element "
                    f"<{name}>: expected </{name}>",
                    hint=f"close <{name}> with </{name}> first",
                    related=(opened_at,))

    def _top_level_text(self, token: _TokenTuple) -> None:
        text = token[1]
        if not text.strip(WS):
            return
        start, end = token[3], token[4]
        if end - start == len(text):  # not a RAW block: point at the first non-blank
            start += len(text) - len(text.lstrip(WS))
        line = self.source.local_position(start)[0]
        if line == self._reported_line:
            return
        self._reported_line = line
        self._error(start, end, "chatmd.top_level_text",
                    f"unexpected text at top level: \"{_shorten(text)}\"; expected a ChatMD "
                    "element such as <user>, <system>, <config/> or <tool/>",
                    hint="wrap message text in <user>...</user>; tags are lowercase and "
                    "unknown tags count as text")


def _run(source: SourceFile, *, content_mode: bool, keep_stray_lt: bool) -> tuple[ParseResult, bool]:
    parser = Parser(source, content_mode=content_mode, keep_stray_lt=keep_stray_lt)
    with gc_paused():
        document = parser.run()
    diagnostics = sorted(parser.lex_diagnostics + parser.diagnostics,
                         key=lambda d: (d.line, d.column))
    return (ParseResult(document, tuple(diagnostics), parser.depth - 1, parser.import_tags),
            bool(parser.stray_candidates))


def parse(source: SourceFile, *, content_mode: bool = False) -> ParseResult:
    """Lex and parse ``source``, collecting every diagnostic found.

    Documents are read by the reference's rules. When that reading fails and
    the document has a stray ``<`` whose tag-like chunk swallowed other markup
    (``if a<b then c</user>``), it is read again with such ``<`` kept as
    literal text (DECISIONS 8), and that reading is the result: it carries a
    ``chatmd.stray_less_than`` warning per stray ``<`` (plus any errors left).
    Documents the reference accepts are never read the second way.
    """
    result, has_strays = _run(source, content_mode=content_mode, keep_stray_lt=False)
    if has_strays and not result.ok:
        result, _ = _run(source, content_mode=content_mode, keep_stray_lt=True)
    return result


def parse_document(source: SourceFile, *, content_mode: bool = False) -> Document:
    """Lex and parse ``source``; raise :class:`DiagnosticError` on any error."""
    result = parse(source, content_mode=content_mode)
    if not result.ok:
        raise DiagnosticError(result.diagnostics)
    return result.document


def parse_text(text: str, name: str = "<prompt>", *, content_mode: bool = False) -> Document:
    """Convenience: parse a string (a leading BOM is stripped); raise on error."""
    if text.startswith("\ufeff"):
        text = text[1:]
    return parse_document(SourceFile(name, text), content_mode=content_mode)
