"""The shared record helpers: fast constructors make exactly what ``__init__`` makes."""

from __future__ import annotations

import attrs
import pytest

from chatcommon.records import SharedMethods, fast_constructor, frozen_record
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
