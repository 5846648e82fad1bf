"""A bottom-up fold over nested items, walked with an explicit stack.

Content items nest (an ``<agent>`` holds items, which may hold agents) as deep as
elements may, well past the interpreter's recursion limit, so code that turns
nested items into values folds them with :func:`fold_nested` instead of
recursing. Each caller supplies its own per-item work as a ``visit`` function.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["Nested", "fold_nested"]

N = TypeVar("N")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Nested(Generic[N, R]):
    """What ``visit`` returns for an item with children: the children, and how to make the
    item's value from their values (called once they are all folded)."""

    children: Iterable[N]
    finish: Callable[[list[R]], R]


def fold_nested(items: Iterable[N], visit: Callable[[N], R | Nested[N, R]]) -> list[R]:
    """The values of ``items``, in order. ``visit(item)`` is called on every item in
    pre-order (an item before its children, siblings in order) and gives either the item's
    value or a :class:`Nested`, whose ``finish`` is called on its children's values after
    the last of them (post-order). Iterative: nesting depth costs heap, not stack."""
    top: list[R] = []
    # (the items left, the values made from them, what finishes their parent)
    stack: list[tuple[Iterator[N], list[R], Callable[[list[R]], R] | None]] = [
        (iter(items), top, None)]
    while stack:
        remaining, values, finish = stack[-1]
        for item in remaining:
            value = visit(item)
            if isinstance(value, Nested):
                stack.append((iter(value.children), [], value.finish))
                break
            values.append(value)
        else:
            stack.pop()
            if finish is not None:
                stack[-1][1].append(finish(values))
    return top
