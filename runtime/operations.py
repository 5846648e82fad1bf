"""The operation handlers of the moderator capability modules (stdlib spec 7, 8.1).

:func:`operation_registry` builds the :class:`~chatml.tasks.OperationRegistry`
a session's task interpreter dispatches ``Perform``/``Spawn`` nodes to:

* local-transactional ops (``Turn.*``, ``Tool.approve/reject/rewrite_args/
  redirect``, ``Runtime.*``, ``Ui.notify``) only check their arguments here;
  the interpreter records them as effects, dropped by a ``Task.catch`` and
  decoded into an outcome at commit (:mod:`runtime.effects`);
* external ops (``Tool.call``, ``Model.call``, ``Schedule.cancel``) and async
  ops (``Tool.spawn``, ``Model.spawn``, ``Process.run``, ``Schedule.after_ms``)
  call the host's :class:`~runtime.capabilities.Capabilities` at once and are
  never rolled back;
* ``Log.*`` are diagnostics; ``Approval.*`` (UI surface) suspend the handler.

Argument errors use the spec's dispatch messages (``Turn.halt: expected
string argument``) and fail the task (catchable).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from chatml.json_values import JsonShapeError, from_host, to_host
from chatml.limits import LimitExceeded
from chatml.tasks import Operation, OperationError, OperationKind, OperationRegistry, Suspend
from chatml.values import Value, Variant
from runtime.capabilities import (
    Capabilities,
    ModelError,
    ModelOk,
    ModelRefused,
    ToolError,
    ToolOk,
)
from runtime.moderation import Phase

LOCAL = OperationKind.LOCAL
EXTERNAL = OperationKind.EXTERNAL
ASYNC = OperationKind.ASYNC
DIAGNOSTIC = OperationKind.DIAGNOSTIC

Args = tuple[Value, ...]


@attrs.frozen
class AskText:
    """A pending ``Approval.ask_text`` request."""

    prompt: str


@attrs.frozen
class AskChoice:
    """A pending ``Approval.ask_choice`` request."""

    prompt: str
    choices: tuple[str, ...]


UiRequest = AskText | AskChoice


def _arity(name: str, args: Args, count: int) -> None:
    if len(args) != count:
        raise OperationError(f"{name}: expected {count} argument(s), got {len(args)}")


def _string(name: str, value: Value, what: str = "string") -> str:
    if type(value) is not str:
        raise OperationError(f"{name}: expected {what} argument")
    return value


def _json(name: str, value: Value) -> Any:
    try:
        return to_host(value)
    except (JsonShapeError, ValueError) as error:
        raise OperationError(f"{name}: {getattr(error, 'message', error)}") from None


def _not_configured(name: str) -> OperationError:
    return OperationError(f"{name} is not configured")


def _strings_first(name: str, count: int) -> Callable[[Any, Args], None]:
    """A local op whose first ``count`` arguments must be strings."""
    def perform(_: Any, args: Args) -> None:
        for value in args[:count]:
            _string(name, value)
        return None
    return perform


def _accept(_: Any, args: Args) -> None:
    return None


def _request_turn_phase(phase: str) -> str | None:
    if phase in (Phase.TURN_END, Phase.INTERNAL_EVENT):
        return None
    return "expected one of [turn_end, internal_event]"


def operation_registry(capabilities: Capabilities, *, ui: bool = False) -> OperationRegistry:
    """The registry of every moderator operation, backed by ``capabilities``."""
    caps = capabilities
    operations: list[Operation] = []

    for level in ("debug", "info", "warn", "error"):
        operations.append(Operation(f"Log.{level}", DIAGNOSTIC, _logger(caps, level)))

    operations += [
        Operation("Turn.prepend_system", LOCAL, _strings_first("Turn.prepend_system", 1)),
        Operation("Turn.append_message", LOCAL, _accept),
        Operation("Turn.replace_message", LOCAL, _strings_first("Turn.replace_message", 1)),
        Operation("Turn.delete_message", LOCAL, _strings_first("Turn.delete_message", 1)),
        Operation("Turn.halt", LOCAL, _strings_first("Turn.halt", 1)),
        Operation("Tool.approve", LOCAL, _accept),
        Operation("Tool.reject", LOCAL, _strings_first("Tool.reject", 1)),
        Operation("Tool.rewrite_args", LOCAL, _accept),
        Operation("Tool.redirect", LOCAL, _strings_first("Tool.redirect", 1)),
        Operation("Tool.call", EXTERNAL, _tool_call(caps)),
        Operation("Tool.spawn", ASYNC, _tool_spawn(caps)),
        Operation("Model.call", EXTERNAL, _model_call(caps)),
        Operation("Model.spawn", ASYNC, _model_spawn(caps)),
        Operation("Schedule.after_ms", ASYNC, _schedule_after(caps)),
        Operation("Schedule.cancel", EXTERNAL, _schedule_cancel(caps)),
        Operation("Process.run", ASYNC, _process_run(caps)),
        Operation("Runtime.emit", LOCAL, _accept),
        Operation("Runtime.request_compaction", LOCAL, _accept),
        Operation("Runtime.request_turn", LOCAL, _accept, _request_turn_phase),
        Operation("Runtime.end_session", LOCAL, _strings_first("Runtime.end_session", 1)),
    ]
    if ui:
        operations += [
            Operation("Ui.notify", LOCAL, _strings_first("Ui.notify", 1)),
            Operation("Approval.ask_text", EXTERNAL, _ask_text),
            Operation("Approval.ask_choice", EXTERNAL, _ask_choice),
        ]
    return OperationRegistry(attrs.evolve(op, perform=_guarded(op.name, op.perform))
                             if op.kind is not LOCAL else op for op in operations)


def _guarded(name: str, perform: Callable[[Any, Args], Value]) -> Callable[[Any, Args], Value]:
    """``perform`` with host exceptions turned into task failures (``<Op>: <error>``)."""
    def guarded(interpreter: Any, args: Args) -> Value:
        try:
            return perform(interpreter, args)
        except (OperationError, Suspend, LimitExceeded):
            raise
        except Exception as error:  # noqa: BLE001 -- a failing host callback fails the task
            raise OperationError(f"{name}: {type(error).__name__}: {error}") from None
    return guarded


def _logger(caps: Capabilities, level: str) -> Callable[[Any, Args], None]:
    name = f"Log.{level}"

    def perform(_: Any, args: Args) -> None:
        _arity(name, args, 1)
        caps.on_log(level, _string(name, args[0]))
        return None
    return perform


def _tool_call(caps: Capabilities) -> Callable[[Any, Args], Value]:
    def perform(_: Any, args: Args) -> Value:
        _arity("Tool.call", args, 2)
        name = _string("Tool.call", args[0])
        payload = _json("Tool.call", args[1])
        if caps.on_tool_call is None:
            raise _not_configured("Tool.call")
        result = caps.on_tool_call(name, payload)
        if isinstance(result, ToolOk):
            return Variant("Ok", (_from_host("Tool.call", result.result),))
        if isinstance(result, ToolError):
            return Variant("Error", (result.message,))
        raise OperationError(f"Tool.call: the host returned {type(result).__name__}, "
                             "expected ToolOk or ToolError")
    return perform


def _tool_spawn(caps: Capabilities) -> Callable[[Any, Args], Value]:
    def perform(_: Any, args: Args) -> Value:
        _arity("Tool.spawn", args, 2)
        name = _string("Tool.spawn", args[0])
        payload = _json("Tool.spawn", args[1])
        if caps.on_tool_spawn is None:
            raise _not_configured("Tool.spawn")
        return caps.on_tool_spawn(name, payload)
    return perform


def _from_host(name: str, data: Any) -> Value:
    try:
        return from_host(data)
    except (JsonShapeError, ValueError) as error:
        raise OperationError(f"{name}: the host result is not JSON: "
                             f"{getattr(error, 'message', error)}") from None


def _recipe(caps: Capabilities, name: str, args: Args) -> tuple[Any, Any]:
    _arity(name, args, 2)
    recipe_name = _string(name, args[0])
    recipe = caps.model_recipes.get(recipe_name)
    if recipe is None:
        raise OperationError(f'Model recipe "{recipe_name}" is not registered')
    return recipe, _json(name, args[1])


def _model_call(caps: Capabilities) -> Callable[[Any, Args], Value]:
    def perform(_: Any, args: Args) -> Value:
        recipe, payload = _recipe(caps, "Model.call", args)
        result = recipe.call(payload)
        if isinstance(result, ModelOk):
            return Variant("Ok", (_from_host("Model.call", result.result),))
        if isinstance(result, ModelRefused):
            return Variant("Refused", (result.message,))
        if isinstance(result, ModelError):
            return Variant("Error", (result.message,))
        raise OperationError(f"Model.call: recipe \"{recipe.name}\" returned "
                             f"{type(result).__name__}, expected ModelOk, ModelRefused or "
                             "ModelError")
    return perform


def _model_spawn(caps: Capabilities) -> Callable[[Any, Args], Value]:
    def perform(_: Any, args: Args) -> Value:
        recipe, payload = _recipe(caps, "Model.spawn", args)
        if recipe.spawn is None:
            raise OperationError(f'Model.spawn: recipe "{recipe.name}" cannot be spawned '
                                 "(no model executor)")
        return recipe.spawn(payload)
    return perform


def _schedule_after(caps: Capabilities) -> Callable[[Any, Args], Value]:
    def perform(_: Any, args: Args) -> Value:
        _arity("Schedule.after_ms", args, 2)
        delay = args[0]
        if type(delay) is not int:
            raise OperationError("Schedule.after_ms: expected int argument")
        if delay < 0:
            raise OperationError("Schedule.after_ms: delay must be non-negative")
        if caps.on_schedule_after_ms is None:
            raise _not_configured("Schedule.after_ms")
        return caps.on_schedule_after_ms(delay, args[1])
    return perform


def _schedule_cancel(caps: Capabilities) -> Callable[[Any, Args], Value]:
    def perform(_: Any, args: Args) -> Value:
        _arity("Schedule.cancel", args, 1)
        timer = _string("Schedule.cancel", args[0])
        if caps.on_schedule_cancel is None:
            raise _not_configured("Schedule.cancel")
        caps.on_schedule_cancel(timer)
        return None
    return perform


def _process_run(caps: Capabilities) -> Callable[[Any, Args], Value]:
    def perform(_: Any, args: Args) -> Value:
        _arity("Process.run", args, 2)
        command = _string("Process.run", args[0])
        argv = args[1]
        if type(argv) is not list or any(type(a) is not str for a in argv):
            raise OperationError("Process.run: expected string array argument")
        if caps.on_process_run is None:
            raise _not_configured("Process.run")
        return caps.on_process_run(command, list(argv))
    return perform


def _ask_text(interpreter: Any, args: Args) -> Value:
    _arity("Approval.ask_text", args, 1)
    prompt = _string("Approval.ask_text", args[0])
    if interpreter.resumed:
        raise OperationError("Nested UI approval is not allowed.")
    raise Suspend(AskText(prompt))


def _ask_choice(interpreter: Any, args: Args) -> Value:
    _arity("Approval.ask_choice", args, 2)
    prompt = _string("Approval.ask_choice", args[0])
    choices = args[1]
    if type(choices) is not list or any(type(c) is not str for c in choices):
        raise OperationError("Approval.ask_choice: expected string array argument")
    if not choices:
        raise OperationError("Approval.ask_choice requires at least one choice.")
    if interpreter.resumed:
        raise OperationError("Nested UI approval is not allowed.")
    raise Suspend(AskChoice(prompt, tuple(choices)))


__all__ = ["AskChoice", "AskText", "UiRequest", "operation_registry"]
