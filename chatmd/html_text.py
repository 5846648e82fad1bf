"""HTML to readable text and to Markdown, for ``<doc strip/>`` and ``<doc markdown/>`` (spec §4.5).

Built on the standard library's forgiving :class:`html.parser.HTMLParser`:
unclosed and stray tags never fail, character references are decoded.

* :func:`html_to_text` takes every text node outside ``script``/``style``/
  ``noscript``/``template``, strips each, drops the empty ones and joins the
  rest with LF.
* :func:`html_to_markdown` renders headings, paragraphs, lists, links,
  images, emphasis, inline code, preformatted blocks, block quotes, rules and
  tables as CommonMark-style Markdown.

Nothing here recurses with the document's nesting: the tree is built with an
explicit stack and rendered by generators on an explicit stack (:func:`_run`),
so any nesting depth is fine.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Generator
from html.parser import HTMLParser
from typing import Any

import attrs

_HIDDEN = frozenset({"script", "style", "noscript", "template", "head"})
_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
                   "param", "source", "track", "wbr"})
_BLOCKS = frozenset({"address", "article", "aside", "blockquote", "body", "dd", "details", "div",
                     "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2",
                     "h3", "h4", "h5", "h6", "header", "hr", "html", "li", "main", "nav", "ol",
                     "p", "pre", "section", "summary", "table", "ul"})
# an opening tag of the key closes an open element of the value (HTML's implied end tags)
_IMPLIED_CLOSE = {"p": {"p"}, "li": {"li"}, "dt": {"dt", "dd"}, "dd": {"dt", "dd"},
                  "tr": {"tr", "td", "th"}, "td": {"td", "th"}, "th": {"td", "th"}}
_SPACES = re.compile(r"[ \t\n\r\f\v]+")


class _TextCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.texts: list[str] = []
        self._hidden: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _HIDDEN - {"head"} and tag not in _VOID:
            self._hidden.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self._hidden:
            while self._hidden and self._hidden.pop() != tag:
                pass

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            stripped = data.strip()
            if stripped:
                self.texts.append(stripped)


def html_to_text(html: str) -> str:
    """Every visible text node, stripped, the empty ones dropped, joined with LF."""
    collector = _TextCollector()
    collector.feed(html)
    collector.close()
    return "\n".join(collector.texts)


# --- Markdown ---------------------------------------------------------------------------------


@attrs.define
class _Node:
    tag: str
    attributes: dict[str, str]
    children: list[_Node | str] = attrs.field(factory=list)


class _TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = _Node("#root", {})
        self.stack = [self.root]
        self.open: dict[str, int] = {}  # tag -> how many are on the stack (stray end tags are O(1))

    def _pop(self, depth: int) -> None:
        for node in self.stack[depth:]:
            self.open[node.tag] -= 1
        del self.stack[depth:]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        closes = _IMPLIED_CLOSE.get(tag)
        if closes and self.stack[-1].tag in closes:
            self._pop(len(self.stack) - 1)
        node = _Node(tag, {name: value or "" for name, value in attrs})
        self.stack[-1].children.append(node)
        if tag not in _VOID:
            self.stack.append(node)
            self.open[tag] = self.open.get(tag, 0) + 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(_Node(tag, {name: value or "" for name, value in attrs}))

    def handle_endtag(self, tag: str) -> None:
        if not self.open.get(tag):
            return
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                self._pop(depth)
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


# The renderers below are generators run by :func:`_run`: ``yield (function, argument)``
# is a call whose result comes back from the ``yield``, and ``return`` gives a result. The
# driver keeps the pending calls on a list, so a document nested thousands of elements deep
# needs no Python stack (``<b>`` x 100,000 is fine).

_Call = tuple[Callable[[Any], "Rendering"], Any]
Rendering = Generator[_Call, Any, Any]


def _run(function: Callable[[Any], Rendering], argument: Any) -> Any:
    """``function(argument)`` run to its end with every nested call on an explicit stack."""
    stack = [function(argument)]
    value: Any = None
    while stack:
        try:
            callee, callee_argument = stack[-1].send(value)
        except StopIteration as done:
            stack.pop()
            value = done.value
            continue
        stack.append(callee(callee_argument))
        value = None
    return value


def _raw_text(node: _Node | str) -> str:
    """The text of ``node``, ``<br>`` as LF (a loop over the subtree, not recursion)."""
    out: list[str] = []
    pending: list[_Node | str] = [node]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            out.append(item)
        elif item.tag == "br":
            out.append("\n")
        else:
            pending.extend(reversed(item.children))
    return "".join(out)


def _inline(nodes: list[_Node | str]) -> Rendering:
    """Inline Markdown for ``nodes``; whitespace collapsed, ``<br>`` kept as LF."""
    out: list[str] = []
    for node in nodes:
        if isinstance(node, str):
            out.append(_SPACES.sub(" ", node))
            continue
        tag = node.tag
        if tag in _HIDDEN:
            continue
        if tag == "br":
            out.append("\n")
        elif tag == "img":
            src = node.attributes.get("src", "")
            if src:
                out.append(f"![{node.attributes.get('alt', '')}]({src})")
        elif tag == "a":
            text = (yield _inline, node.children).strip()
            href = node.attributes.get("href", "")
            out.append(f"[{text}]({href})" if href and text else (text or href))
        elif tag in ("strong", "b"):
            text = (yield _inline, node.children).strip()
            out.append(f"**{text}**" if text else "")
        elif tag in ("em", "i"):
            text = (yield _inline, node.children).strip()
            out.append(f"*{text}*" if text else "")
        elif tag == "code":
            text = _raw_text(node)
            out.append(f"`{text}`" if text else "")
        else:
            inner = yield _inline, node.children
            out.append(f" {inner} " if tag in _BLOCKS else inner)
    return "".join(out)


def _paragraph(nodes: list[_Node | str]) -> Rendering:
    inline: str = yield _inline, nodes
    lines = (_SPACES.sub(" ", line).strip() for line in inline.split("\n"))
    return "\n".join(line for line in lines if line)


def _indent(text: str, first: str, rest: str) -> str:
    lines = text.split("\n")
    return "\n".join([first + lines[0]] + [(rest + line) if line else line for line in lines[1:]])


def _list(node: _Node) -> Rendering:
    items = []
    number = 1
    for child in node.children:
        if isinstance(child, str):
            if child.strip():
                items.append("- " + _SPACES.sub(" ", child).strip())
            continue
        if child.tag != "li":
            inner = "\n\n".join((yield _blocks, [child]))
            if inner:
                items.append(inner)
            continue
        marker = f"{number}. " if node.tag == "ol" else "- "
        number += 1
        body = "\n\n".join((yield _blocks, child.children))
        items.append(_indent(body, marker, " " * len(marker)))
    return "\n".join(items)


def _table_rows(node: _Node) -> list[_Node]:
    """The ``<tr>`` of a table, also inside ``<thead>``/``<tbody>``/``<tfoot>``, in order."""
    rows: list[_Node] = []
    pending: list[_Node | str] = list(reversed(node.children))
    while pending:
        child = pending.pop()
        if isinstance(child, str):
            continue
        if child.tag == "tr":
            rows.append(child)
        elif child.tag in ("thead", "tbody", "tfoot"):
            pending.extend(reversed(child.children))
    return rows


def _table(node: _Node) -> Rendering:
    rows: list[list[str]] = []
    for row_node in _table_rows(node):
        cells = []
        for cell in row_node.children:
            if isinstance(cell, _Node) and cell.tag in ("td", "th"):
                text = yield _paragraph, cell.children
                cells.append(text.replace("\n", " ").replace("|", "\\|"))
        if cells:
            rows.append(cells)
    if not rows:
        return ""
    width = max(len(row) for row in rows)
    lines = []
    for index, row in enumerate(rows):
        padded = row + [""] * (width - len(row))
        lines.append("| " + " | ".join(padded) + " |")
        if index == 0:
            lines.append("|" + " --- |" * width)
    return "\n".join(lines)


def _block(node: _Node) -> Rendering:
    tag = node.tag
    if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
        text = (yield _paragraph, node.children).replace("\n", " ")
        return [f"{'#' * int(tag[1])} {text}"] if text else []
    if tag in ("ul", "ol"):
        text = yield _list, node
        return [text] if text else []
    if tag == "pre":
        text = _raw_text(node).strip("\n")
        return [f"```\n{text}\n```"]
    if tag == "blockquote":
        inner = "\n\n".join((yield _blocks, node.children))
        return ["\n".join("> " + line if line else ">" for line in inner.split("\n"))] if inner else []
    if tag == "hr":
        return ["---"]
    if tag == "table":
        text = yield _table, node
        return [text] if text else []
    return (yield _blocks, node.children)


def _blocks(nodes: list[_Node | str]) -> Rendering:
    """Markdown blocks for ``nodes``: runs of inline content become paragraphs."""
    blocks: list[str] = []
    run: list[_Node | str] = []
    for node in nodes:
        if isinstance(node, _Node) and node.tag in _HIDDEN:
            continue
        if isinstance(node, _Node) and node.tag in _BLOCKS:
            if run:
                text = yield _paragraph, run
                if text:
                    blocks.append(text)
                run = []
            blocks.extend((yield _block, node))
        else:
            run.append(node)
    if run:
        text = yield _paragraph, run
        if text:
            blocks.append(text)
    return blocks


def html_to_markdown(html: str) -> str:
    """``html`` rendered as Markdown (blocks separated by one blank line)."""
    builder = _TreeBuilder()
    builder.feed(html)
    builder.close()
    return "\n\n".join(_run(_blocks, builder.root.children))
