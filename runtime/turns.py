"""The turn driver: the moderation boundaries of one model turn (moderator-runtime spec 1.5,
3, 5.3, 7).

:class:`TurnDriver` turns the canonical order of a moderated turn into calls
a host makes at each boundary, and surfaces runtime requests without deciding
what to do with them (that is :mod:`runtime.policy`'s job):

* :meth:`start_session` -- ``session_start`` (or ``session_resume``), then a
  drain unless it ended the session;
* :meth:`prepare_turn` -- ``turn_start``, drain, effective history, then the
  transient steering text as one developer message (not when ending);
* :meth:`moderate_tool_call` -- ``pre_tool_call`` with the provisional call
  as the last item; the moderated call (approve / reject / rewrite / redirect);
* :meth:`item_appended` -- ``message_appended`` (no drain);
* :meth:`handle_tool_result` -- ``post_tool_response``, ``message_appended``
  for the output (unless it ended the session), drain;
* :meth:`finish_turn` -- ``turn_end``, drain.

Once the session has ended every boundary is a no-op. A committed handler of
any phase but ``pre_tool_call`` that moderated a tool raises
:class:`~runtime.errors.UnexpectedToolModeration`. Without a manager (a
prompt with no moderator) every method is a pass-through.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from chatml import json_text
from runtime.errors import AwaitingUiInput, UnexpectedToolModeration
from runtime.ids import Entry, Item
from runtime.items import call_payload, developer_message, is_custom, with_call
from runtime.manager import ModeratorManager
from runtime.moderation import (
    Approve,
    EndSession,
    HostEvent,
    ItemAppended,
    Outcome,
    PostToolResponse,
    PreToolCall,
    Redirect,
    Reject,
    RewriteArgs,
    RuntimeRequest,
    SessionResume,
    SessionStart,
    TurnEnd,
    TurnStart,
    requests_of,
)
from runtime.policy import RuntimePolicy
from runtime.steering import SteeringQueue

Tools = Sequence[Mapping[str, Any]]


@attrs.frozen
class PreparedTurn:
    """The request input of a turn (``inputs``), or ``stop`` when the session must not go on."""

    inputs: list[Item]
    runtime_requests: tuple[RuntimeRequest, ...]
    stop: bool
    outcomes: tuple[Outcome, ...] = ()
    steering_text: str | None = None


@attrs.frozen
class ModeratedToolCall:
    """A tool call after ``pre_tool_call``: the call item to record, what to run, and the
    synthetic output when the call was rejected (then nothing runs)."""

    call_item: Item
    name: str
    payload: str
    custom: bool
    synthetic_output: str | None
    runtime_requests: tuple[RuntimeRequest, ...] = ()
    moderation: Any = None


def payload_text(args: Any, *, custom: bool) -> str:
    """Rewritten arguments as the runner's payload: compact strict JSON; a custom tool gets a
    JSON string's text itself (spec 3)."""
    if custom and isinstance(args, str):
        return args
    return json_text.dumps(args)


