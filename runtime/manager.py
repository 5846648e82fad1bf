"""The moderator manager: one live script instance for one chat session
(moderator-runtime spec 1.1-1.7, 2.4, 5.1-5.3, 6.3-6.4, 7; stdlib spec 9.4-9.8).

It owns the committed script state, the internal-event queue, the halted
flag, the overlay and a pending approval, and runs every handler as one
transaction (:mod:`runtime.handler`): on success the new state, the overlay
ops (with ids reserved from the session allocator), the emitted events and an
end-session request are committed together, and an :class:`Outcome` comes
back; on failure nothing changes and a :class:`~runtime.errors.HandlerFailed`
names the script, the phase and the ChatML position.

Every public method holds the manager's lock, so calls that execute, resume,
drain, enqueue or snapshot one manager run one after the other; a handler
dispatched while another runs on the same thread is refused.

::

    manager = ModeratorManager.create(artifact, capabilities, allocator)
    outcome = manager.handle_event(TurnStart(), session_id="s", history=entries, tools=tools)
    outcomes = manager.drain_internal_events(session_id="s", history=entries, tools=tools)
    request_items = manager.effective_history(entries)
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from chatml.snapshot import SnapshotError as DataValueError
from chatml.values import Value
from runtime.capabilities import Capabilities
from runtime.errors import (
    AwaitingUiInput,
    HandlerBusy,
    HandlerFailed,
    ModerationError,
    SessionEnded,
    SnapshotError,
    SnapshotMismatch,
)
from runtime.handler import Committable, HandlerLimits, Pending, resume_handler, run_handler
from runtime.ids import Entry, EntryAllocator, Item
from runtime.moderation import EndSession, HostEvent, InternalEvent, Outcome
from runtime.operations import AskChoice, AskText, UiRequest, operation_registry
from runtime.overlay import (
    EffectiveEntry,
    Overlay,
    OverlayChange,
    apply_ops,
    effective_items,
    project,
)
from runtime.registry import Artifact
from runtime.script_input import ScriptInputs
from runtime.snapshot import ModeratorSnapshot

SESSION_ENDED = "Session has ended"
AWAITING_UI = "Session is waiting for UI input."
DEFAULT_DRAIN = 100
_WHITESPACE = " \t\n\r\x0b\x0c"


def wall_clock_ms() -> int:
    return int(time.time() * 1000)


class Subscription:
    """Overlay changes committed after subscribing, in commit order (spec 2.4)."""

    def __init__(self, manager: ModeratorManager, on_wakeup: Callable[[], Any] | None) -> None:
        self._manager = manager
        self._on_wakeup = on_wakeup
        self._changes: list[OverlayChange] = []
        self.active = True

    def _deliver(self, change: OverlayChange) -> None:
        self._changes.append(change)
        if self._on_wakeup is not None:
            with contextlib.suppress(Exception):  # a subscriber's failure is its own (spec 2.4)
                self._on_wakeup()

    def drain_changes(self) -> list[OverlayChange]:
        with self._manager._lock:
            changes, self._changes = self._changes, []
            return changes

    def unsubscribe(self) -> None:
        """Stop receiving changes and drop pending ones (idempotent)."""
        with self._manager._lock:
            self.active = False
            self._changes = []
            if self in self._manager._subscribers:
                self._manager._subscribers.remove(self)


class _Targets:
    """Ids a replace/delete may name: the event's canonical ids plus inserted overlay ids
    (built on first use -- most handlers never ask)."""

    def __init__(self, history: Sequence[Entry], overlay: Overlay) -> None:
        self._history = history
        self._overlay = overlay
        self._ids: set[str] | None = None

    def __contains__(self, entry_id: object) -> bool:
        if self._ids is None:
            self._ids = {entry.entry_id for entry in self._history} | self._overlay.inserted_ids()
        return entry_id in self._ids

    def __iter__(self) -> Any:
        self.__contains__("")
        return iter(self._ids or ())

    def __len__(self) -> int:
        self.__contains__("")
        return len(self._ids or ())


class ModeratorManager:
    """One moderated session's script instance, state, queue, halted flag and overlay."""

    def __init__(self, artifact: Artifact, capabilities: Capabilities,
                 allocator: EntryAllocator, *, limits: HandlerLimits,
                 clock: Callable[[], int] = wall_clock_ms) -> None:
        self.artifact = artifact
        self.capabilities = capabilities
        self.allocator = allocator
        self.limits = limits
        self.clock = clock
        self._instance = artifact.instantiate(limits.vm_limits(), capabilities.on_print)
        self._operations = operation_registry(capabilities, ui=artifact.surface == "ui_moderator")
        self._inputs = ScriptInputs()
        self._state: Value = self._instance.initial_state
        self._queue: deque[Value] = deque()
        self._halted = False
        self._ended_reason: str | None = None
        self._overlay = Overlay()
        self._pending: Pending | None = None
        self._pending_context: tuple[Sequence[Entry], str] | None = None
        self._running = False
        self._lock = threading.RLock()
        self._subscribers: list[Subscription] = []
        self.restored = False

    # ----------------------------------------------------------------- creation

    @classmethod
    def create(cls, artifact: Artifact, capabilities: Capabilities | None = None,
               allocator: EntryAllocator | None = None, *,
               snapshot: ModeratorSnapshot | None = None, limits: HandlerLimits | None = None,
               clock: Callable[[], int] = wall_clock_ms) -> ModeratorManager:
        """A fresh manager, or one restored from ``snapshot`` (spec 6.4).

        A snapshot of another script id or source hash raises
        :class:`SnapshotMismatch` (naming both values) before anything is created.
        """
        if snapshot is not None:
            if snapshot.script_id != artifact.script_id:
                raise SnapshotMismatch(
                    f"the snapshot belongs to moderator script '{snapshot.script_id}', not "
                    f"'{artifact.script_id}'")
            if snapshot.script_source_hash != artifact.source_hash:
                raise SnapshotMismatch(
                    f"the snapshot was taken with moderator '{artifact.script_id}' of source "
                    f"hash {snapshot.script_source_hash}, but the script now has source hash "
                    f"{artifact.source_hash}; the script changed since the snapshot")
        manager = cls(artifact, capabilities or Capabilities(),
                      allocator or EntryAllocator(f"{artifact.script_id}/overlay"),
                      limits=limits or HandlerLimits(), clock=clock)
        if snapshot is not None:
            manager._restore(snapshot)
        return manager

    def _restore(self, snapshot: ModeratorSnapshot) -> None:
        self._state = snapshot.state_value()
        self._queue = deque(snapshot.queue_values())
        self._halted = snapshot.halted
        self._overlay = snapshot.overlay
        inserted = [e.entry_id for e in (*snapshot.overlay.prepended, *snapshot.overlay.appended)]
        self.allocator.advance_past(inserted)
        self.restored = True

    # ----------------------------------------------------------------- reading

    @property
    def script_id(self) -> str:
        return self.artifact.script_id

    @property
    def overlay(self) -> Overlay:
        return self._overlay

    @property
    def overlay_revision(self) -> int:
        return self._overlay.revision

    @property
    def ended_reason(self) -> str | None:
        """The reason of the committed end-session request (None if none in this process)."""
        return self._ended_reason

    def is_halted(self) -> bool:
        return self._halted

    def current_state(self) -> Value:
        return self._state

    def queued_events(self) -> list[Value]:
        with self._lock:
            return list(self._queue)

    def pending_ui_request(self) -> UiRequest | None:
        with self._lock:
            return None if self._pending is None else self._pending.request

    def effective_entries(self, history: Sequence[Entry]) -> list[EffectiveEntry]:
        return project(history, self._overlay)

    def effective_history(self, history: Sequence[Entry]) -> list[Item]:
        return effective_items(history, self._overlay)

    # ----------------------------------------------------------------- dispatch

    def _check_dispatch(self) -> None:
        if self._running:
            raise HandlerBusy("Session is already handling an event.")
        if self._halted:
            raise SessionEnded(SESSION_ENDED + (f" ({self._ended_reason})"
                                                if self._ended_reason else ""))
        if self._pending is not None:
            raise AwaitingUiInput(AWAITING_UI)

    def handle_event(self, event: HostEvent, *, session_id: str, history: Sequence[Entry],
                     tools: Sequence[Mapping[str, Any]] = (), now_ms: int | None = None,
                     session_meta: Any = None) -> Outcome:
        """Run ``on_event`` for ``event`` and commit it; raises a :class:`ModerationError`."""
        with self._lock:
            self._check_dispatch()
            return self._handle(event, session_id, history, tools, now_ms, session_meta)

    def _handle(self, event: HostEvent, session_id: str, history: Sequence[Entry],
                tools: Sequence[Mapping[str, Any]], now_ms: int | None,
                session_meta: Any) -> Outcome:
        phase = str(event.phase)
        inputs = self._inputs
        ctx = inputs.context(session_id=session_id,
                             now_ms=self.clock() if now_ms is None else now_ms, phase=phase,
                             history=history, tools=tools, session_meta=session_meta)
        self._running = True
        try:
            result = run_handler(self.artifact, self._instance.on_event, self._operations,
                                 ctx=ctx, state=self._state, event=inputs.event(event),
                                 phase=phase, known_targets=_Targets(history, self._overlay),
                                 limits=self.limits, sink=self.capabilities.on_print)
        except HandlerFailed:
            self._inputs.forget()  # the rollback restored values; be safe about the cache
            raise
        finally:
            self._running = False
        if isinstance(result, Pending):
            self._pending = result
            return Outcome(phase)
        return self._commit(result, phase)

    def _commit(self, result: Committable, phase: str) -> Outcome:
        decoded = result.decoded
        self._state = result.state
        overlay, change = apply_ops(self._overlay, decoded.overlay_ops, self.allocator,
                                    script_id=self.artifact.script_id,
                                    source_hash=self.artifact.source_hash, phase=phase)
        self._overlay = overlay
        self._queue.extend(decoded.emitted_events)
        for request in decoded.runtime_requests:
            if isinstance(request, EndSession):
                if not self._halted:
                    self._ended_reason = request.reason
                self._halted = True
        if result.mutated:
            self._inputs.forget()
        if change is not None:
            for subscription in list(self._subscribers):
                subscription._deliver(change)
        return Outcome(phase, decoded.overlay_ops, decoded.tool_moderation,
                       decoded.ui_notifications, decoded.runtime_requests,
                       decoded.emitted_events, change)

    # ----------------------------------------------------------------- internal events

    def enqueue_internal_event(self, value: Value) -> None:
        """Queue ``value`` for the next drain (refused once the session has ended)."""
        with self._lock:
            if self._halted:
                raise SessionEnded(SESSION_ENDED)
            self._queue.append(value)

    def drain_internal_events(self, *, session_id: str, history: Sequence[Entry],
                              tools: Sequence[Mapping[str, Any]] = (),
                              max_events: int = DEFAULT_DRAIN, now_ms: int | None = None,
                              session_meta: Any = None) -> list[Outcome]:
        """Replay queued events FIFO as ``internal_event`` (spec 5.2).

        Stops silently after ``max_events`` replays, when the queue is empty or
        once the session has ended. A failing event is consumed (not
        re-queued) and raises; the outcomes committed before it are on the
        error as ``committed``.
        """
        outcomes: list[Outcome] = []
        with self._lock:
            if self._running:
                raise HandlerBusy("Session is already handling an event.")
            while len(outcomes) < max_events:
                if self._pending is not None:
                    raise AwaitingUiInput(AWAITING_UI)
                if self._halted or not self._queue:
                    break
                value = self._queue.popleft()
                try:
                    outcomes.append(self._handle(InternalEvent(value), session_id, history,
                                                 tools, now_ms, session_meta))
                except ModerationError as error:
                    error.committed = outcomes
                    raise
        return outcomes

    # ----------------------------------------------------------------- approvals

    def resume_ui_request(self, response: str) -> list[Outcome]:
        """Answer a pending approval and finish its handler (stdlib spec 9.6)."""
        with self._lock:
            pending = self._pending
            if pending is None:
                raise ModerationError("Session is not waiting for UI input.")
            answer = response.strip(_WHITESPACE)
            request = pending.request
            if isinstance(request, AskText) and not answer:
                raise ModerationError("Approval.ask_text requires a non-empty response.")
            if isinstance(request, AskChoice) and answer not in request.choices:
                raise ModerationError("Approval.ask_choice response must match one of the "
                                      "declared choices.")
            self._pending = None
            self._running = True
            try:
                result = resume_handler(self.artifact, pending, answer, limits=self.limits,
                                        sink=self.capabilities.on_print)
            except HandlerFailed:
                self._inputs.forget()
                raise
            finally:
                self._running = False
            if isinstance(result, Pending):  # unreachable: a second approval fails (nested)
                self._pending = result
                return []
            return [self._commit(result, pending.phase)]

    # ----------------------------------------------------------------- persistence

    def snapshot(self) -> ModeratorSnapshot:
        """The persisted form (spec 6.3): refused while an approval is pending."""
        with self._lock:
            if self._pending is not None:
                raise SnapshotError("Cannot snapshot moderator while approval is suspended.")
            try:
                return ModeratorSnapshot.capture(self.artifact.script_id,
                                                 self.artifact.source_hash, self._state,
                                                 list(self._queue), self._halted, self._overlay)
            except DataValueError as error:  # pragma: no cover -- capture converts these
                raise SnapshotError(str(error)) from None

    def subscribe(self, on_wakeup: Callable[[], Any] | None = None) -> Subscription:
        """Receive the overlay changes committed from now on."""
        with self._lock:
            subscription = Subscription(self, on_wakeup)
            self._subscribers.append(subscription)
            return subscription


__all__ = ["AWAITING_UI", "DEFAULT_DRAIN", "SESSION_ENDED", "ModeratorManager", "Subscription",
           "wall_clock_ms"]
