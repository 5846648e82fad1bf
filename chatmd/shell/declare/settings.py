"""Tri-state settings and the bookkeeping fields every shell declaration node carries.

A scalar runtime setting is ``inherit`` (attribute absent), ``set(v)`` or
``clear`` (``none`` for optional limits). Merging (spec §6.3) depends on the
distinction, so it is kept until the manifest is built.

Every node also remembers where it was written (``span``) and which layer of
the inheritance chain contributed it (``origin``: a runtime id,
``builtin:NAME@VERSION`` or ``defaults``). Both are bookkeeping: they take no
part in equality and never enter the manifest.
"""

from __future__ import annotations

from typing import Any, Generic, Literal, TypeVar

import attrs

from chatcommon.sources import Span

T = TypeVar("T")

#: Marks a field as bookkeeping (not compared, not part of the manifest).
META = "shell.meta"

#: Marks a field that compilation consumes and the manifest leaves out (``merge``).
COMPILE_ONLY = "shell.compile_only"

DEFAULTS_ORIGIN = "defaults"


def meta(default: Any = None) -> Any:
    """A bookkeeping field: keyword-only, excluded from equality, repr and the manifest."""
    return attrs.field(default=default, eq=False, repr=False, kw_only=True,
                       metadata={META: True})


def merge_field() -> Any:
    """A section's ``merge`` mode: compared, but consumed by inheritance (not in the manifest)."""
    return attrs.field(default="append", metadata={COMPILE_ONLY: True})


def span_field() -> Any:
    return meta(None)


def origin_field() -> Any:
    return meta(DEFAULTS_ORIGIN)


State = Literal["inherit", "set", "clear"]


@attrs.frozen
class Setting(Generic[T]):
    """One tri-state scalar setting."""

    state: State
    value: T | None = None
    span: Span | None = span_field()
    origin: str = origin_field()

    @classmethod
    def inherit(cls) -> Setting[Any]:
        return _INHERIT

    @classmethod
    def of(cls, value: T, span: Span | None = None, origin: str = DEFAULTS_ORIGIN) -> Setting[T]:
        return cls("set", value, span=span, origin=origin)

    @classmethod
    def cleared(cls, span: Span | None = None, origin: str = DEFAULTS_ORIGIN) -> Setting[Any]:
        return cls("clear", None, span=span, origin=origin)

    @classmethod
    def of_optional(cls, value: T | None, span: Span | None = None,
                    origin: str = DEFAULTS_ORIGIN) -> Setting[T]:
        """``set(value)``, or ``clear`` when ``value`` is None."""
        if value is None:
            return cls.cleared(span, origin)
        return cls.of(value, span, origin)

    @property
    def is_inherit(self) -> bool:
        return self.state == "inherit"

    def over(self, parent: Setting[T]) -> Setting[T]:
        """This setting merged onto ``parent``: ``set``/``clear`` win, ``inherit`` keeps it."""
        return parent if self.state == "inherit" else self


_INHERIT: Setting[Any] = Setting("inherit")
