"""The host-side task interpreter (stdlib spec 8, language spec 5.12, DECISIONS 4).

ChatML code only *builds* tasks (:mod:`chatml.values`: ``Pure``, ``Bind``,
``Map``, ``Fail``, ``Catch``, ``Perform``, ``Spawn``); a host runs them here.
The host supplies an :class:`OperationRegistry` of :class:`Operation` s --
the capabilities a ``Perform``/``Spawn`` node may ask for (``Log.info``,
``Tool.call``...) -- and gets a :class:`Completed`, :class:`Failed` or
:class:`Suspended` outcome back::

    registry = OperationRegistry([
        Operation("Log.info", OperationKind.DIAGNOSTIC, lambda run, args: log(args[0])),
        Operation("Turn.prepend_system", OperationKind.LOCAL, lambda run, args: None),
    ])
    outcome = TaskInterpreter(registry, phase="turn_start").run(task)
    if isinstance(outcome, Completed):
        commit(outcome.value, outcome.effects)

How a task runs (the algorithm of stdlib spec 8.3, on an explicit
continuation stack, so a long chain of binds needs no Python recursion):

* every node visited costs one unit of *fuel* (``fuel=None``: unlimited);
  running out raises :class:`TaskFuelExhausted`, which no ``Task.catch``
  can intercept;
* ``Bind``/``Map`` apply their ChatML function with :func:`chatml.calls.apply`;
  ``Catch`` runs its handler with the failure message;
* **DECISIONS 4** (overriding the reference, spec 12.7): every runtime error
  raised while the task runs is catchable -- ``Fail`` nodes, operation
  errors, and errors inside ``bind``/``map`` continuations and ``catch``
  handlers (``fail("boom")``, an out-of-bounds ``Array.get``...). Budget
  exhaustion (:class:`chatml.limits.LimitExceeded`: steps, memory, depth,
  task fuel) is never caught and propagates to the host;
* a continuation or handler that returns something other than a task fails
  (catchably) with ``Task.bind: the continuation must return a task, not an int``
  (the reference's message, ``Expected task result from on_event``, names
  the wrong culprit);
* ``Perform``: unknown name -> ``Unknown task operation 'OP'``; phase check
  -> ``Operation 'OP' is invalid in phase 'P': REASON``; an ``ASYNC``
  operation -> ``Operation 'OP' must be spawned``; then the operation runs.
  A ``LOCAL`` operation that succeeds is appended to :attr:`TaskInterpreter.effects`
  (``Effect(operation, args)``, execution order); an operation fails by
  raising :class:`OperationError`, and may suspend the task by raising
  :class:`Suspend` (a UI approval): the host later calls
  :meth:`TaskInterpreter.resume` with the answer;
* ``Spawn``: beyond ``max_spawns`` -> ``ChatML task limit exceeded``; unknown
  / phase as above; anything but an ``ASYNC`` operation -> ``Operation 'OP'
  is not spawnable``;
* transactional buffers: when a ``Catch`` handler takes over, the effects
  recorded inside the protected task are dropped, and every host
  :class:`Transactional` buffer is rolled back to its state at the catch
  point. Work already done outside (logs, external calls, spawns) stays.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

import attrs

from chatml import calls
from chatml.calls import ChatMLRuntimeError
from chatml.limits import LimitExceeded
from chatml.values import (
    Bind,
    Catch,
    ChatMLFailure,
    Fail,
    Map,
    Perform,
    Pure,
    Spawn,
    Task,
    Value,
    kind_name,
)

FUEL_EXHAUSTED = "ChatML task fuel exhausted"
SPAWN_LIMIT = "ChatML task limit exceeded"


class OperationKind(enum.Enum):
    """How the host treats an operation (moderator-runtime spec 1.6)."""

    LOCAL = "LT"
    """Local and transactional: recorded as an :class:`Effect` on success, dropped by a catch."""
    EXTERNAL = "ES"
    """External and synchronous (``Tool.call``): runs at once, never rolled back."""
    ASYNC = "EA"
    """External and asynchronous (``Model.spawn``): may only be spawned."""
    DIAGNOSTIC = "DG"
    """Diagnostics (``Log.info``): runs at once, never rolled back."""


class OperationError(Exception):
    """Raised by an operation to fail the task with ``message`` (catchable by ``Task.catch``)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Suspend(Exception):  # noqa: N818 -- a control signal, not an error
    """Raised by an operation to pause the task until the host calls :meth:`TaskInterpreter.resume`."""

    def __init__(self, request: Any) -> None:
        super().__init__(request)
        self.request = request


