"""The ``Option`` module (stdlib spec 4.3): options are the variants ```None`` / ```Some(x)``."""

from __future__ import annotations

from chatml.registration import implements
from chatml.values import ChatMLFailure, Value, Variant

NONE = Variant("None")


def _is_some(qualified: str, option: Value) -> bool:
    """True for ```Some(_)``, False for ```None``; anything else is the spec's error."""
    if type(option) is Variant:
        if option.tag == "None" and not option.args:
            return False
        if option.tag == "Some" and len(option.args) == 1:
            return True
    raise ChatMLFailure(f"{qualified}: expected `None or `Some(_)")


@implements("Option.none")
def none() -> Variant:
    return NONE


@implements("Option.some")
def some(value: Value) -> Variant:
    return Variant("Some", (value,))


@implements("Option.is_none")
def is_none(option: Value) -> bool:
    return not _is_some("Option.is_none", option)


@implements("Option.is_some")
def is_some(option: Value) -> bool:
    return _is_some("Option.is_some", option)


@implements("Option.get_or")
def get_or(option: Value, default: Value) -> Value:
    return option.args[0] if _is_some("Option.get_or", option) else default
