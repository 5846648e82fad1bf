"""HTML to readable text and to Markdown, for ``<doc strip/>`` and ``<doc markdown/>`` (spec §4.5).

Built on the standard library's forgiving :class:`html.parser.HTMLParser`:
unclosed and stray tags never fail, character references are decoded.

* :func:`html_to_text` takes every text node outside ``script``/``style``/
  ``noscript``/``template``, strips each, drops the empty ones and joins the
  rest with LF.
* :func:`html_to_markdown` renders headings, paragraphs, lists, links,
  images, emphasis, inline code, preformatted blocks, block quotes, rules and
  tables as CommonMark-style Markdown.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

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

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        closes = _IMPLIED_CLOSE.get(tag)
        if closes and self.stack[-1].tag in closes:
            self.stack.pop()
        node = _Node(tag, {name: value or "" for name, value in attrs})
        self.stack[-1].children.append(node)
        if tag not in _VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(_Node(tag, {name: value or "" for name, value in attrs}))

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def _raw_text(node: _Node | str) -> str:
    if isinstance(node, str):
        return node
    if node.tag == "br":
        return "\n"
    return "".join(_raw_text(child) for child in node.children)


def _inline(nodes: list[_Node | str]) -> str:
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
            text = _inline(node.children).strip()
            href = node.attributes.get("href", "")
            out.append(f"[{text}]({href})" if href and text else (text or href))
        elif tag in ("strong", "b"):
            text = _inline(node.children).strip()
            out.append(f"**{text}**" if text else "")
        elif tag in ("em", "i"):
            text = _inline(node.children).strip()
            out.append(f"*{text}*" if text else "")
        elif tag == "code":
            text = _raw_text(node)
            out.append(f"`{text}`" if text else "")
        else:
            inner = _inline(node.children)
            out.append(f" {inner} " if tag in _BLOCKS else inner)
    return "".join(out)


def _paragraph(nodes: list[_Node | str]) -> str:
    lines = (_SPACES.sub(" ", line).strip() for line in _inline(nodes).split("\n"))
    return "\n".join(line for line in lines if line)


def _indent(text: str, first: str, rest: str) -> str:
    lines = text.split("\n")
    return "\n".join([first + lines[0]] + [(rest + line) if line else line for line in lines[1:]])


def _list(node: _Node) -> str:
    items = []
    number = 1
    for child in node.children:
        if isinstance(child, str):
            if child.strip():
                items.append("- " + _SPACES.sub(" ", child).strip())
            continue
        if child.tag != "li":
            inner = "\n\n".join(_blocks([child]))
            if inner:
                items.append(inner)
            continue
        marker = f"{number}. " if node.tag == "ol" else "- "
        number += 1
        body = "\n\n".join(_blocks(child.children))
        items.append(_indent(body, marker, " " * len(marker)))
    return "\n".join(items)


def _table(node: _Node) -> str:
    rows: list[list[str]] = []

    def collect(element: _Node) -> None:
        for child in element.children:
            if isinstance(child, str):
                continue
            if child.tag == "tr":
                cells = [_paragraph(cell.children).replace("\n", " ").replace("|", "\\|")
                         for cell in child.children
                         if isinstance(cell, _Node) and cell.tag in ("td", "th")]
                if cells:
                    rows.append(cells)
            elif child.tag in ("thead", "tbody", "tfoot"):
                collect(child)

    collect(node)
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


def _block(node: _Node) -> list[str]:
    tag = node.tag
    if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
        text = _paragraph(node.children).replace("\n", " ")
        return [f"{'#' * int(tag[1])} {text}"] if text else []
    if tag in ("ul", "ol"):
        text = _list(node)
        return [text] if text else []
    if tag == "pre":
        text = _raw_text(node).strip("\n")
        return [f"```\n{text}\n```"]
    if tag == "blockquote":
        inner = "\n\n".join(_blocks(node.children))
        return ["\n".join("> " + line if line else ">" for line in inner.split("\n"))] if inner else []
    if tag == "hr":
        return ["---"]
    if tag == "table":
        text = _table(node)
        return [text] if text else []
    return _blocks(node.children)


def _blocks(nodes: list[_Node | str]) -> list[str]:
    """Markdown blocks for ``nodes``: runs of inline content become paragraphs."""
    blocks: list[str] = []
    run: list[_Node | str] = []

    def flush() -> None:
        if run:
            text = _paragraph(run)
            if text:
                blocks.append(text)
            run.clear()

    for node in nodes:
        if isinstance(node, _Node) and node.tag in _HIDDEN:
            continue
        if isinstance(node, _Node) and node.tag in _BLOCKS:
            flush()
            blocks.extend(_block(node))
        else:
            run.append(node)
    flush()
    return blocks


def html_to_markdown(html: str) -> str:
    """``html`` rendered as Markdown (blocks separated by one blank line)."""
    builder = _TreeBuilder()
    builder.feed(html)
    builder.close()
    return "\n\n".join(_blocks(builder.root.children))
