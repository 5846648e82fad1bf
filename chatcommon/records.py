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

:func:`fast_constructor` gives a hot path (a parser building thousands of
nodes) a cheaper way to make instances of such a class: the same object its
``__init__`` would make, at about a third of the cost. :func:`record_builder`
checks a hand-written builder class for the hottest records (declared with
:data:`lean_record`), cheaper still for records of many fields.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, cast, dataclass_transform

import attrs

_C = TypeVar("_C", bound=type)
_R = TypeVar("_R", bound="SharedMethods")
_T = TypeVar("_T")

__all__ = ["SharedMethods", "compared_fields", "evolve", "fast_constructor", "frozen_record",
           "lean_record", "record_builder"]

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

    if TYPE_CHECKING:  # set by attrs on every frozen_record class; makes them AttrsInstances
        __attrs_attrs__: ClassVar[tuple[attrs.Attribute[Any], ...]]

    def __repr__(self) -> str:
        shown = ", ".join(f"{field.name}={getattr(self, field.name)!r}"
                          for field in attrs.fields(self.__class__)
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


_FROZEN = attrs.frozen(repr=False, eq=False)


@dataclass_transform(frozen_default=True, field_specifiers=(attrs.field,))
def frozen_record(cls: _C) -> _C:
    """The class decorator: frozen and slotted, with the methods of :class:`SharedMethods`.

    ``attrs.frozen(repr=False, eq=False)``; marked with ``dataclass_transform``
    so type checkers see the generated ``__init__`` and the frozen fields.
    """
    return _FROZEN(cls)


_LEAN = attrs.frozen(repr=False, eq=False, weakref_slot=False)


@dataclass_transform(frozen_default=True, field_specifiers=(attrs.field,))
def lean_record(cls: _C) -> _C:
    """:data:`frozen_record` without a weak-reference slot (its instances cannot be
    weakly referenced), so that a :func:`record_builder` can make them."""
    return _LEAN(cls)


def record_builder(record: type[_T], builder: type) -> Callable[..., _T]:
    """``builder``, a hand-written builder of ``record``'s instances, once checked.

    A frozen class must write each field of a new instance through a descriptor
    call (what :func:`fast_constructor` does), where a plain slotted class writes
    it with one specialised bytecode. The builder is such a plain class: the same
    base and the same slot names as ``record`` (a slotted attrs class without a
    weak-reference slot, validators, converters or ``__attrs_post_init__``: a
    :data:`lean_record`, or ``attrs.frozen(weakref_slot=False)``), and an
    ``__init__`` that takes every field positionally, in declaration order,
    assigns each, and ends with ``self.__class__ = record``. CPython allows that
    assignment between classes whose instances have the same layout, so the
    object is then exactly the one ``record(*values)`` makes, frozen like it; for
    the 14 fields of a message this costs about half of :func:`fast_constructor`.

    Checked here, once: the layout, and that a probe built from distinct
    sentinels is a ``record`` holding each sentinel in its own field (a field
    assigned twice, forgotten or swapped fails). Raises ``TypeError`` otherwise.
    """
    fields = attrs.fields(cast(Any, record))
    if (record.__weakrefoffset__ or "__slots__" not in record.__dict__
            or hasattr(record, "__attrs_post_init__")
            or any(f.validator is not None or f.converter is not None for f in fields)):
        raise TypeError(f"{record.__name__} cannot have a builder")
    if (builder.__bases__ != record.__bases__
            or sorted(builder.__dict__.get("__slots__", ())) != sorted(f.name for f in fields)):
        raise TypeError(f"{builder.__name__}: not the layout of {record.__name__}")
    probes = [object() for _ in fields]
    made = builder(*probes)
    if type(made) is not record or any(
            getattr(made, f.name) is not probe for f, probe in zip(fields, probes, strict=True)):
        raise TypeError(f"{builder.__name__} does not build {record.__name__} field for field")
    return cast(Callable[..., _T], builder)


def evolve(record: _R, **changes: Any) -> _R:
    """``attrs.evolve`` for a :data:`frozen_record` class: a copy with ``changes`` applied."""
    # mypy's attrs plugin checks evolve() only for classes it saw decorated by attrs itself;
    # frozen_record classes are attrs classes it knows through dataclass_transform instead.
    return attrs.evolve(record, **changes)  # type: ignore[misc]  # attrs.evolve is typed for attrs classes; frozen_record classes are attrs classes at run time


def fast_constructor(cls: type) -> Callable[..., Any]:
    """A function taking every field of ``cls`` positionally, in declaration order.

    For a slotted attrs class without validators, converters or an
    ``__attrs_post_init__`` (what :data:`frozen_record` declares), the object it
    returns equals, field for field, ``cls(*values)`` with keyword-only fields
    passed by name: it is the same class, made with ``object.__new__`` and its
    slots filled through their descriptors. That skips the generated
    ``__init__``, which a frozen class must write through
    ``object.__setattr__``, one call per field. Raises ``TypeError`` for a class
    that needs its ``__init__``.
    """
    fields = attrs.fields(cls)
    if "__slots__" not in cls.__dict__ or hasattr(cls, "__attrs_post_init__") or any(
            field.validator is not None or field.converter is not None for field in fields):
        raise TypeError(f"{cls.__name__} needs its __init__: no fast constructor")
    setters = [getattr(cls, field.name).__set__ for field in fields]
    make = _TEMPLATES.get(len(setters))
    if make is None:
        raise TypeError(f"{cls.__name__}: no fast constructor for {len(setters)} fields")
    return make(cls, *setters)


_new = object.__new__


def _one(cls: type, a: Any) -> Callable[..., Any]:
    def make(x: Any) -> Any:
        node: Any = _new(cls)
        a(node, x)
        return node
    return make


def _two(cls: type, a: Any, b: Any) -> Callable[..., Any]:
    def make(x: Any, y: Any) -> Any:
        node: Any = _new(cls)
        a(node, x)
        b(node, y)
        return node
    return make


def _three(cls: type, a: Any, b: Any, c: Any) -> Callable[..., Any]:
    def make(x: Any, y: Any, z: Any) -> Any:
        node: Any = _new(cls)
        a(node, x)
        b(node, y)
        c(node, z)
        return node
    return make


def _four(cls: type, a: Any, b: Any, c: Any, d: Any) -> Callable[..., Any]:
    def make(x: Any, y: Any, z: Any, w: Any) -> Any:
        node: Any = _new(cls)
        a(node, x)
        b(node, y)
        c(node, z)
        d(node, w)
        return node
    return make


def _five(cls: type, a: Any, b: Any, c: Any, d: Any, e: Any) -> Callable[..., Any]:
    def make(x: Any, y: Any, z: Any, w: Any, v: Any) -> Any:
        node: Any = _new(cls)
        a(node, x)
        b(node, y)
        c(node, z)
        d(node, w)
        e(node, v)
        return node
    return make


def _six(cls: type, *s: Any) -> Callable[..., Any]:
    a, b, c, d, e, f = s

    def make(x1: Any, x2: Any, x3: Any, x4: Any, x5: Any, x6: Any) -> Any:
        node: Any = _new(cls)
        a(node, x1)
        b(node, x2)
        c(node, x3)
        d(node, x4)
        e(node, x5)
        f(node, x6)
        return node
    return make


def _seven(cls: type, *s: Any) -> Callable[..., Any]:
    a, b, c, d, e, f, g = s

    def make(x1: Any, x2: Any, x3: Any, x4: Any, x5: Any, x6: Any, x7: Any) -> Any:
        node: Any = _new(cls)
        a(node, x1)
        b(node, x2)
        c(node, x3)
        d(node, x4)
        e(node, x5)
        f(node, x6)
        g(node, x7)
        return node
    return make


def _fourteen(cls: type, *s: Any) -> Callable[..., Any]:
    """(the IR's messages: :class:`chatmd.ir.Message`)"""
    a, b, c, d, e, f, g, h, i, j, k, m, n, o = s

    def make(x1: Any, x2: Any, x3: Any, x4: Any, x5: Any, x6: Any, x7: Any, x8: Any,
             x9: Any, x10: Any, x11: Any, x12: Any, x13: Any, x14: Any) -> Any:
        node: Any = _new(cls)
        a(node, x1)
        b(node, x2)
        c(node, x3)
        d(node, x4)
        e(node, x5)
        f(node, x6)
        g(node, x7)
        h(node, x8)
        i(node, x9)
        j(node, x10)
        k(node, x11)
        m(node, x12)
        n(node, x13)
        o(node, x14)
        return node
    return make


#: Field count -> the template building that many slots (no code is generated at run time).
_TEMPLATES: dict[int, Callable[..., Callable[..., Any]]] = {
    1: _one, 2: _two, 3: _three, 4: _four, 5: _five, 6: _six, 7: _seven, 14: _fourteen,
}
