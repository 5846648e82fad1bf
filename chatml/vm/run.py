"""The run boundary: where a host starts ChatML code, and where errors come out.

Every entry into ChatML from outside goes through :func:`run_boundary`
(:func:`run_program` for a program's top level, :func:`call` for a function
value the host kept, and :func:`chatml.calls.apply` when no run is active).
The boundary

* installs the run's :class:`~chatml.limits.Limits` into the meter and
  Python's recursion limit (so deep non-tail recursion raises
  ``recursion limit exceeded``, not a crash), and restores both afterwards;
* routes printed output to the host's ``sink`` (default: ``sys.stdout``);
* for a **transactional** run, journals every mutation of a pre-existing
  array, ref or Hashtbl and, if the run fails for any reason (runtime error,
  step/memory/recursion limit), rolls them back, so host-visible ChatML
  state is exactly as before the run (DECISIONS 5). Output already sent to
  the sink is the host's to discard (give a buffering sink);
* converts any exception into one :class:`~chatml.calls.ChatMLRuntimeError`
  (a positioned ``runtime`` diagnostic with a ChatML stack trace).

Runs are serialised by a process-wide lock (the meter is shared).
:func:`on_large_stack` runs a callable on a helper thread with a large C
stack, for hosts that expect very deep recursion through builtins.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from chatml.calls import (
    ChatMLRuntimeError,
    TailCall,
    arity_message,
    expected_arity,
    is_callable_value,
    set_outside_run,
)
from chatml.journal import rollback
from chatml.limits import METER, Limits
from chatml.values import ChatMLFailure, Value
from chatml.vm.errors import to_runtime_error
from chatml.vm.loader import LoadedProgram
from chatml.vm.runtime import PENDING_TAIL_CALL, overflow

T = TypeVar("T")

_LOCK = threading.RLock()
_MARGIN = 200

Sink = Callable[[str], Any]


def _depth() -> int:
    frame = sys._getframe()
    depth = 0
    while frame is not None:
        depth += 1
        frame = frame.f_back  # type: ignore[assignment]  # f_back is None only past the outermost frame, which the loop stops before
    return depth


Convert = Callable[[BaseException, str], ChatMLRuntimeError]
"""How a failure becomes one runtime error (the exception, the fallback file name)."""


def run_boundary(thunk: Callable[[], T], limits: Limits | None = None, *,
                 sink: Sink | None = None, transactional: bool = False,
                 file: str = "<chatml>", convert: Convert = to_runtime_error) -> T:
    """Run ``thunk`` as one ChatML run; failures raise :class:`ChatMLRuntimeError`
    (made by ``convert``: the translated VM's traceback mapping by default)."""
    limits = limits or Limits()
    with _LOCK:
        saved = METER.save()
        saved_owner = METER.owner
        METER.owner = threading.get_ident()
        outer_sink = METER.sink
        METER.reset(limits)
        METER.journal = [] if transactional else None
        METER.sink = sink if sink is not None else outer_sink
        METER.active += 1
        old_limit = sys.getrecursionlimit()
        sys.setrecursionlimit(_depth() + limits.max_depth + _MARGIN)
        try:
            return thunk()
        except (KeyboardInterrupt, SystemExit):
            if METER.journal:
                rollback(METER.journal)
            raise
        except BaseException as error:  # every failure becomes one runtime diagnostic
            if METER.journal:
                rollback(METER.journal)
            raise convert(error, file) from None
        finally:
            PENDING_TAIL_CALL.fn, PENDING_TAIL_CALL.args = overflow, ()  # keeps nothing alive
            sys.setrecursionlimit(old_limit)
            METER.active -= 1
            METER.owner = saved_owner
            METER.restore(saved)


def run_program(program: LoadedProgram, limits: Limits | None = None, *,
                sink: Sink | None = None, transactional: bool = False) -> None:
    """Run the top level of ``program`` (its ``let``s define the program's globals)."""
    run_boundary(program.main, limits, sink=sink, transactional=transactional,
                 file=program.module.source_name)


def _invoke(fn: Value, args: tuple[Value, ...]) -> Value:
    if not is_callable_value(fn):
        raise ChatMLFailure("Trying to call a non-function value")
    expected = expected_arity(fn)
    if expected is not None and expected != len(args):
        raise ChatMLFailure(arity_message(fn, expected))
    result = fn(*args)
    while type(result) is TailCall:
        result = result.fn(*result.args)
    return result


def call(fn: Value, args: Iterable[Value], limits: Limits | None = None, *,
         sink: Sink | None = None, transactional: bool = False) -> Value:
    """Call a ChatML function value from the host as one run."""
    arguments = tuple(args)
    return run_boundary(lambda: _invoke(fn, arguments), limits, sink=sink,
                        transactional=transactional)


def call_outside_run(fn: Value, args: tuple[Value, ...]) -> Value:
    """:func:`chatml.calls.apply` with no active run: one run with default limits."""
    return call(fn, args)


set_outside_run(call_outside_run)


def on_large_stack(thunk: Callable[[], T], stack_mb: int = 512) -> T:
    """Run ``thunk`` on a fresh thread with a ``stack_mb`` MB stack and return its result."""
    result: list[Any] = []
    failure: list[BaseException] = []

    def target() -> None:
        try:
            result.append(thunk())
        except BaseException as error:  # re-raised on the calling thread
            failure.append(error)

    old = threading.stack_size()
    try:
        threading.stack_size(stack_mb * 1024 * 1024)
        worker = threading.Thread(target=target, name="chatml-run", daemon=True)
        worker.start()
    finally:
        threading.stack_size(old)
    worker.join()
    if failure:
        raise failure[0]
    return result[0]


__all__ = ["ChatMLRuntimeError", "call", "on_large_stack", "run_boundary", "run_program"]
