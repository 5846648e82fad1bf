"""The helpers and constants that generated code refers to by name.

Generated code (see :mod:`chatml.vm.translate`) runs in a namespace built by
:func:`base_namespace`; every name in it starting with ``_`` comes from here.
Failures are raised as ``ChatMLFailure`` with the spec's messages
(``integer overflow`` is DECISIONS 2).
"""

from __future__ import annotations

from typing import Any, NoReturn

from chatml.calls import TailCall
from chatml.journal import journal_ref
from chatml.limits import METER
from chatml.stdlib.equality import values_equal
from chatml.values import (
    ABSENT,
    MAX_INT,
    MIN_INT,
    ChatMLFailure,
    Module,
    Ref,
    TableRef,
    Variant,
)
from chatml.vm.charges import STRING_WORDS

OVERFLOW_MESSAGE = "integer overflow"


def overflow() -> NoReturn:
    raise ChatMLFailure(OVERFLOW_MESSAGE)


def out_of_bounds() -> NoReturn:
    raise ChatMLFailure("Array index out of bounds")


def match_failure() -> NoReturn:
    raise ChatMLFailure("Non-exhaustive pattern match")


def journal_item(container: list[Any], index: int) -> None:
    journal = METER.journal
    if journal is not None:
        journal.append((container, index, container[index]))


PENDING_TAIL_CALL = TailCall(overflow, ())
"""The one :class:`TailCall` that generated code returns for a ``TAIL_CALL``: the callee
sets its ``fn`` and ``args`` and returns it, and every consumer (a ``CALL`` site,
``apply``, a higher-order builtin) reads both before it makes the call -- before any
other ChatML code runs -- so one object serves every tail call (runs never overlap:
:func:`chatml.vm.run.run_boundary` holds a lock)."""


class _ChainGoesOn:
    """The type of :data:`CHAIN_GOES_ON`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "_GO"


CHAIN_GOES_ON = _ChainGoesOn()
"""``_GO`` in generated code: what an ``else if`` chain's result variable holds while the
chain goes on to its next link (see ``chatml.vm.translate._Body.op_else``); never a value."""


def base_namespace() -> dict[str, Any]:
    """A fresh namespace with everything generated code uses."""
    return {
        "__builtins__": {"type": type, "len": len, "IndexError": IndexError},
        "_M": METER,
        "_tick": METER.tickets.pop,
        "_refill": METER.refill,
        "_TC": TailCall,
        "_P": PENDING_TAIL_CALL,
        "_V": Variant,
        "_new": object.__new__,  # _new(_V) + both slots: a Variant without calling __init__
        "_TR": TableRef,
        "_NONE": Variant("None"),
        "_ABSENT": ABSENT,
        "_Ref": Ref,
        "_Module": Module,
        "_dict": dict,
        "_int": int,
        "_str": str,
        "_list": list,
        "_eq": values_equal,
        "_ovf": overflow,
        "_oob": out_of_bounds,
        "_nomatch": match_failure,
        "_jr": journal_item,
        "_jref": journal_ref,
        "_MIN": MIN_INT,
        "_MAX": MAX_INT,
        "_W": STRING_WORDS,
        "_GO": CHAIN_GOES_ON,
    }
