"""Lowering of ``<moderator_runtime shell_runtime=REF/>`` (spec §4.2).

Only ``shell_runtime`` is allowed (required, non-empty, qualified with the
declaring file's namespace); any content is ``shell.moderator_runtime_content``.
"""

from __future__ import annotations

from chatmd.ast import Element, Text
from chatmd.provenance import Provenance
from chatmd.shell.declare.lowering import Attributes, Lowered, Lowering
from chatmd.shell.declare.typed_declarations import ModeratorRuntimeDecl
from chatmd.vocabulary import is_blank


def lower_moderator_runtime(element: Element,
                            provenance: Provenance) -> Lowered[ModeratorRuntimeDecl]:
    lowering = Lowering(provenance, origin="moderator_runtime")
    path = ("moderator_runtime",)
    attributes = Attributes(lowering, element, path, ("shell_runtime",))
    runtime = attributes.ref("shell_runtime", required=True)
    for child in element.children:
        if isinstance(child, Text) and is_blank(child.text):
            continue
        lowering.error(child.span, "shell.moderator_runtime_content",
                       "<moderator_runtime> must be empty: it only names a shell runtime",
                       path, hint='write <moderator_runtime shell_runtime="ID"/>')
        break
    if runtime is None:
        return lowering.finish(None)
    return lowering.finish(ModeratorRuntimeDecl(runtime, provenance=provenance,
                                                span=element.span))