class TaskFuelExhausted(LimitExceeded):
    """The task visited more nodes than its fuel allows; not catchable."""

    kind = "fuel"
    code = "chatml.task_fuel"

    def __init__(self) -> None:
        super().__init__(FUEL_EXHAUSTED)


def allow_every_phase(phase: str) -> str | None:
    """The default phase check: no phase is refused."""
    return None


Perform_ = Callable[["TaskInterpreter", tuple[Value, ...]], Value]


@attrs.frozen
class Operation:
    """A capability the host offers to tasks.

    ``perform(interpreter, args)`` returns the task's value, raises
    :class:`OperationError` to fail it or :class:`Suspend` to pause it.
    ``phase_check(phase)`` returns ``None`` when the operation is allowed in
    ``phase``, else the reason it is not.
    """

    name: str
    kind: OperationKind
    perform: Perform_
    phase_check: Callable[[str], str | None] = allow_every_phase


class DuplicateOperations(ValueError):
    def __init__(self, names: list[str]) -> None:
        self.names = names
        super().__init__("Duplicate moderator runtime operations: " + ", ".join(names))


class OperationRegistry:
    """The operations a host offers, by name; duplicate names are refused."""

    def __init__(self, operations: Iterable[Operation] = ()) -> None:
        self._operations: dict[str, Operation] = {}
        duplicates: list[str] = []
        for operation in operations:
            if operation.name in self._operations and operation.name not in duplicates:
                duplicates.append(operation.name)
            self._operations[operation.name] = operation
        if duplicates:
            raise DuplicateOperations(duplicates)

    def get(self, name: str) -> Operation | None:
        return self._operations.get(name)

    def names(self) -> list[str]:
        return list(self._operations)

    def __contains__(self, name: object) -> bool:
        return name in self._operations

    def __len__(self) -> int:
        return len(self._operations)


@attrs.frozen
class Effect:
    """A local operation that succeeded: its name and its arguments exactly as passed."""

    operation: str
    args: tuple[Value, ...]


class Transactional(Protocol):
    """A host buffer that a ``Task.catch`` restores (emitted events, a pending end request...)."""

    def savepoint(self) -> Any: ...

    def rollback(self, savepoint: Any) -> None: ...


@attrs.frozen
class Completed:
    value: Value
    effects: tuple[Effect, ...]


@attrs.frozen
class Failed:
    """The task failed and no ``Task.catch`` handled it; nothing it recorded should be committed.

    ``error`` is the exception that started the failure when ChatML code (a
    continuation, a handler, an operation running ChatML) raised it -- its
    traceback locates the failing expression -- and None for a ``Fail`` node
    or an operation error.
    """

    message: str
    error: BaseException | None = attrs.field(default=None, eq=False, repr=False)


@attrs.frozen
class Suspended:
    """An operation paused the task; resume it with :meth:`TaskInterpreter.resume`."""

    request: Any


TaskOutcome = Completed | Failed | Suspended


# Continuation frames: (tag, function, saved effects length, host savepoints).
_BIND, _MAP, _CATCH = range(3)
# What the machine does next.
_RUN, _VALUE, _ERROR, _SUSPEND = range(4)


