"""Attribute access for declarations: the lenient reading and the strict helper (spec §4.0).

*Lenient* elements (messages, ``config``, ``doc``, ``img``, ``reasoning``, the
plain ``<tool>`` forms) ignore unknown attributes, read a flag as ``''`` and
let the last occurrence of a name win: :func:`lenient` gives that view.

*Strict* elements (``script``, ``moderator_runtime``, the read_file ``<tool>``
and its ``<read>`` roots; the shell validator may use it too) go through
:class:`StrictAttributes`: a duplicate name is ``shell.duplicate_attribute``
(checked first), a name outside the allowed set ``shell.unknown_attribute``, a
flag where a value is needed ``shell.attribute_value_required`` and a required
attribute that is absent or empty ``shell.missing_attribute``. Each problem is
reported at the offending attribute, and all of them are reported.
"""

from __future__ import annotations

from collections.abc import Collection

from chatcommon.sources import Span
from chatmd.ast import Element
from chatmd.declarations.context import LoweringContext
from chatmd.vocabulary import WS


def lenient(element: Element) -> dict[str, str]:
    """Attribute values by name, last occurrence winning, a flag read as ``''``."""
    return {a.name: "" if a.value is None else a.value for a in element.attrs}


def stripped_or_none(value: str | None) -> str | None:
    """``value`` stripped of ChatMD whitespace; None when absent or blank."""
    if value is None:
        return None
    value = value.strip(WS)
    return value or None


class StrictAttributes:
    """The validated attributes of one strict element.

    ``path`` is the diagnostic path of the element (``("script",)``,
    ``("tool", "read", "0")``). ``ok`` turns False on the first reported problem.
    """

    def __init__(self, element: Element, allowed: Collection[str], ctx: LoweringContext,
                 path: tuple[str, ...]) -> None:
        self.element = element
        self.ctx = ctx
        self.path = path
        self.ok = True
        self.values: dict[str, str | None] = {}
        tag = element.tag
        seen: set[str] = set()
        duplicated: set[str] = set()
        for index, attribute in enumerate(element.attrs):
            name = attribute.name
            if name in seen:
                if name not in duplicated:
                    duplicated.add(name)
                    self._report(ctx.attribute_span_at(element, index), "shell.duplicate_attribute",
                                 f"duplicate attribute `{name}` on <{tag}>",
                                 hint="give each attribute once")
                continue
            seen.add(name)
            self.values[name] = attribute.value
        for index, attribute in enumerate(element.attrs):
            if attribute.name not in allowed:
                expected = ", ".join(sorted(allowed)) or "none"
                self._report(ctx.attribute_span_at(element, index), "shell.unknown_attribute",
                             f"unknown attribute `{attribute.name}` on <{tag}>: "
                             f"expected one of {expected}")

    def _report(self, span: Span, code: str, message: str, *, hint: str | None = None,
                path: tuple[str, ...] | None = None) -> None:
        self.ok = False
        self.ctx.error(span, code, message, path=self.path if path is None else path, hint=hint)

    def has(self, name: str) -> bool:
        return name in self.values

    def optional(self, name: str) -> str | None:
        """The value of ``name`` (possibly ``''``), or None when absent or a bare flag (reported)."""
        if name not in self.values:
            return None
        value = self.values[name]
        if value is None:
            self._report(self.ctx.attribute_span(self.element, name, first=True),
                         "shell.attribute_value_required",
                         f"attribute `{name}` on <{self.element.tag}> needs a value: "
                         f"expected {name}=\"...\"")
        return value

    def required(self, name: str) -> str | None:
        """The non-empty value of ``name``; None (reported) when absent, empty or a flag."""
        if name not in self.values:
            self._report(self.element.span, "shell.missing_attribute",
                         f"<{self.element.tag}> is missing the required attribute `{name}`",
                         hint=f"add {name}=\"...\"")
            return None
        value = self.optional(name)
        if value == "":
            self._report(self.ctx.attribute_span(self.element, name, first=True),
                         "shell.missing_attribute",
                         f"required attribute `{name}` on <{self.element.tag}> is empty")
            return None
        return value
