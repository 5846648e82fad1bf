"""How deep a ChatML program may nest: one stack budget for every recursive phase.

The checker, the resolver, the compiler and the bytecode translator walk the
program tree recursively, so a program nested thousands of levels deep needs
more Python stack than the interpreter's defaults allow. :func:`run_deep` runs
a phase on a helper thread with a large stack (:data:`STACK_BYTES`) and a high
recursion limit (:data:`RECURSION_LIMIT`); every phase after the checker gets
the same budget the checker had, so what the checker accepted is not refused
later for want of stack. :func:`retry_deep` does the same only when needed: it
first runs the phase on the caller's stack (no thread, so no cost for the
ordinary shallow program) and repeats it with the large budget on a
``RecursionError``. A program too deep even for that is reported by the
caller as ``chatml.too_deep`` (:func:`too_deep`) at the program's position,
never as a traceback.

Type printing and value rendering do not need this: they are iterative.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TypeVar

from chatcommon.diagnostics import Diagnostic
from chatcommon.sources import Span

#: The stack of a deep phase's helper thread.
STACK_BYTES = 512 * 1024 * 1024
#: The recursion limit while a deep phase runs.
RECURSION_LIMIT = 40_000
TOO_DEEP = "chatml.too_deep"

T = TypeVar("T")


def run_deep(function: Callable[[], T]) -> T:
    """Run ``function`` on a thread with a large stack and a high recursion limit."""
    outcome: list[T] = []
    failure: list[BaseException] = []

    def target() -> None:
        try:
            outcome.append(function())
        except BaseException as exc:  # re-raised in the caller's thread
            failure.append(exc)

    old_limit = sys.getrecursionlimit()
    old_stack = threading.stack_size()
    try:
        threading.stack_size(STACK_BYTES)
        sys.setrecursionlimit(max(old_limit, RECURSION_LIMIT))
        worker = threading.Thread(target=target, name="chatml-deep")
        worker.start()
        worker.join()
    except (RuntimeError, ValueError, MemoryError):  # no threads here: run inline
        outcome.append(function())
    finally:
        threading.stack_size(old_stack)
        sys.setrecursionlimit(old_limit)
    if failure:
        raise failure[0]
    return outcome[0]


def retry_deep(function: Callable[[], T]) -> T:
    """``function()``; after a ``RecursionError``, once more under :func:`run_deep`.

    ``function`` must be repeatable (no effects that a half-finished first try
    leaves behind). A ``RecursionError`` from the second try propagates.
    """
    if threading.current_thread().name == "chatml-deep":
        return function()  # already on the large stack
    try:
        return function()
    except RecursionError:
        pass
    return run_deep(function)


def too_deep(where: Span | str, what: str, phase: str) -> Diagnostic:
    """The ``chatml.too_deep`` diagnostic: at a span, or at the start of a file (a name)."""
    message = f"program is nested too deeply to {what}"
    hint = "split deeply nested expressions into separate bindings"
    if isinstance(where, Span):
        return Diagnostic.at(where, TOO_DEEP, message, phase=phase, hint=hint)
    return Diagnostic.for_file(where, TOO_DEEP, message, phase=phase, hint=hint)