class TaskInterpreter:
    """Runs one task (one handler invocation) against a registry; not reusable across tasks.

    ``phase`` is passed to every operation's phase check; ``fuel`` bounds the
    nodes visited and ``max_spawns`` the ``Spawn`` nodes dispatched (``None``:
    unlimited, the moderator default); ``buffers`` are restored by catches;
    ``host`` is any object the operations want to reach through the
    interpreter they receive.
    """

    def __init__(self, registry: OperationRegistry, *, phase: str = "",
                 fuel: int | None = None, max_spawns: int | None = None,
                 buffers: Sequence[Transactional] = (), host: Any = None) -> None:
        self.registry = registry
        self.phase = phase
        self.fuel = fuel
        self.max_spawns = max_spawns
        self.buffers = tuple(buffers)
        self.host = host
        self.effects: list[Effect] = []
        self.spawned = 0
        self.resumed = False
        """True once :meth:`resume` has been called (an approval op can refuse to nest)."""
        self._stack: list[tuple[int, Value, int, tuple[Any, ...]]] = []
        self._state = "new"
        self._failure: BaseException | None = None  # what raised the error being unwound

    # ----------------------------------------------------------------- entry points

    def run(self, task: Value) -> TaskOutcome:
        """Interpret ``task`` from the start."""
        if self._state != "new":
            raise RuntimeError("a TaskInterpreter runs one task; create a new one")
        if not isinstance(task, Task):
            raise TypeError(f"expected a ChatML task, got {_a(kind_name(task))}")
        self._state = "running"
        return self._drive(_RUN, task)

    def resume(self, value: Value) -> TaskOutcome:
        """Continue a :class:`Suspended` task as if the suspending operation returned ``value``."""
        self._expect_suspended()
        self.resumed = True
        return self._drive(_VALUE, value)

    def resume_with_error(self, message: str) -> TaskOutcome:
        """Continue a :class:`Suspended` task as if the suspending operation failed with ``message``."""
        self._expect_suspended()
        self.resumed = True
        return self._drive(_ERROR, message)

    def _expect_suspended(self) -> None:
        if self._state != "suspended":
            raise RuntimeError("resume() needs a suspended task")
        self._state = "running"

    # ----------------------------------------------------------------- the machine

    def _drive(self, mode: int, payload: Any) -> TaskOutcome:
        stack = self._stack
        try:
            while True:
                if mode == _RUN:
                    mode, payload = self._step(payload)
                elif mode == _VALUE:
                    if not stack:
                        self._state = "done"
                        return Completed(payload, tuple(self.effects))
                    tag, function, _, _ = stack.pop()
                    if tag == _BIND:
                        mode, payload = self._continue_with(function, payload, "Task.bind",
                                                            "continuation")
                    elif tag == _MAP:
                        mode, payload = self._apply(function, payload)
                elif mode == _SUSPEND:
                    self._state = "suspended"
                    return Suspended(payload)
                else:  # _ERROR: unwind to the innermost catch
                    while stack and stack[-1][0] != _CATCH:
                        stack.pop()
                    if not stack:
                        self._state = "done"
                        return Failed(payload, self._failure)
                    _, handler, effect_count, savepoints = stack.pop()
                    self._failure = None
                    del self.effects[effect_count:]
                    for buffer, savepoint in zip(self.buffers, savepoints, strict=True):
                        buffer.rollback(savepoint)
                    mode, payload = self._continue_with(handler, payload, "Task.catch", "handler")
        except BaseException:
            self._state = "done"
            raise

    def _step(self, task: Any) -> tuple[int, Any]:
        """Visit one task node: what the machine does next."""
        if self.fuel is not None:
            if self.fuel <= 0:
                raise TaskFuelExhausted()
            self.fuel -= 1
        kind = type(task)
        if kind is Pure:
            return _VALUE, task.value
        if kind is Bind:
            self._stack.append((_BIND, task.continuation, 0, ()))
            return _RUN, task.task
        if kind is Map:
            self._stack.append((_MAP, task.function, 0, ()))
            return _RUN, task.task
        if kind is Fail:
            return _ERROR, task.message
        if kind is Catch:
            savepoints = tuple(buffer.savepoint() for buffer in self.buffers)
            self._stack.append((_CATCH, task.handler, len(self.effects), savepoints))
            return _RUN, task.task
        if kind is Perform:
            return self._dispatch(task, spawned=False)
        if kind is Spawn:
            return self._dispatch(task, spawned=True)
        return _ERROR, f"expected a task, not {_a(kind_name(task))}"

    def _dispatch(self, task: Perform | Spawn, *, spawned: bool) -> tuple[int, Any]:
        name = task.operation
        if spawned:
            if self.max_spawns is not None and self.spawned >= self.max_spawns:
                return _ERROR, SPAWN_LIMIT
            self.spawned += 1
        operation = self.registry.get(name)
        if operation is None:
            return _ERROR, f"Unknown task operation '{name}'"
        reason = operation.phase_check(self.phase)
        if reason is not None:
            return _ERROR, f"Operation '{name}' is invalid in phase '{self.phase}': {reason}"
        if spawned and operation.kind is not OperationKind.ASYNC:
            return _ERROR, f"Operation '{name}' is not spawnable"
        if not spawned and operation.kind is OperationKind.ASYNC:
            return _ERROR, f"Operation '{name}' must be spawned"
        try:
            value = operation.perform(self, task.args)
        except OperationError as error:
            return _ERROR, error.message
        except Suspend as suspend:
            return _SUSPEND, suspend.request
        except (ChatMLFailure, ChatMLRuntimeError) as error:  # the operation ran ChatML code
            message = failure_message(error)
            self._failure = error
            return _ERROR, message
        if operation.kind is OperationKind.LOCAL:
            self.effects.append(Effect(name, task.args))
        return _VALUE, value

    def _apply(self, function: Value, argument: Value) -> tuple[int, Any]:
        """Apply a ChatML function: ``(_VALUE, result)``, or ``(_ERROR, message)`` when it fails."""
        try:
            return _VALUE, calls.apply(function, (argument,))
        except Exception as error:  # noqa: BLE001 -- every runtime error is catchable (DECISIONS 4)
            message = failure_message(error)
            self._failure = error
            return _ERROR, message

    def _continue_with(self, function: Value, argument: Value, owner: str,
                       role: str) -> tuple[int, Any]:
        """Apply a continuation or handler, which must return the task to run next."""
        mode, result = self._apply(function, argument)
        if mode == _ERROR:
            return mode, result
        if not isinstance(result, Task):
            return _ERROR, f"{owner}: the {role} must return a task, not {_a(kind_name(result))}"
        return _RUN, result



