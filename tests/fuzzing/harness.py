"""Running one entry point on one generated input: a per-call deadline and the totality property.

:func:`total` runs a call on a fresh thread (so it starts at the stack depth a
command-line process has, under the interpreter's ordinary recursion limit —
nothing here raises it) and waits at most :func:`deadline_seconds`. The call
passes when it returns or raises one of the documented diagnostic exception
types (:class:`~chatcommon.diagnostics.DiagnosticError` unless the caller says
otherwise); any other exception, a ``RecursionError`` included, or running past
the deadline is a :class:`FuzzFailure` naming the entry point.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TypeVar

from chatcommon.diagnostics import DiagnosticError

T = TypeVar("T")

#: Seconds one entry point may take on one input (``CHATMD_FUZZ_DEADLINE`` overrides).
DEFAULT_DEADLINE = 10.0


class FuzzFailure(AssertionError):
    """An entry point crashed, or overran its deadline, on a generated input."""


def deadline_seconds() -> float:
    """The per-call deadline: ``CHATMD_FUZZ_DEADLINE`` seconds, else :data:`DEFAULT_DEADLINE`."""
    raw = os.environ.get("CHATMD_FUZZ_DEADLINE", "")
    try:
        return float(raw) if raw else DEFAULT_DEADLINE
    except ValueError:
        return DEFAULT_DEADLINE


class _Outcome:
    __slots__ = ("value", "error", "done")

    def __init__(self) -> None:
        self.value: object = None
        self.error: BaseException | None = None
        self.done = False


def _run(call: Callable[[], object], outcome: _Outcome) -> None:
    try:
        outcome.value = call()
    except BaseException as exc:  # reported by the waiting thread
        outcome.error = exc
    outcome.done = True


def total(label: str, call: Callable[[], T],
          allowed: tuple[type[BaseException], ...] = (DiagnosticError,)) -> T | None:
    """``call()``'s result, or None when it raised an ``allowed`` type; else :class:`FuzzFailure`."""
    outcome = _Outcome()
    worker = threading.Thread(target=_run, args=(call, outcome), name=f"fuzz-{label}",
                              daemon=True)
    worker.start()
    limit = deadline_seconds()
    worker.join(limit)
    if not outcome.done:
        raise FuzzFailure(f"{label}: no answer within {limit:g} s")
    error = outcome.error
    if error is None:
        return outcome.value  # type: ignore[return-value]
    if isinstance(error, allowed) and not isinstance(error, RecursionError):
        return None
    raise FuzzFailure(f"{label} raised {type(error).__name__}: {str(error)[:300]}") from error
