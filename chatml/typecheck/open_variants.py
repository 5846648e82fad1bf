"""Growing one open variant type by many tags in linear time (matches and arrays of tags).

A match of thousands of tag arms, or an array of thousands of distinct tags,
adds one tag to one open variant row per arm or element. Unifying each
``[`T | 'r]`` with the whole row would flatten and copy the row every time
(quadratic). :class:`OpenVariant` caches the row's labels and unbound tail
across those steps: a new tag binds the tail to ``[`T | 'r2]``, a known one
unifies the payloads. The result is the unifier's, provided the one-tag row
being added is referenced nowhere else (its own row variable is then never
observed): the callers only use it for a tag pattern or a tag literal they
have just typed.
"""

from __future__ import annotations

from chatml.typecheck.types import Row, TVar, TVariant, Type, flatten_row, resolve
from chatml.typecheck.unify import unify

#: Matches and arrays with more arms or elements than this use an :class:`OpenVariant`.
FEW = 8


class OpenVariant:
    """The labels and unbound tail of one open variant type being extended."""

    __slots__ = ("variant", "labels", "tail")

    def __init__(self) -> None:
        self.variant: Type | None = None
        self.labels: dict[str, Type] = {}
        self.tail: TVar | None = None

    def current(self, t: Type) -> bool:
        """Whether ``t`` is an open variant; its labels and tail are then cached."""
        variant = resolve(t)
        if type(variant) is not TVariant:
            return False
        if variant is self.variant and self.tail is not None and self.tail.link is None:
            return True
        fields, tail = flatten_row(variant.row)
        if type(tail) is not TVar:
            return False
        self.variant, self.labels, self.tail = variant, dict(fields), tail
        return True

    def add(self, tag: str, payload: Type, level: int) -> None:
        """Unify the cached variant (see :meth:`current`) with ``[`tag(payload) | 'fresh]``.

        Raises :class:`~chatml.typecheck.unify.UnifyError` as that unification would.
        """
        known = self.labels.get(tag)
        if known is not None:
            unify(known, payload)
            return
        tail = self.tail
        assert tail is not None
        rest = TVar(level)
        unify(tail, Row({tag: payload}, rest))
        self.labels[tag] = payload
        self.tail = rest
