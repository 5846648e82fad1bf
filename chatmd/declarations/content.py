"""The content model of message bodies (spec §4.2): children to text, image, doc, agent items.

Text → :class:`~chatmd.ir.TextItem`; ``<img>`` → :class:`~chatmd.ir.ImageItem`;
``<doc>`` → :class:`~chatmd.ir.DocItem`; ``<agent>`` →
:class:`~chatmd.ir.AgentItem` with its own children; an unexpanded ``<import>``
→ a text item with its literal rendering; any other child is validated through
the context's nested validator and then dropped. Adjacent text items are not
merged. The result is None (no items), a ``str`` (exactly one text item) or a
tuple of items. Nothing is fetched here, but every ``src`` is validated
(:mod:`chatmd.references`): malformed ones and, in a pinned prompt, local
ones outside the prompt folder are errors at the attribute.
"""

from __future__ import annotations

from collections.abc import Iterator

from chatmd.ast import Element, Node, Text
from chatmd.declarations.context import LoweringContext
from chatmd.declarations.text import render_import
from chatmd.ir import AgentItem, Content, ContentItem, DocItem, ImageItem, Location, TextItem
from chatmd.provenance import Provenance
from chatmd.references import (
    INVALID_PATH,
    OUTSIDE,
    confinement_problem,
    invalid_message,
    reference_problem,
)


def location_of(element: Element) -> Location:
    """The display file, line and column of ``element``'s opening tag."""
    span = element.span
    line, column = span.start_position
    return Location(span.file, line, column)


def checked_src(element: Element, src: str, ctx: LoweringContext, *, first: bool = False,
                attribute: str = "src") -> str:
    """``src`` of a ``<doc>``/``<img>``/``<agent>`` (or ``<tool agent>``) with ``local``,
    reported when malformed or, in a pinned prompt, outside the prompt folder (resolved
    against it as requests resolve local files); the item is still built, the prompt has an
    error. Remote references (no ``local``) are not files and are left to the fetcher."""
    if not src or not element.has("local"):  # a remote reference is not a file
        return src
    what = f"<{element.tag}> {attribute}"
    problem = reference_problem(src)
    if problem is not None:
        ctx.error(ctx.attribute_span(element, attribute, first=first), INVALID_PATH,
                  invalid_message(what, src, problem), path=(element.tag, attribute))
        return src
    outside = confinement_problem(ctx.confinement, src, ctx.prompt_dir)
    if outside is not None:
        ctx.error(ctx.attribute_span(element, attribute, first=first), OUTSIDE,
                  f"{what} {outside}", path=(element.tag, attribute),
                  hint="pinned prompts may only read local files beneath the root "
                  "prompt's folder, by relative path")
    return src


#: How the children of an element are walked: as message content, or as the children
#: of a ``<reasoning>`` (where text, ``<summary>`` and ``<import>`` need no validation).
CONTENT = 0
REASONING = 1

_END = object()


def content_items(children: tuple[Node, ...], provenance: Provenance,
                  ctx: LoweringContext) -> list[ContentItem]:
    """The content items of ``children``, in order (nested declarations validated, dropped)."""
    return _walk(CONTENT, children, provenance, ctx)


def validate_nested(element: Element, provenance: Provenance, ctx: LoweringContext) -> None:
    """Validate ``element``, nested where it has no meaning, for its diagnostics alone."""
    opened = ctx.open_nested(element, provenance)
    if opened is not None:
        _walk(*opened, provenance, ctx)


def _walk(kind: int, children: tuple[Node, ...], provenance: Provenance,
          ctx: LoweringContext) -> list[ContentItem]:
    """Walk ``children`` as ``kind`` with an explicit stack, however deep elements nest.

    ``<agent>`` bodies and the bodies of elements validated where they have no
    meaning (:attr:`LoweringContext.open_nested`: a ``<msg>`` in a ``<user>``)
    are walked in place, in document order, so diagnostics come in the order a
    recursive walk would give them. Returns the content items of ``children``.
    """
    top: list[ContentItem] = []
    # (children left, the items they add to, the <agent> and its src they belong to, kind)
    stack: list[tuple[Iterator[Node], list[ContentItem], tuple[str, Element] | None, int]] = [
        (iter(children), top, None, kind)]
    while stack:
        remaining, items, agent, kind = stack[-1]
        child = next(remaining, _END)
        if child is _END:
            stack.pop()
            if agent is not None:
                src, element = agent
                stack[-1][1].append(AgentItem(src, element.has("local"), tuple(items),
                                              location_of(element)))
            continue
        if type(child) is Text:
            if kind == CONTENT:
                items.append(TextItem(child.text))
            continue
        assert isinstance(child, Element)
        tag = child.tag
        if kind == REASONING:
            if tag == "summary" or tag == "import":
                continue
        elif tag == "img":
            src = checked_src(child, child.get("src") or "", ctx)
            items.append(ImageItem(src, child.has("local"), location_of(child)))
            continue
        elif tag == "doc":
            src = checked_src(child, child.get("src") or "", ctx)
            items.append(DocItem(src, child.has("local"), child.has("strip"),
                                 child.has("markdown"), location_of(child)))
            continue
        elif tag == "agent":
            src = checked_src(child, child.get_first("src") or "", ctx, first=True)
            stack.append((iter(child.children), [], (src, child), CONTENT))
            continue
        elif tag == "import":
            items.append(TextItem(render_import(child)))
            continue
        opened = ctx.open_nested(child, provenance)
        if opened is not None:  # its body, walked for diagnostics (its items are dropped)
            nested_kind, nested_children = opened
            stack.append((iter(nested_children), [], None, nested_kind))
    return top


def lower_content(children: tuple[Node, ...], provenance: Provenance,
                  ctx: LoweringContext) -> Content:
    """A message body as None, one string, or a tuple of content items."""
    if not children:
        return None
    if len(children) == 1 and type(children[0]) is Text:
        return children[0].text
    items = content_items(children, provenance, ctx)
    if not items:
        return None
    if len(items) == 1 and type(items[0]) is TextItem:
        return items[0].text
    return tuple(items)
