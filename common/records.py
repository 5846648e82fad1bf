"""One shared ``repr``, ``==`` and ``hash`` for the attrs classes of the syntax trees and the IR.

attrs generates these methods as source code and compiles it, separately for
every class; with a hundred classes that is most of the import time of the
frontends, and so of every ``chatmdc check`` and ``chatml check`` start-up.
Classes declared with :data:`frozen_record` (``attrs.frozen`` with
``repr=False, eq=False``) and derived from :class:`SharedMethods` get the
methods below instead. They mean exactly what attrs' would:

- ``repr``: ``ClassName(field=value, ...)`` over the fields declared with ``repr``;
- ``==``: objects of the same class whose fields declared with ``eq`` are equal,
  compared in declaration order (``NotImplemented`` for another class);
- ``hash``: consistent with ``==`` (the class and those fields).
"""

from __future__ import annotations

from typing import Any

import attrs

__all__ = ["SharedMethods", "compared_fields", "frozen_record"]

_COMPARED: dict[type, tuple[str, ...]] = {}


def compared_fields(cls: type) -> tuple[str, ...]:
    """The names of the fields of the attrs class ``cls`` that take part in ``==``."""
    names = _COMPARED.get(cls)
    if names is None:
        names = _COMPARED[cls] = tuple(field.name for field in attrs.fields(cls) if field.eq)
    return names


class SharedMethods:
    """Base class providing ``__repr__``, ``__eq__`` and ``__hash__`` (see the module docs)."""

    __slots__ = ()

    def __repr__(self) -> str:
        shown = ", ".join(f"{field.name}={getattr(self, field.name)!r}"
                          for field in attrs.fields(self.__class__)  # type: ignore[misc]
                          if field.repr)
        return f"{self.__class__.__name__}({shown})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        for name in compared_fields(self.__class__):
            if not getattr(self, name) == getattr(other, name):
                return False
        return True

    def __hash__(self) -> int:
        return hash((self.__class__,
                     *[getattr(self, name) for name in compared_fields(self.__class__)]))


#: The class decorator: frozen and slotted, with the methods of :class:`SharedMethods`.
frozen_record: Any = attrs.frozen(repr=False, eq=False)
