"""``<moderator_runtime shell_runtime="..."/>`` (spec §4.10): binds moderator processes to a runtime.

Strict: only ``shell_runtime``, required and non-empty; any non-blank child is
``shell.moderator_runtime_content``. The reference is kept as written and
qualified with the import namespace (§3.5). The last declaration wins.
"""

from __future__ import annotations

from chatmd.ast import Element, Text
from chatmd.declarations.attributes import StrictAttributes
from chatmd.declarations.context import LoweringContext
from chatmd.ir import ModeratorRuntime
from chatmd.provenance import Provenance, qualify
from chatmd.vocabulary import is_blank

_PATH = ("moderator_runtime",)


def lower_moderator_runtime(element: Element, provenance: Provenance,
                            ctx: LoweringContext) -> ModeratorRuntime | None:
    """The :class:`~chatmd.ir.ModeratorRuntime`; None after a reported problem."""
    attributes = StrictAttributes(element, ("shell_runtime",), ctx, _PATH)
    runtime = attributes.required("shell_runtime")
    ok = attributes.ok
    for child in element.children:
        if type(child) is Text and is_blank(child.text):
            continue
        ok = False
        span = child.span
        ctx.error(span, "shell.moderator_runtime_content",
                  "<moderator_runtime> takes no content: expected a self-closing "
                  "<moderator_runtime shell_runtime=\"...\"/>", path=_PATH)
        break
    if not ok or runtime is None:
        return None
    return ModeratorRuntime(runtime, qualify(provenance.namespace, runtime), provenance)
