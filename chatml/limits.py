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
* **wall time** (optional, ``max_wall_time`` seconds) -- a deadline set when
  the run starts and checked on the step meter's slow path, i.e. at least
  every :data:`STEP_BATCH` steps, so a script that loops forever is stopped
  preemptively (``wall-time limit exceeded``) whatever its step budget. It is
  the only limit that is not deterministic, so it is off unless asked for.

Limit errors are *not* ChatML failures: ``Task.catch`` and every other
handler inside the language must let them through (DECISIONS 4).
"""

from __future__ import annotations

import itertools
import time

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
    max_wall_time: float | None = None

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


class WallTimeExceeded(LimitExceeded):
    kind = "wall_time"
    code = "chatml.wall_time_limit"


_UNLIMITED_STEPS = (1 << 30) - 1
"""Step budget that stands for "no limit"; refilled when it runs out (:meth:`Meter.out_of_steps`).
Kept below 2**30, like the memory budget, so the reserve builtins charge stays a CPython
single-digit int."""

_UNLIMITED = (1 << 30) - 1
"""Memory budget (in words) that stands for "no limit"; refilled when it runs out. Kept below
2**30 so the counter stays a CPython single-digit int (the fast path of the interpreter)."""

SCAN_CHARS_PER_STEP = 64
"""Builtins that scan their input charge one step per this many code points or elements."""

WORD = 8
"""The memory counter counts 8-byte words (so a 1 GB budget is still a small int)."""

STEP_BATCH = 1024
"""How many steps :meth:`Meter.refill` moves from the reserve into the tickets at a time."""


#: What :meth:`Meter.save` returns: steps, memory, limits, journal, sink, deadline.
SavedMeter = tuple[int, int, Limits, "list[tuple[object, object, object]] | None", object,
                   "float | None"]


class Meter:
    """The counters compiled code charges; one instance, :data:`METER`.

    **Steps** are a list of *tickets* plus a *reserve*: the remaining budget
    is ``len(tickets) + reserve`` (the :attr:`steps` property). Compiled code
    charges a step by popping a ticket -- ``tickets.pop()``, a single C call
    that cannot allocate -- and calls :meth:`refill` when the list is empty;
    ``refill`` takes the step from the reserve and moves the next batch of
    :data:`STEP_BATCH` into the tickets, or stops the run with
    ``step limit exceeded`` when nothing is left. Builtins charge through
    :meth:`take`. The accounting is exact: a run fails at the first charge
    that takes the remaining budget below zero, whatever the batching.
    ``tickets`` is one list for the meter's whole life (compiled code binds
    its ``pop``): it is cleared and extended, never replaced.

    ``memory`` is a plain *remaining* budget (in words) that compiled code
    decrements; :meth:`out_of_memory` is its slow path. ``journal`` is the
    undo log of a transactional run (``None`` otherwise) and ``sink``
    receives printed text. The run boundary (:mod:`chatml.vm.run`) saves and
    restores all of them, so nested runs are independent.
    """

    __slots__ = ("tickets", "reserve", "batch", "memory", "limits", "journal", "sink", "active",
                 "owner", "deadline")

    def __init__(self, batch: int = STEP_BATCH) -> None:
        self.tickets: list[None] = []
        self.reserve = _UNLIMITED_STEPS
        self.batch = (None,) * (batch - 1)
        """The tickets a refill adds (the batch less the step being charged)."""
        self.memory = _UNLIMITED
        self.limits = Limits.unlimited()
        self.journal: list[tuple[object, object, object]] | None = None
        self.sink: object = None
        self.active = 0
        self.owner = 0
        """``threading.get_ident()`` of the thread whose run is active."""
        self.deadline: float | None = None
        """``time.monotonic()`` past which the run stops (``Limits.max_wall_time``), or None."""

    @property
    def steps(self) -> int:
        """The remaining step budget (setting it drops the tickets into the reserve)."""
        return len(self.tickets) + self.reserve

    @steps.setter
    def steps(self, remaining: int) -> None:
        self.tickets.clear()
        self.reserve = remaining

    def reset(self, limits: Limits) -> None:
        self.limits = limits
        self.steps = _UNLIMITED_STEPS if limits.max_steps is None else limits.max_steps
        self.memory = _UNLIMITED if limits.max_memory is None else limits.max_memory // WORD
        self.deadline = (None if limits.max_wall_time is None
                         else time.monotonic() + limits.max_wall_time)

    def take(self, steps: int) -> None:
        """Charge ``steps`` steps (builtins: :func:`chatml.calls.charge_steps`)."""
        reserve = self.reserve - steps
        if reserve < 0:  # use the tickets too before giving up
            reserve += len(self.tickets)
            self.tickets.clear()
            if reserve < 0:
                self.reserve = reserve
                self.out_of_steps()
                return
        self.reserve = reserve

    def refill(self) -> None:
        """Charge one step when the tickets have run out (compiled code's slow path)."""
        if self.deadline is not None and time.monotonic() > self.deadline:
            self.out_of_time()
        reserve = self.reserve
        if reserve < 1:
            self.reserve = reserve - 1
            self.out_of_steps()
            return
        batch = self.batch
        if reserve > len(batch):
            self.reserve = reserve - len(batch) - 1
            self.tickets.extend(batch)
        else:
            self.reserve = 0
            self.tickets.extend(itertools.repeat(None, reserve - 1))

    def out_of_steps(self) -> None:
        """The budget is below zero (``steps < 0``): stop the run, or refill an unlimited one."""
        if self.limits.max_steps is None:
            self.steps = _UNLIMITED_STEPS
            return
        raise StepLimitExceeded(
            f"step limit exceeded: the script ran more than {self.limits.max_steps} steps")

    def out_of_time(self) -> None:
        self.tickets.clear()
        raise WallTimeExceeded(f"wall-time limit exceeded: the script ran longer than "
                               f"{self.limits.max_wall_time:g} s")

    def out_of_memory(self) -> None:
        if self.limits.max_memory is None:
            self.memory = _UNLIMITED
            return
        megabytes = self.limits.max_memory / (1024 * 1024)
        raise MemoryLimitExceeded(
            f"memory limit exceeded: the script allocated more than {megabytes:g} MB")

    def save(self) -> SavedMeter:
        return (self.steps, self.memory, self.limits, self.journal, self.sink, self.deadline)

    def restore(self, saved: SavedMeter) -> None:
        steps, self.memory, self.limits, self.journal, self.sink, self.deadline = saved
        self.steps = steps


METER = Meter()
"""The process-wide meter. Runs are serialised by the run boundary's lock."""