class TurnDriver:
    """Moderation boundaries for one session (stateless beyond the manager)."""

    def __init__(self, manager: ModeratorManager | None, session_id: str, *,
                 policy: RuntimePolicy | None = None, session_meta: Any = None) -> None:
        self.manager = manager
        self.session_id = session_id
        self.policy = policy or RuntimePolicy()
        self.session_meta = session_meta

    @property
    def ended(self) -> bool:
        return self.manager is not None and self.manager.is_halted()

    # ----------------------------------------------------------------- primitives

    def _dispatch(self, event: HostEvent, history: Sequence[Entry], tools: Tools) -> Outcome:
        assert self.manager is not None
        outcome = self.manager.handle_event(event, session_id=self.session_id, history=history,
                                            tools=tools, session_meta=self.session_meta)
        self._refuse_suspension(outcome.phase)
        _refuse_tool_moderation(outcome)
        return outcome

    def _refuse_suspension(self, phase: str) -> None:
        """A turn cannot wait for an approval in the middle of a boundary: fail closed."""
        assert self.manager is not None
        if self.manager.pending_ui_request() is not None:
            raise AwaitingUiInput(
                f"moderator '{self.manager.script_id}' asked for UI input during {phase}; "
                "a turn cannot wait for it -- answer with manager.resume_ui_request() "
                "outside a turn")

    def drain(self, history: Sequence[Entry], tools: Tools) -> list[Outcome]:
        """Replay queued internal events (a safe point); nothing once the session ended."""
        if self.manager is None or self.ended:
            return []
        outcomes = self.manager.drain_internal_events(
            session_id=self.session_id, history=history, tools=tools,
            max_events=self.policy.budget.max_internal_event_drain,
            session_meta=self.session_meta)
        for outcome in outcomes:
            _refuse_tool_moderation(outcome)
        return outcomes

    def _step(self, event: HostEvent, history: Sequence[Entry], tools: Tools,
              drain: bool = True) -> list[Outcome]:
        """One safe-point step: the event, then (unless it ended the session) a drain."""
        if self.manager is None or self.ended:
            return []
        outcomes = [self._dispatch(event, history, tools)]
        if drain and not self.ended:
            outcomes += self.drain(history, tools)
        return outcomes

    # ----------------------------------------------------------------- boundaries

    def start_session(self, history: Sequence[Entry], tools: Tools, *,
                      resumed: bool = False) -> list[Outcome]:
        """``session_start`` / ``session_resume``, then a drain."""
        return self._step(SessionResume() if resumed else SessionStart(), history, tools)

    def prepare_turn(self, history: Sequence[Entry], tools: Tools,
                     steering: SteeringQueue | None = None) -> PreparedTurn:
        """``turn_start`` + drain + effective history + transient steering text."""
        if self.manager is None:
            inputs = [entry.item for entry in history]
            note = steering.consume_transient_text() if steering is not None else None
            if note is not None:
                inputs.append(developer_message(note))
            return PreparedTurn(inputs, (), False, (), note)
        if self.ended:
            return PreparedTurn([], (), True)
        outcomes = tuple(self._step(TurnStart(), history, tools))
        requests = tuple(requests_of(outcomes))
        if self.ended or any(isinstance(r, EndSession) for r in requests):
            return PreparedTurn([], requests, True, outcomes)
        inputs = self.manager.effective_history(history)
        note = steering.consume_transient_text() if steering is not None else None
        if note is not None:
            inputs.append(developer_message(note))
        return PreparedTurn(inputs, requests, False, outcomes, note)

    def moderate_tool_call(self, history: Sequence[Entry], tools: Tools, call_entry: Entry
                           ) -> ModeratedToolCall:
        """``pre_tool_call`` for the provisional ``call_entry`` (not yet in ``history``)."""
        item = call_entry.item
        custom = is_custom(item)
        name = str(item.get("name", ""))
        payload = call_payload(item)
        unchanged = ModeratedToolCall(item, name, payload, custom, None)
        if self.manager is None or self.ended:
            return unchanged
        event = PreToolCall(str(item.get("call_id", "")), name, payload)
        outcome = self.manager.handle_event(event, session_id=self.session_id,
                                            history=[*history, call_entry], tools=tools,
                                            session_meta=self.session_meta)
        self._refuse_suspension(outcome.phase)
        requests = outcome.runtime_requests
        action = outcome.tool_moderation
        if action is None or isinstance(action, Approve):
            return attrs.evolve(unchanged, runtime_requests=requests, moderation=action)
        if isinstance(action, Reject):
            return attrs.evolve(unchanged, synthetic_output=action.reason,
                                runtime_requests=requests, moderation=action)
        new_name = action.name if isinstance(action, Redirect) else name
        assert isinstance(action, RewriteArgs | Redirect)
        new_payload = payload_text(action.args, custom=custom)
        return ModeratedToolCall(with_call(item, new_name, new_payload), new_name, new_payload,
                                 custom, None, requests, action)

    def item_appended(self, history: Sequence[Entry], tools: Tools, entry: Entry
                      ) -> list[RuntimeRequest]:
        """``message_appended`` for ``entry`` (already the last of ``history``); no drain."""
        return requests_of(self._step(ItemAppended(entry), history, tools, drain=False))

    def handle_tool_result(self, history: Sequence[Entry], tools: Tools, name: str,
                           output_entry: Entry) -> list[RuntimeRequest]:
        """``post_tool_response`` for ``output_entry`` (the last of ``history``), then
        ``message_appended`` for it unless that ended the session, then a drain."""
        if self.manager is None or self.ended:
            return []
        item = output_entry.item
        event = PostToolResponse(str(item.get("call_id", "")), name, item.get("output"))
        outcomes = [self._dispatch(event, history, tools)]
        if not self.ended:
            outcomes += self._step(ItemAppended(output_entry), history, tools)
        return requests_of(outcomes)

    def finish_turn(self, history: Sequence[Entry], tools: Tools) -> list[RuntimeRequest]:
        """``turn_end``, then a drain."""
        return requests_of(self._step(TurnEnd(), history, tools))


def _refuse_tool_moderation(outcome: Outcome) -> None:
    if outcome.tool_moderation is not None:
        raise UnexpectedToolModeration(
            f"{outcome.phase} returned an unexpected tool moderation action: "
            f"{type(outcome.tool_moderation).__name__}")


__all__ = ["ModeratedToolCall", "PreparedTurn", "TurnDriver", "payload_text"]
