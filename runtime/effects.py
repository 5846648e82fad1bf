"""Decoding and validating a handler's recorded effects into an outcome, before commit
(stdlib spec 8.5, 9.5, 9.7; moderator-runtime spec 1.6, 2.2).

:func:`decode_effects` turns the local effects the task interpreter recorded
(``Effect(operation, args)``, execution order) into a :class:`Decoded`
outcome: overlay ops, at most one tool moderation, UI notices, runtime
requests and emitted events. Everything host-side is validated here, so a
handler that recorded an invalid effect commits nothing:

* item payloads must be records with a string ``id`` and a JSON ``value``
  that is a Responses item;
* replace/delete targets must be entry ids of the canonical history passed
  with the event or of already-inserted overlay entries
  (``unknown canonical moderation target "<t>"``);
* rewrite/redirect arguments must convert to JSON;
* at most one tool-moderation action.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import attrs

from chatml.json_values import JsonShapeError, to_host
from chatml.tasks import Effect
from chatml.values import Value
from runtime.items import item_problem
from runtime.moderation import (
    AppendItem,
    Approve,
    DeleteItem,
    EndSession,
    Halt,
    OverlayOp,
    PrependSystem,
    Redirect,
    Reject,
    ReplaceItem,
    RequestCompaction,
    RequestTurn,
    RewriteArgs,
    RuntimeRequest,
    ToolModeration,
)

CONFLICTING_TOOL_MODERATION = ("Expected at most one tool moderation action for a single "
                               "host event.")


class EffectError(Exception):
    """An effect that cannot be committed; ``kind`` is ``invalid``, ``target`` or ``conflict``."""

    def __init__(self, message: str, kind: str = "invalid") -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind


@attrs.frozen
class Decoded:
    overlay_ops: tuple[OverlayOp, ...] = ()
    tool_moderation: ToolModeration | None = None
    ui_notifications: tuple[str, ...] = ()
    runtime_requests: tuple[RuntimeRequest, ...] = ()
    emitted_events: tuple[Value, ...] = attrs.field(default=(), eq=False)


def _arity(effect: Effect, count: int) -> tuple[Value, ...]:
    if len(effect.args) != count:
        raise EffectError(f"{effect.operation}: expected {count} argument(s), "
                          f"got {len(effect.args)}")
    return effect.args


def _string(effect: Effect, value: Value) -> str:
    if type(value) is not str:
        raise EffectError(f"{effect.operation}: expected string argument")
    return value


def _json(prefix: str, value: Value) -> Any:
    try:
        return to_host(value)
    except (JsonShapeError, ValueError) as error:
        raise EffectError(f"{prefix}: {getattr(error, 'message', error)}") from None


def decode_item(value: Value) -> tuple[str, dict[str, Any]]:
    """(script id, Responses item) of an ``item`` record, validated."""
    if type(value) is not dict:
        raise EffectError("item: expected record value")
    if "id" not in value:
        raise EffectError("item: missing field 'id'")
    label = value["id"]
    if type(label) is not str:
        raise EffectError("item.id: expected string")
    if "value" not in value:
        raise EffectError("item: missing field 'value'")
    item = _json("item.value", value["value"])
    problem = item_problem(item)
    if problem is not None:
        raise EffectError(f"item.value: not a Responses item: {problem}")
    return label, item


def decode_effects(effects: Sequence[Effect], known_targets: Collection[str]) -> Decoded:
    """The outcome of ``effects``; :class:`EffectError` for the first invalid one."""
    ops: list[OverlayOp] = []
    moderation: ToolModeration | None = None
    notices: list[str] = []
    requests: list[RuntimeRequest] = []
    emitted: list[Value] = []

    def target(effect: Effect, value: Value) -> str:
        text = _string(effect, value)
        if text not in known_targets:
            raise EffectError(f'unknown canonical moderation target "{text}"', "target")
        return text

    def moderate(action: ToolModeration) -> None:
        nonlocal moderation
        if moderation is not None:
            raise EffectError(CONFLICTING_TOOL_MODERATION, "conflict")
        moderation = action

    for effect in effects:
        op = effect.operation
        if op == "Turn.prepend_system":
            (text,) = _arity(effect, 1)
            ops.append(PrependSystem(_string(effect, text)))
        elif op == "Turn.append_message":
            (value,) = _arity(effect, 1)
            label, item = decode_item(value)
            ops.append(AppendItem(item, label))
        elif op == "Turn.replace_message":
            target_id, value = _arity(effect, 2)
            checked = target(effect, target_id)
            label, item = decode_item(value)
            ops.append(ReplaceItem(checked, item, label))
        elif op == "Turn.delete_message":
            (target_id,) = _arity(effect, 1)
            ops.append(DeleteItem(target(effect, target_id)))
        elif op == "Turn.halt":
            (reason,) = _arity(effect, 1)
            ops.append(Halt(_string(effect, reason)))
        elif op == "Tool.approve":
            _arity(effect, 0)
            moderate(Approve())
        elif op == "Tool.reject":
            (reason,) = _arity(effect, 1)
            moderate(Reject(_string(effect, reason)))
        elif op == "Tool.rewrite_args":
            (args,) = _arity(effect, 1)
            moderate(RewriteArgs(_json("Tool.rewrite_args", args)))
        elif op == "Tool.redirect":
            name, args = _arity(effect, 2)
            moderate(Redirect(_string(effect, name), _json("Tool.redirect", args)))
        elif op == "Ui.notify":
            (message,) = _arity(effect, 1)
            notices.append(_string(effect, message))
        elif op == "Runtime.emit":
            (event,) = _arity(effect, 1)
            emitted.append(event)
        elif op == "Runtime.request_compaction":
            _arity(effect, 0)
            requests.append(RequestCompaction())
        elif op == "Runtime.request_turn":
            _arity(effect, 0)
            requests.append(RequestTurn())
        elif op == "Runtime.end_session":
            (reason,) = _arity(effect, 1)
            requests.append(EndSession(_string(effect, reason)))
        else:
            raise EffectError(f"Unknown moderator local effect '{op}'")
    return Decoded(tuple(ops), moderation, tuple(notices), tuple(requests), tuple(emitted))


__all__ = ["CONFLICTING_TOOL_MODERATION", "Decoded", "EffectError", "decode_effects",
           "decode_item"]
