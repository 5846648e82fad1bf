"""Running one handler as one transactional ChatML run (stdlib spec 8, 9.4; DECISIONS 4, 5).

:func:`run_handler` applies ``on_event(ctx, state, event)`` and interprets the
returned task with :class:`~chatml.tasks.TaskInterpreter`, all inside one
:func:`~chatml.vm.run.run_boundary` (one step/memory budget for the whole
handler, callbacks included). The run is *transactional*: if anything fails
-- a runtime error, a failed task, an invalid effect, a step/memory/recursion
limit, task fuel -- every in-place mutation of pre-existing ChatML arrays and
refs (the state's, ``ctx``'s) is rolled back, so the committed state is exactly
as before. On success the recorded effects are decoded and validated
(:mod:`runtime.effects`) *inside* the run, so an invalid effect also rolls back.

A handler that performs ``Approval.*`` suspends: :class:`Pending` keeps the
interpreter and the mutations journalled so far; :func:`resume_handler`
continues it (and rolls those back too if the rest fails).

Failures come back as :class:`~runtime.errors.HandlerFailed` (or a subclass)
whose diagnostic names the script, the phase and the ChatML position.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

import attrs

from chatcommon.diagnostics import Diagnostic
from chatml import calls
from chatml.calls import ChatMLRuntimeError
from chatml.limits import METER, Limits
from chatml.tasks import Completed, Failed, OperationRegistry, Suspended, TaskInterpreter
from chatml.values import Task, Value, kind_name
from chatml.vm.errors import to_runtime_error
from chatml.vm.run import run_boundary
from runtime.effects import Decoded, EffectError, decode_effects
from runtime.errors import (
    PHASE,
    ConflictingToolModeration,
    HandlerFailed,
    HandlerLimitExceeded,
    UnknownTarget,
)
from runtime.registry import Artifact


@attrs.frozen
class HandlerLimits:
    """Budgets of one handler run (DECISIONS 5): VM steps, memory (bytes), call depth, task
    fuel (task nodes visited) and spawns; None is unlimited."""

    max_steps: int | None = 10_000_000
    max_memory: int | None = 256 * 1024 * 1024
    max_depth: int = 10_000
    fuel: int | None = None
    max_spawns: int | None = None

    def vm_limits(self) -> Limits:
        return Limits(max_steps=self.max_steps, max_memory=self.max_memory,
                      max_depth=self.max_depth)


@attrs.frozen
class Committable:
    """A handler that completed: the new state and its validated outcome."""

    state: Value = attrs.field(eq=False)
    decoded: Decoded
    mutated: bool
    """True when the run mutated pre-existing arrays or refs in place."""


@attrs.define
class Pending:
    """A handler suspended on an approval request."""

    interpreter: TaskInterpreter
    request: Any
    journal: list[Any]
    phase: str
    known_targets: Collection[str]


Result = Committable | Pending


def failure(artifact: Artifact, phase: str, message: str, *,
            error: BaseException | None = None, kind: type[HandlerFailed] = HandlerFailed
            ) -> HandlerFailed:
    """A :class:`HandlerFailed` naming the script, the phase and the ChatML position.

    The position is the failing expression when ``error`` (an exception raised
    by ChatML code) has ChatML frames; otherwise the ``on_event`` binding.
    """
    text = f"moderator '{artifact.script_id}' failed in phase '{phase}': {message}"
    runtime_error = None
    if isinstance(error, ChatMLRuntimeError):
        runtime_error = error
    elif error is not None:
        runtime_error = to_runtime_error(error, artifact.file)
    if runtime_error is not None and runtime_error.stack:
        diagnostic = attrs.evolve(runtime_error.diagnostic, code=kind.code, message=text,
                                  phase=PHASE)
    else:
        line, column = artifact.on_event_position()
        diagnostic = Diagnostic(
            code=kind.code, message=text, file=artifact.file, line=line, column=column,
            phase=PHASE, source=artifact.source,
            hint="the task returned by on_event failed (a Task.fail, a failing operation or a "
                 "budget); the position is the on_event binding")
    return kind(text, diagnostic, reason=message, phase=phase, script_id=artifact.script_id)


def _effect_failure(artifact: Artifact, phase: str, error: EffectError) -> HandlerFailed:
    kind = {"target": UnknownTarget, "conflict": ConflictingToolModeration}.get(error.kind,
                                                                                HandlerFailed)
    return failure(artifact, phase, error.message, kind=kind)


def _rollback(saved_journal: list[Any]) -> None:
    """Undo this run's in-place mutations, then those of an earlier suspended part."""
    calls.rollback(METER.journal if METER.journal is not None else [])
    calls.rollback(saved_journal)


