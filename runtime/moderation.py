"""The moderation vocabulary: phases, host events, overlay ops, tool moderation, runtime
requests and the outcome of one committed handler run (moderator-runtime spec 1.4, 1.7, 2.2,
3, 4.1; stdlib spec 9.2, 9.7).

Everything here is plain immutable data that the manager produces and hosts
consume; nothing here runs ChatML.
"""

from __future__ import annotations

import enum
from typing import Any

import attrs

from chatml.values import Value
from runtime.ids import Entry, Item


class Phase(enum.StrEnum):
    """The eight phase strings (``ctx.phase``)."""

    SESSION_START = "session_start"
    SESSION_RESUME = "session_resume"
    TURN_START = "turn_start"
    MESSAGE_APPENDED = "message_appended"
    PRE_TOOL_CALL = "pre_tool_call"
    POST_TOOL_RESPONSE = "post_tool_response"
    TURN_END = "turn_end"
    INTERNAL_EVENT = "internal_event"


# --------------------------------------------------------------------------- host events


@attrs.frozen
class SessionStart:
    """A fresh moderated session (```Session_start``)."""

    phase = Phase.SESSION_START


@attrs.frozen
class SessionResume:
    """A session restored from a snapshot (```Session_resume``)."""

    phase = Phase.SESSION_RESUME


@attrs.frozen
class TurnStart:
    """Before every model request (```Turn_start``)."""

    phase = Phase.TURN_START


@attrs.frozen
class ItemAppended:
    """A canonical entry was appended (```Item_appended(item)``, phase ``message_appended``)."""

    entry: Entry
    phase = Phase.MESSAGE_APPENDED


@attrs.frozen
class PreToolCall:
    """A tool call's arguments are complete (```Pre_tool_call({id; name; args})``).

    ``args`` is the payload text: parsed as JSON for the script, or passed as a
    JSON string when it does not parse.
    """

    call_id: str
    name: str
    args: str
    phase = Phase.PRE_TOOL_CALL


@attrs.frozen
class PostToolResponse:
    """A tool output exists (```Post_tool_response({call_id; name; result})``).

    ``output`` is the output item's ``output``: a text (parsed as JSON for
    the script when it parses) or a list of content parts.
    """

    call_id: str
    name: str
    output: Any
    phase = Phase.POST_TOOL_RESPONSE


@attrs.frozen
class TurnEnd:
    """After a completed model response and its tool outputs (```Turn_end``)."""

    phase = Phase.TURN_END


@attrs.frozen
class InternalEvent:
    """A queued value replayed during a drain (the raw ChatML value, phase ``internal_event``)."""

    value: Value = attrs.field(eq=False)
    phase = Phase.INTERNAL_EVENT


HostEvent = (SessionStart | SessionResume | TurnStart | ItemAppended | PreToolCall
             | PostToolResponse | TurnEnd | InternalEvent)


# --------------------------------------------------------------------------- overlay ops


@attrs.frozen
class PrependSystem:
    """``Turn.prepend_system(text)``: insert a developer message before all history."""

    text: str


@attrs.frozen
class AppendItem:
    """``Turn.append_item(item)``: insert ``item`` after all history; ``label`` = the script's id."""

    item: Item
    label: str


@attrs.frozen
class ReplaceItem:
    """``Turn.replace_item(target, item)``: show ``item`` in place of ``target``."""

    target_id: str
    item: Item
    label: str


@attrs.frozen
class DeleteItem:
    """``Turn.delete_item(target)``: hide ``target`` from the effective history."""

    target_id: str


@attrs.frozen
class Halt:
    """``Turn.halt(reason)``: record a halt reason (does not stop the driver)."""

    reason: str


OverlayOp = PrependSystem | AppendItem | ReplaceItem | DeleteItem | Halt


# --------------------------------------------------------------------------- tool moderation


@attrs.frozen
class Approve:
    """Run the call unchanged."""


@attrs.frozen
class Reject:
    """Skip the call; its output is exactly ``reason``."""

    reason: str


@attrs.frozen
class RewriteArgs:
    """Run the same tool with new arguments (host JSON)."""

    args: Any


@attrs.frozen
class Redirect:
    """Run the tool ``name`` with ``args`` instead."""

    name: str
    args: Any


ToolModeration = Approve | Reject | RewriteArgs | Redirect


# --------------------------------------------------------------------------- runtime requests


@attrs.frozen
class RequestTurn:
    """``Runtime.request_turn()``: one more ordinary turn after this one."""


@attrs.frozen
class RequestCompaction:
    """``Runtime.request_compaction()``: compact history if the host supports it."""


@attrs.frozen
class EndSession:
    """``Runtime.end_session(reason)``: stop the session cleanly (DECISIONS 15)."""

    reason: str


RuntimeRequest = RequestTurn | RequestCompaction | EndSession


# --------------------------------------------------------------------------- outcome


@attrs.frozen
class Outcome:
    """What one committed handler run did, in execution order (spec 1.7).

    ``change`` is the overlay change record of this commit (None when the
    handler made no overlay op).
    """

    phase: str
    overlay_ops: tuple[OverlayOp, ...] = ()
    tool_moderation: ToolModeration | None = None
    ui_notifications: tuple[str, ...] = ()
    runtime_requests: tuple[RuntimeRequest, ...] = ()
    emitted_events: tuple[Value, ...] = attrs.field(default=(), eq=False)
    change: Any = None

    @property
    def end_session(self) -> EndSession | None:
        """The first end-session request, if any."""
        for request in self.runtime_requests:
            if isinstance(request, EndSession):
                return request
        return None


def requests_of(outcomes: list[Outcome] | tuple[Outcome, ...]) -> list[RuntimeRequest]:
    """The runtime requests of several outcomes, concatenated in order."""
    return [request for outcome in outcomes for request in outcome.runtime_requests]


__all__ = [
    "AppendItem", "Approve", "DeleteItem", "EndSession", "Halt", "HostEvent", "InternalEvent",
    "ItemAppended", "Outcome", "OverlayOp", "Phase", "PostToolResponse", "PreToolCall",
    "PrependSystem", "Redirect", "Reject", "ReplaceItem", "RequestCompaction", "RequestTurn",
    "RewriteArgs", "RuntimeRequest", "SessionResume", "SessionStart", "ToolModeration",
    "TurnEnd", "TurnStart", "requests_of",
]
