"""The state one lowering run shares: diagnostics, folders of source files, confinement.

Every declaration module reports through :class:`LoweringContext`, which
positions diagnostics at an element's opening tag or, better, at one of its
attributes (found on demand with :func:`chatmd.lexer.attribute_spans`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable

from chatcommon.diagnostics import Diagnostic, Related, Severity
from chatcommon.sources import SourceFile, Span
from chatmd.ast import Element, Node
from chatmd.lexer import attribute_spans
from chatmd.loading import Confinement
from chatmd.provenance import Provenance

PHASE = "declarations"

#: Validates a declaration or message nested where it has no meaning, except for its body:
#: returns how its children are to be walked (``chatmd.declarations.content.CONTENT`` or
#: ``REASONING``) and the children, or None when it has no body to walk. The caller walks
#: the body (iteratively) and discards what the element would lower to.
NestedOpener = Callable[[Element, Provenance], "tuple[int, tuple[Node, ...]] | None"]


class LoweringContext:
    """Shared by every declaration module during one lowering run."""

    def __init__(self, *, prompt_dir: str, folders: dict[SourceFile, str],
                 confinement: Confinement | None) -> None:
        self.prompt_dir = prompt_dir
        self.folders = folders
        self.confinement = confinement
        self.diagnostics: list[Diagnostic] = []
        self.open_nested: NestedOpener = lambda element, provenance: None

    # ------------------------------------------------------------------ positions

    def folder_of(self, element: Element) -> str:
        """The folder of the file that textually contains ``element`` (its declaring dir)."""
        folder = self.folders.get(element.span.source)
        return folder if folder is not None else self.prompt_dir

    @staticmethod
    def attribute_span(element: Element, name: str, *, first: bool = False) -> Span:
        """The span of attribute ``name`` (last occurrence unless ``first``); else the tag."""
        spans = attribute_spans(element)
        pairs = list(zip(element.attrs, spans, strict=False))
        if not first:
            pairs.reverse()
        for attribute, span in pairs:
            if attribute.name == name:
                return span
        return element.span

    @staticmethod
    def attribute_span_at(element: Element, index: int) -> Span:
        """The span of the ``index``-th attribute of ``element`` (the tag if unknown)."""
        spans = attribute_spans(element)
        return spans[index] if 0 <= index < len(spans) else element.span

    # ------------------------------------------------------------------ reporting

    def error(self, span: Span, code: str, message: str, *, path: Iterable[str] = (),
              hint: str | None = None, severity: Severity = Severity.ERROR,
              related: Iterable[Related] = ()) -> None:
        self.diagnostics.append(Diagnostic.at(span, code, message, phase=PHASE, hint=hint,
                                              severity=severity, path=path, related=related))

    def resolve_reference(self, element: Element, reference: str) -> str:
        """``reference`` resolved against the declaring folder of ``element``."""
        return os.path.join(self.folder_of(element), reference)