LIMIT_CODES = frozenset(("chatml.step_limit", "chatml.memory_limit", "chatml.recursion_limit",
                         "chatml.limit_exceeded", TaskFuelExhausted.code))


def failure_message(error: Exception) -> str:
    """The message a ``Task.catch`` handler receives for ``error``; limits are re-raised.

    Inside a run, compiled ChatML code may fail with a plain Python exception
    (``ZeroDivisionError`` for ``1 / 0``...): :func:`chatml.vm.errors.to_runtime_error`
    gives it the message the run boundary would report.
    """
    if isinstance(error, LimitExceeded | RecursionError | MemoryError):
        raise error
    if isinstance(error, ChatMLFailure):
        return error.message
    if not isinstance(error, ChatMLRuntimeError):
        from chatml.vm.errors import to_runtime_error

        converted = to_runtime_error(error)
        if converted.code in LIMIT_CODES:
            raise error
        return converted.message
    if error.is_limit or error.code in LIMIT_CODES:
        raise error
    return error.message


def _a(noun: str) -> str:
    return ("an " if noun[:1] in "aeiou" else "a ") + noun


def run_task(task: Value, registry: OperationRegistry | None = None, **options: Any) -> TaskOutcome:
    """Interpret ``task`` with a fresh :class:`TaskInterpreter` (``options`` as its keywords)."""
    return TaskInterpreter(registry or OperationRegistry(), **options).run(task)
