"""Run limits: the step, memory and recursion budgets of one ChatML run (DECISIONS 5).

This module owns :class:`Limits` (what a host asks for), :data:`METER` (the
process-wide meter that compiled code and builtins charge while a run is
active) and the :class:`LimitExceeded` errors. It knows nothing about
bytecode or the VM.

Accounting, precisely:

* **steps** -- one step per function entry (closures; a self tail call that
  became a loop counts once per iteration) and one per ``while`` iteration.
  Builtins may charge more with :func:`chatml.calls.charge_steps` (for work
  proportional to their input). When the remaining budget goes below zero the
  run stops with ``step limit exceeded``.
* **memory** -- an *allocation* budget: the estimated bytes of every array,
  string, record, variant, ref and closure the run creates, charged at the
  creation site (see :data:`COST`), whether or not the value is still alive
  later. It is deterministic (the same run always charges the same amount)
  and bounds the work a run can do with the allocator. Builtins that build
  values charge with :func:`chatml.calls.charge_memory`.
* **depth** -- nested non-tail calls (Python frames, including builtins that
  call back into ChatML). Going deeper raises ``recursion limit exceeded``
  instead of crashing the interpreter.

Limit errors are *not* ChatML failures: ``Task.catch`` and every other
handler inside the language must let them through (DECISIONS 4).
"""

from __future__ import annotations

import attrs

DEFAULT_MAX_STEPS = 200_000_000
DEFAULT_MAX_MEMORY = 1024 * 1024 * 1024
DEFAULT_MAX_DEPTH = 20_000

COST = {
    "record": 64,      # + FIELD per field
    "field": 16,
    "array": 56,       # + SLOT per element
    "slot": 8,
    "string": 49,      # + 1 per code point (upper bound of CPython's compact ASCII form)
    "variant": 56,     # + SLOT per payload value
    "ref": 40,
    "closure": 136,
}
"""Estimated CPython sizes (bytes) used to charge allocations."""


@attrs.frozen
class Limits:
    """The budgets of one run; ``None`` means unlimited."""

    max_steps: int | None = DEFAULT_MAX_STEPS
    max_memory: int | None = DEFAULT_MAX_MEMORY
    max_depth: int = DEFAULT_MAX_DEPTH

    @classmethod
    def unlimited(cls) -> Limits:
        return cls(max_steps=None, max_memory=None)


class LimitExceeded(Exception):
    """A budget ran out. Never catchable from ChatML; the run stops."""

    kind = "limit"
    code = "chatml.limit_exceeded"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class StepLimitExceeded(LimitExceeded):
    kind = "steps"
    code = "chatml.step_limit"


class MemoryLimitExceeded(LimitExceeded):
    kind = "memory"
    code = "chatml.memory_limit"


class DepthLimitExceeded(LimitExceeded):
    kind = "depth"
    code = "chatml.recursion_limit"


_UNLIMITED = (1 << 30) - 1
"""Budget value that stands for "no limit"; refilled when it runs out. Kept below 2**30 so
the counters stay CPython single-digit ints (the fast path of the interpreter)."""

WORD = 8
"""The memory counter counts 8-byte words (so a 1 GB budget is still a small int)."""


class Meter:
    """The counters compiled code decrements; one instance, :data:`METER`.

    Compiled code reads and writes ``steps`` and ``memory`` directly (they are
    *remaining* budgets); :meth:`out_of_steps` / :meth:`out_of_memory` are the
    slow paths it calls when one goes negative. ``journal`` is the undo log of
    a transactional run (``None`` otherwise) and ``sink`` receives printed
    text. The run boundary (:mod:`chatml.vm.run`) saves and restores all of
    them, so nested runs are independent.
    """

    __slots__ = ("steps", "memory", "limits", "journal", "sink", "active", "owner")

    def __init__(self) -> None:
        self.steps = _UNLIMITED
        self.memory = _UNLIMITED
        self.limits = Limits.unlimited()
        self.journal: list[tuple[object, object, object]] | None = None
        self.sink: object = None
        self.active = 0
        self.owner = 0
        """``threading.get_ident()`` of the thread whose run is active."""

    def reset(self, limits: Limits) -> None:
        self.limits = limits
        self.steps = _UNLIMITED if limits.max_steps is None else limits.max_steps
        self.memory = _UNLIMITED if limits.max_memory is None else limits.max_memory // WORD

    def out_of_steps(self) -> None:
        if self.limits.max_steps is None:
            self.steps = _UNLIMITED
            return
        raise StepLimitExceeded(
            f"step limit exceeded: the script ran more than {self.limits.max_steps} steps")

    def spend(self, remaining: int) -> int:
        """Slow path of a frame-local step counter that went negative: raises, or refills
        an unlimited budget and returns the new remaining count."""
        self.steps = remaining
        self.out_of_steps()
        return self.steps

    def out_of_memory(self) -> None:
        if self.limits.max_memory is None:
            self.memory = _UNLIMITED
            return
        megabytes = self.limits.max_memory / (1024 * 1024)
        raise MemoryLimitExceeded(
            f"memory limit exceeded: the script allocated more than {megabytes:g} MB")

    def save(self) -> tuple[object, ...]:
        return (self.steps, self.memory, self.limits, self.journal, self.sink)

    def restore(self, saved: tuple[object, ...]) -> None:
        (self.steps, self.memory, self.limits, self.journal,  # type: ignore[assignment]
         self.sink) = saved


METER = Meter()
"""The process-wide meter. Runs are serialised by the run boundary's lock."""
