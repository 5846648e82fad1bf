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


def content_items(children: tuple[Node, ...], provenance: Provenance,
                  ctx: LoweringContext) -> list[ContentItem]:
    """The content items of ``children``, in order (nested declarations validated, dropped)."""
    items: list[ContentItem] = []
    for child in children:
        if type(child) is Text:
            items.append(TextItem(child.text))
            continue
        assert isinstance(child, Element)
        tag = child.tag
        if tag == "img":
            src = checked_src(child, child.get("src") or "", ctx)
            items.append(ImageItem(src, child.has("local"), location_of(child)))
        elif tag == "doc":
            src = checked_src(child, child.get("src") or "", ctx)
            items.append(DocItem(src, child.has("local"), child.has("strip"),
                                 child.has("markdown"), location_of(child)))
        elif tag == "agent":
            src = checked_src(child, child.get_first("src") or "", ctx, first=True)
            nested = tuple(content_items(child.children, provenance, ctx))
            items.append(AgentItem(src, child.has("local"), nested, location_of(child)))
        elif tag == "import":
            items.append(TextItem(render_import(child)))
        else:
            ctx.validate_nested(child, provenance)
    return items


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
