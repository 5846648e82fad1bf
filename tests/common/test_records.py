"""The shared record helpers: fast constructors and builders make exactly what ``__init__`` makes."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from chatcommon.records import (
    SharedMethods,
    fast_constructor,
    frozen_record,
    lean_record,
    record_builder,
)
from chatmd.ast import Element, new_element
from chatmd.ir import Message, new_message
from chatmd.provenance import Provenance, new_provenance
from chatml import ast


@pytest.mark.parametrize("cls", ast.NODE_CLASSES, ids=lambda cls: cls.__name__)
def test_fast_constructor_matches_init_field_for_field(cls: type) -> None:
    fields = attrs.fields(cls)
    values = [object() for _ in fields]  # distinct sentinels: a swapped field would show
    positional = {f.name: v for f, v in zip(fields, values, strict=True) if not f.kw_only}
    keywords = {f.name: v for f, v in zip(fields, values, strict=True) if f.kw_only}
    expected = cls(*positional.values(), **keywords)
    made = fast_constructor(cls)(*values)
    assert type(made) is cls
    for field in fields:
        assert getattr(made, field.name) is getattr(expected, field.name)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        made.span = None  # type: ignore[attr-defined]


def test_classes_that_need_their_init_are_refused() -> None:
    @frozen_record
    class Checked(SharedMethods):
        value: int = attrs.field(validator=attrs.validators.instance_of(int))

    @attrs.define(slots=False)
    class Unslotted:
        value: int

    for cls in (Checked, Unslotted):
        with pytest.raises(TypeError):
            fast_constructor(cls)


BUILT = [(Message, new_message), (Provenance, new_provenance), (Element, new_element)]


@pytest.mark.parametrize(("cls", "build"), BUILT, ids=lambda value: getattr(value, "__name__", ""))
def test_builders_make_exactly_what_init_makes(cls: type, build: Any) -> None:
    fields = attrs.fields(cls)
    values = [object() for _ in fields]  # distinct sentinels: a swapped field would show
    expected = cls(*values)
    made = build(*values)
    assert type(made) is cls and made == expected and hash(made) == hash(expected)
    for field in fields:
        assert getattr(made, field.name) is getattr(expected, field.name)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        made.span = None
    with pytest.raises(TypeError):  # a builder takes every field, positionally
        build(*values[:-1])


def test_a_builder_that_is_not_exact_is_refused() -> None:
    @lean_record
    class Pair(SharedMethods):
        first: int
        second: int

    class Swapped(SharedMethods):
        __slots__ = ("first", "second")

        def __init__(self, first: int, second: int) -> None:
            self.first = second
            self.second = first
            self.__class__ = Pair  # type: ignore[assignment]  # (what a builder does)

    class Unfinished(SharedMethods):
        __slots__ = ("first", "second")

        def __init__(self, first: int, second: int) -> None:
            self.first = first
            self.second = second

    class OtherSlots(SharedMethods):
        __slots__ = ("first", "third")

    for builder in (Swapped, Unfinished, OtherSlots):
        with pytest.raises(TypeError):
            record_builder(Pair, builder)

    @frozen_record
    class Weak(SharedMethods):  # (has a weak-reference slot: no builder can make it)
        first: int
        second: int

    class Plain(SharedMethods):
        __slots__ = ("first", "second")

    with pytest.raises(TypeError):
        record_builder(Weak, Plain)
