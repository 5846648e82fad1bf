"""The ChatML calling convention: how builtins, hosts and compiled code meet.

Status: stable

This module is the contract between the VM, the standard library and hosts.
It owns three things (registration, installation and the journal have their
own modules, see the end):

1. **Calling function values** -- :func:`apply` and :func:`apply_callback`.
   A ChatML function value is a Python callable (``chatml.values``): a
   compiled closure (a plain Python function whose positional parameters are
   the ChatML parameters) or a builtin (marked with ``@builtin``). Never call
   one directly from a builtin or a host: compiled closures may return a
   :class:`TailCall` (proper tail calls run through a trampoline), and the
   arity check, the step/memory/depth limits and the runtime-error boundary
   live in :func:`apply`::

       apply(fn, [1, 2])            # -> value; arity checked ("Function arity mismatch")
       apply_callback("Array.map", fn, [x])   # callback errors per stdlib spec 1.4

   Inside a run (a builtin called from ChatML), errors propagate as Python
   exceptions and the run boundary turns them into one positioned runtime
   diagnostic. Outside any run (a host calling a closure it kept), :func:`apply`
   opens a run itself with default :class:`~chatml.limits.Limits` and raises
   :class:`ChatMLRuntimeError` (a ``DiagnosticError``) on failure; hosts that
   want their own limits or a transaction use :mod:`chatml.vm.run`.

2. **Errors a builtin may raise.** Raise ``ChatMLFailure(message)``
   (``chatml.values``) with the exact message of the standard-library spec;
   the VM reports it as a ``Runtime error: <message>`` at the ChatML call site
   (the innermost ChatML frame), with a ChatML stack trace. ``Task.catch``
   semantics (DECISIONS 4): a handler may catch ``ChatMLFailure`` and
   :class:`ChatMLRuntimeError`, but must let :class:`~chatml.limits.LimitExceeded`
   through. Any other exception escaping a builtin is a bug in the builtin;
   it is still reported as a runtime diagnostic (``internal error in builtin``),
   never a Python traceback.

3. **Budgets and side effects for builtins.** :func:`charge_memory` (estimated
   bytes of values the builtin builds -- see :data:`chatml.limits.COST`),
   :func:`charge_steps` (work proportional to input size), :func:`emit_output`
   (what ``print`` writes; goes to the run's sink) and the undo journal of
   transactional runs: call :func:`journal_item` / :func:`journal_ref` /
   :func:`journal_whole` *before* mutating a pre-existing array, dict (Hashtbl)
   or ref, so that a failed transactional run can be rolled back
   (:func:`rollback`).

Registering implementations and installing a surface live in their own
modules: :mod:`chatml.registration` (``@implements``, the registry) and
:mod:`chatml.install` (``install``, capability builders); the undo journal is
:mod:`chatml.journal` (its functions are re-exported here).

This module imports nothing from the VM or the standard library (both import
it). A host calling :func:`apply` outside any run needs a run boundary; the
VM provides it (:func:`set_outside_run`, called by :mod:`chatml.vm.run`, which
importing any part of :mod:`chatml.vm` loads).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from threading import get_ident

from chatcommon.diagnostics import Diagnostic, DiagnosticError
from chatml.journal import journal_item, journal_ref, journal_whole, rollback
from chatml.limits import COST, METER, WORD, LimitExceeded
from chatml.values import ChatMLFailure, Module, Value, is_builtin

__all__ = [
    "COST",
    "ChatMLFailure",
    "ChatMLRuntimeError",
    "LimitExceeded",
    "TailCall",
    "apply",
    "apply_callback",
    "charge_memory",
    "charge_steps",
    "emit_output",
    "journal_item",
    "journal_ref",
    "journal_whole",
    "rollback",
    "set_outside_run",
]

# --------------------------------------------------------------------------- tail calls


class TailCall:
    """What a compiled closure returns for a general call in tail position.

    The caller (compiled code, or :func:`apply`) keeps calling
    ``fn(*args)`` while the result is a ``TailCall``; this keeps the Python
    stack constant across any chain of tail calls. It never escapes
    :func:`apply`.
    """

    __slots__ = ("fn", "args")

    def __init__(self, fn: Callable[..., Value], args: tuple[Value, ...]) -> None:
        self.fn = fn
        self.args = args


# --------------------------------------------------------------------------- errors


class ChatMLRuntimeError(DiagnosticError):
    """A ChatML runtime error seen from outside the run: a diagnostic with phase
    ``runtime`` (its ``hint`` holds the ChatML stack trace) plus the raw
    ``message`` and ``stack`` (``[(function name, file, line), ...]``, innermost
    first)."""

    def __init__(self, diagnostic: Diagnostic, message: str,
                 stack: list[tuple[str, str, int]] | None = None,
                 limit: LimitExceeded | None = None) -> None:
        super().__init__(diagnostic)
        self.diagnostic = diagnostic
        self.message = message
        self.stack = stack or []
        self.limit = limit

    @property
    def is_limit(self) -> bool:
        """True when a budget ran out (not catchable by ``Task.catch``)."""
        return self.limit is not None


# --------------------------------------------------------------------------- apply

NUMBER_WORDS = {0: "zero arguments", 1: "exactly one argument", 2: "exactly two arguments",
                 3: "exactly three arguments"}


def expected_arity(fn: Callable[..., Value]) -> int | None:
    """The positional arity of a Python function, or ``None`` when it takes ``*args``."""
    code = getattr(fn, "__code__", None)
    if code is None or code.co_flags & 0x04:  # CO_VARARGS
        return None
    count: int = code.co_argcount
    if getattr(fn, "__self__", None) is not None:  # bound method
        count -= 1
    return count


def arity_message(fn: Callable[..., Value], expected: int) -> str:
    if not is_builtin(fn):
        return "Function arity mismatch"
    short = fn.chatml_builtin.rsplit(".", 1)[-1]  # type: ignore[attr-defined]  # a builtin carries its name (values.builtin)
    words = NUMBER_WORDS.get(expected, f"exactly {expected} arguments")
    if expected == 0:
        return f"{short}: expected zero arguments"
    return f"{short}: expected {words}"


def is_callable_value(value: Value) -> bool:
    return callable(value) and not isinstance(value, (type, Module))


OutsideRun = Callable[[Value, tuple[Value, ...]], Value]
_OUTSIDE_RUN: OutsideRun | None = None


def set_outside_run(handler: OutsideRun) -> None:
    """Install how :func:`apply` runs a call made outside any run (the VM's run boundary
    with default limits, see :func:`chatml.vm.run.call_outside_run`)."""
    global _OUTSIDE_RUN
    _OUTSIDE_RUN = handler


def apply(fn: Value, args: Iterable[Value]) -> Value:
    """Call the ChatML function value ``fn`` with ``args`` and return its result.

    Raises ``ChatMLFailure("Trying to call a non-function value")`` or
    ``ChatMLFailure("Function arity mismatch")`` (builtins: the spec's
    ``NAME: expected ...`` message) inside a run; outside a run every failure
    comes back as :class:`ChatMLRuntimeError`.
    """
    arguments = tuple(args)
    if not METER.active or METER.owner != get_ident():
        if _OUTSIDE_RUN is None:
            raise RuntimeError("chatml.calls.apply outside a run needs the VM: import chatml.vm")
        return _OUTSIDE_RUN(fn, arguments)
    if not is_callable_value(fn):
        raise ChatMLFailure("Trying to call a non-function value")
    expected = expected_arity(fn)
    if expected is not None and expected != len(arguments):
        raise ChatMLFailure(arity_message(fn, expected))
    result = fn(*arguments)
    while type(result) is TailCall:
        result = result.fn(*result.args)
    return result


def apply_callback(qualified_name: str, fn: Value, args: Iterable[Value]) -> Value:
    """:func:`apply` for a higher-order builtin's callback (stdlib spec 1.4).

    A non-function is ``<Q>: expected a function``; a closure of the wrong
    arity is ``<Q>: function arity mismatch``; an error inside the callback
    propagates unchanged.
    """
    arguments = tuple(args)
    if not is_callable_value(fn):
        raise ChatMLFailure(f"{qualified_name}: expected a function")
    expected = expected_arity(fn)
    if expected is not None and expected != len(arguments):
        raise ChatMLFailure(f"{qualified_name}: function arity mismatch")
    return apply(fn, arguments)


# --------------------------------------------------------------------------- budgets, output, journal


def charge_memory(nbytes: int) -> None:
    """Charge ``nbytes`` (an estimate) against the run's memory budget."""
    meter = METER
    meter.memory -= (nbytes + WORD - 1) // WORD
    if meter.memory < 0:
        meter.out_of_memory()


def charge_steps(steps: int) -> None:
    """Charge ``steps`` against the run's step budget."""
    METER.take(steps)


def emit_output(text: str) -> None:
    """Write ``text`` (``print`` adds the newline itself) to the run's output sink."""
    sink = METER.sink
    if sink is None:
        sys.stdout.write(text)
    else:
        sink(text)  # type: ignore[operator]  # the sink is a callable when set
