"""Shared helpers of the builtin implementations: shape errors, budgets and fast callbacks.

Argument-shape errors use the *qualified* builtin name (stdlib spec 1.3):
``String.slice: expected an int argument``; arity errors (short name) come
from :func:`chatml.calls.apply`. :func:`first_call` and :func:`bounce` let a
higher-order builtin call a ChatML function once per element with the
failure mapping of stdlib spec 1.4 and without per-call overhead. The
``charge_*`` helpers charge what a builtin builds or scans to the run's
memory and step budgets (DECISIONS 5), before building it.
"""

from __future__ import annotations

from collections.abc import Callable

from chatml import calls, limits
from chatml.limits import COST, METER
from chatml.values import ChatMLFailure, Value

STRING_COST = COST["string"]
ARRAY_COST = COST["array"]
SLOT_COST = COST["slot"]
REF_COST = COST["ref"]

SCAN_CHARS_PER_STEP = limits.SCAN_CHARS_PER_STEP
"""Builtins that scan their input charge one step per this many code points or elements."""


def shape(qualified: str, what: str) -> ChatMLFailure:
    """``<Q>: expected <what> argument`` (``what`` is e.g. ``"a string"``, ``"an int"``)."""
    return ChatMLFailure(f"{qualified}: expected {what} argument")


def charge_string(text: str) -> str:
    """Charge a newly built string against the memory budget and return it."""
    calls.charge_memory(STRING_COST + len(text))
    return text


def charge_text(size: int) -> None:
    """Charge ``size`` bytes of text about to be built."""
    calls.charge_memory(size)


def charge_array(count: int) -> None:
    """Charge an array of ``count`` slots *before* building it (so huge sizes fail cleanly)."""
    calls.charge_memory(ARRAY_COST + SLOT_COST * count)


def charge_scan(length: int) -> None:
    """Charge the steps of scanning ``length`` code points or elements."""
    if length >= SCAN_CHARS_PER_STEP:
        calls.charge_steps(length // SCAN_CHARS_PER_STEP)


def first_call(qualified: str, function: Value, args: tuple[Value, ...]
               ) -> tuple[Value, Callable[..., Value]]:
    """Apply a callback to its first arguments; also return how to call it for the rest.

    The first call goes through :func:`chatml.calls.apply_callback`, which
    checks the function (``<Q>: expected a function`` / ``<Q>: function
    arity mismatch``, stdlib spec 1.4); errors raised by the callback
    propagate unchanged. Inside a run, the rest may call the function itself
    (what :func:`chatml.calls.apply` does once the checks passed) -- the
    caller must pass each result through :func:`bounce` when it is a
    :data:`TAIL_CALL`. Outside a run, every call goes through ``apply``.
    """
    first = calls.apply_callback(qualified, function, args)
    if METER.active:
        return first, function
    return first, lambda *rest: calls.apply(function, rest)


TAIL_CALL = calls.TailCall


def bounce(result: Value) -> Value:
    """Finish a closure's pending tail calls (a ``TailCall`` result) and return the value."""
    while type(result) is TAIL_CALL:
        result = result.fn(*result.args)
    return result
