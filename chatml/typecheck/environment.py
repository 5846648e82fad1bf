"""The checker's environments (spec 4.2): values with undo, and type names.

The value environment maps a name to its type: a :class:`Scheme` (instantiated
at every lookup) or a monomorphic type, returned as the very same object at
every lookup so that unifications through one use are seen by all. Scopes
are implemented with a trail: :meth:`ValueEnv.mark` remembers a point,
:meth:`ValueEnv.undo` restores every binding made since.
"""

from __future__ import annotations

from chatml.typecheck.schemes import Scheme
from chatml.typecheck.types import Type

Entry = Type | Scheme


def entry_type(entry: Entry) -> Type:
    """The type an entry stands for (a scheme's body, generic variables included)."""
    return entry.body if type(entry) is Scheme else entry


class ValueEnv:
    """Name -> :data:`Entry`, with a trail for scoped undo."""

    __slots__ = ("values", "trail")

    def __init__(self) -> None:
        self.values: dict[str, Entry] = {}
        #: (name, the entry it had before, None when it had none: entries are never None)
        self.trail: list[tuple[str, Entry | None]] = []

    def bind(self, name: str, entry: Entry) -> None:
        values = self.values
        self.trail.append((name, values.get(name)))
        values[name] = entry

    def mark(self) -> int:
        """A point to :meth:`undo` to: the trail's length (hot rules read it directly)."""
        return len(self.trail)

    def undo(self, mark: int) -> None:
        trail = self.trail
        values = self.values
        while len(trail) > mark:
            name, old = trail.pop()
            if old is None:
                del values[name]
            else:
                values[name] = old

    def __contains__(self, name: str) -> bool:
        return name in self.values

    def get(self, name: str) -> Entry | None:
        return self.values.get(name)