def _finish(artifact: Artifact, interpreter: TaskInterpreter, outcome: Any, phase: str,
            known_targets: Collection[str], saved_journal: list[Any]) -> _RunResult:
    """Inside the run: decode a completed task, or roll back and return the failure."""
    journal = METER.journal or []
    if isinstance(outcome, Suspended):
        return Pending(interpreter, outcome.request, saved_journal + list(journal), phase,
                       known_targets)
    if isinstance(outcome, Failed):
        _rollback(saved_journal)
        return failure(artifact, phase, outcome.message, error=outcome.error)
    assert isinstance(outcome, Completed)
    try:
        decoded = decode_effects(outcome.effects, known_targets)
    except EffectError as error:
        _rollback(saved_journal)
        return _effect_failure(artifact, phase, error)
    return Committable(outcome.value, decoded, bool(journal) or bool(saved_journal))


_RunResult = Committable | Pending | HandlerFailed


def _boundary(artifact: Artifact, phase: str, limits: HandlerLimits,
              sink: Callable[[str], Any] | None, thunk: Callable[[], _RunResult],
              saved_journal: list[Any]) -> Result:
    try:
        result = run_boundary(thunk, limits.vm_limits(), sink=sink or _discard,
                              transactional=True, file=artifact.file)
    except ChatMLRuntimeError as error:  # the boundary rolled this run's mutations back
        calls.rollback(saved_journal)
        kind = HandlerLimitExceeded if error.is_limit else HandlerFailed
        raise failure(artifact, phase, error.message, error=error, kind=kind) from None
    if isinstance(result, HandlerFailed):
        raise result
    return result


def _discard(text: str) -> None:
    return None


def run_handler(artifact: Artifact, on_event: Value, operations: OperationRegistry, *,
                ctx: Value, state: Value, event: Value, phase: str,
                known_targets: Collection[str], limits: HandlerLimits,
                sink: Callable[[str], Any] | None = None) -> Result:
    """Run ``on_event(ctx, state, event)`` and its task; raise :class:`HandlerFailed` on failure."""
    interpreter = TaskInterpreter(operations, phase=phase, fuel=limits.fuel,
                                  max_spawns=limits.max_spawns)

    def thunk() -> _RunResult:
        task = calls.apply(on_event, (ctx, state, event))
        if not isinstance(task, Task):
            _rollback([])
            return failure(artifact, phase,
                           f"Expected task result from on_event (got {kind_name(task)})")
        return _finish(artifact, interpreter, interpreter.run(task), phase, known_targets, [])

    return _boundary(artifact, phase, limits, sink, thunk, [])


def resume_handler(artifact: Artifact, pending: Pending, response: Value, *,
                   limits: HandlerLimits, sink: Callable[[str], Any] | None = None) -> Result:
    """Continue a suspended handler as if its approval returned ``response``."""
    def thunk() -> _RunResult:
        outcome = pending.interpreter.resume(response)
        return _finish(artifact, pending.interpreter, outcome, pending.phase,
                       pending.known_targets, pending.journal)

    return _boundary(artifact, pending.phase, limits, sink, thunk, pending.journal)


__all__ = ["Committable", "HandlerLimits", "Pending", "Result", "failure", "resume_handler",
           "run_handler"]
