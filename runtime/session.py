"""The embedding API: a host runs a moderated ChatMD session turn by turn, with any model
(moderator-runtime spec 1, 3, 4, 7, 9; seed 3.4-3.6).

::

    from runtime.prompt_checks import load_prompt
    from runtime.session import Session

    session = Session.open(load_prompt("chat.chatmd"), runners={"search": run_search})
    result = session.run(model)           # model(request) -> list of Responses output items
    session.save("chat.session.json")     # canonical history + moderator snapshot, atomically
    session = Session.restore(load_prompt("chat.chatmd"), "chat.session.json", ...)

A :class:`Session` holds the canonical history (entries with ids from one
allocator), the request tools and their runners, and -- when the prompt
declares a moderator -- a :class:`~runtime.manager.ModeratorManager` driven
through a :class:`~runtime.turns.TurnDriver`. ``model`` is any callable from a
:class:`ModelRequest` to the response's output items; no network is involved.

One turn (:meth:`Session.run_turn`) follows the canonical order of spec 1.5:
``turn_start`` and its drain, the effective history (plus transient steering
text) as the request, then for each output item in order: messages and
reasoning are appended (``message_appended``); a tool call goes through
``pre_tool_call`` (approve / reject / rewrite / redirect), is appended, and
its tool starts (at most 8 at once); then each call's output in call order
(``post_tool_response``, ``message_appended``, drain), the deferred canonical
steering entries, and ``turn_end`` with its drain. :meth:`Session.run` repeats
turns while the policy says continue: tool follow-ups, and moderator-requested
turns within the self-triggered budget. ``Runtime.end_session`` stops it
cleanly at the next boundary (DECISIONS 15).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import attrs

from chatmd.transcript_writer import PAYLOAD_FOLDER, append_to_transcript, payload_src_for
from runtime.capabilities import Capabilities, ModelResult
from runtime.errors import ModerationError, SnapshotMismatch
from runtime.executor import ModelExecutor
from runtime.export import export_chatmd
from runtime.handler import HandlerLimits
from runtime.ids import Entry, EntryAllocator, Item
from runtime.items import CALL_KINDS, is_custom, tool_output
from runtime.manager import ModeratorManager, wall_clock_ms
from runtime.moderation import Outcome, RuntimeRequest, requests_of
from runtime.overlay import EffectiveEntry
from runtime.policy import (
    Continue,
    RuntimePolicy,
    SelfTriggeredTurns,
    TurnDecision,
    decide_after_turn_end,
)
from runtime.registry import Artifact, ModeratorRegistry
from runtime.request_compaction import compact_file_reads
from runtime.steering import SteeringQueue
from runtime.store import SessionRecord, load_record, save_record
from runtime.tools import HostTool, Runner, ToolBox, ToolOutput, done
from runtime.turns import TurnDriver

ENDED_OUTPUT = "Session ended by moderator: {reason}"


@attrs.frozen
class ModelRequest:
    """One model request: the Responses request ``body`` (``model``, ``input``, ``tools``...)."""

    body: Mapping[str, Any]

    @property
    def input(self) -> list[Item]:
        return list(self.body["input"])

    @property
    def tools(self) -> list[Mapping[str, Any]]:
        return list(self.body.get("tools", []))


Model = Callable[[ModelRequest], Iterable[Mapping[str, Any]]]
"""What a host passes as the model: the request in, the response's output items out (a
list, or an iterator yielding each item as it completes: a streaming host's tool calls
then start, and its messages are appended, while the response is still arriving)."""


@attrs.frozen
class TurnResult:
    """One model request and what followed it."""

    request: ModelRequest | None
    """None when the turn stopped before sending (the session had ended)."""
    appended: tuple[Entry, ...]
    runtime_requests: tuple[RuntimeRequest, ...]
    tool_calls: int
    decision: TurnDecision | None
    ended_reason: str | None


@attrs.frozen
class RunResult:
    turns: tuple[TurnResult, ...]
    ended_reason: str | None

    @property
    def requests_sent(self) -> int:
        return sum(1 for turn in self.turns if turn.request is not None)


@attrs.frozen
class _Call:
    entry: Entry
    name: str
    custom: bool
    future: Future[ToolOutput]


class Session:
    """A chat session linked to its prompt's moderator (if any). See the module docstring."""

    def __init__(self, *, session_id: str, history: Sequence[Entry], allocator: EntryAllocator,
                 toolbox: ToolBox, request_options: Mapping[str, Any],
                 manager: ModeratorManager | None, policy: RuntimePolicy,
                 executor: ModelExecutor | None = None,
                 on_runtime_request: Callable[[RuntimeRequest], Any] | None = None,
                 compactor: Callable[[list[Entry]], list[Entry]] | None = None,
                 session_meta: Any = None, history_compaction: bool = False) -> None:
        self.session_id = session_id
        self._history: list[Entry] = list(history)
        self.allocator = allocator
        self.toolbox = toolbox
        self.request_options = dict(request_options)
        self.manager = manager
        self.policy = policy
        self.executor = executor
        self.on_runtime_request = on_runtime_request
        self.compactor = compactor
        self.history_compaction = history_compaction
        self.driver = TurnDriver(manager, session_id, policy=policy, session_meta=session_meta)
        self.steering = SteeringQueue()
        self.generated_from = len(self._history)
        """Index of the first entry the session generated (earlier ones came from the prompt)."""
        self._written = self.generated_from
        self._ended_reason: str | None = None
        self.startup_outcomes: list[Outcome] = []
        self.on_entry: Callable[[Entry], None] | None = None
        """Called with every entry the session appends to its history, as it is appended
        (a host's transcript writer, event log...)."""
        self.on_tool_moderated: Callable[[Mapping[str, Any], Any], None] | None = None
        """Called with the model's call item and its :class:`~runtime.turns.ModeratedToolCall`
        after ``pre_tool_call`` (a host's event log)."""

    # ----------------------------------------------------------------- opening

    @classmethod
    def open(cls, prompt: Any, *, runners: Mapping[str, Runner] | None = None,
             host_tools: Sequence[HostTool] = (), session_id: str | None = None,
             registry: ModeratorRegistry | None = None,
             capabilities: Capabilities | None = None,
             recipes: Mapping[str, Callable[[Any], ModelResult]] | None = None,
             executor: ModelExecutor | None = None, policy: RuntimePolicy | None = None,
             limits: HandlerLimits | None = None, surface: str = "moderator",
             conversion: Any = None, parallel_tool_calls: bool = True,
             clock: Callable[[], int] = wall_clock_ms,
             on_runtime_request: Callable[[RuntimeRequest], Any] | None = None,
             compactor: Callable[[list[Entry]], list[Entry]] | None = None,
             history_compaction: bool = False,
             record: SessionRecord | None = None) -> Session:
        """A session for ``prompt`` (a ``chatmd.ir.Prompt``): fresh, or resumed from ``record``.

        The prompt's conversation becomes the canonical history (fresh ids);
        its tools the request tools, run by ``runners`` (by name) and
        ``host_tools``. A moderator is compiled through ``registry`` (a new one
        by default), instantiated, and sent ``session_start`` -- or, with a
        ``record`` holding a moderator snapshot, restored (the snapshot's
        script id and source hash must match) and sent ``session_resume`` --
        then drained. ``recipes`` are model recipes by name; ``Model.spawn``
        runs them on ``executor`` (one is created when needed).
        ``on_runtime_request`` observes every runtime request; ``compactor``
        replaces canonical history when the policy honours a compaction
        request; ``history_compaction`` blanks superseded ``read_file``
        outputs in requests.
        """
        from chatcommon.diagnostics import DiagnosticError
        from chatmd.request import compile_request
        from chatmd.request_context import ConversionContext

        context = conversion or ConversionContext.local(prompt.prompt_dir or ".")
        compiled = compile_request(prompt, context)
        if compiled.request is None:
            raise DiagnosticError(compiled.diagnostics)
        body = dict(compiled.request)
        prompt_items = body.pop("input")
        definitions = body.pop("tools", [])
        sid = session_id or (record.session_id if record is not None else None) or \
            prompt.config.id or prompt.name
        if record is not None:
            allocator = EntryAllocator(record.namespace, record.next_sequence)
            history: list[Entry] = list(record.entries)
        else:
            allocator = EntryAllocator(f"{sid}/stream")
            history = [Entry(allocator.allocate(), item) for item in prompt_items]
        artifact = None
        script = prompt.moderator
        if script is not None:
            artifact = (registry or ModeratorRegistry()).compile(script, surface=surface)
        elif record is not None and record.moderator is not None:
            raise SnapshotMismatch("the session was saved with a moderator snapshot, but the "
                                   "prompt no longer declares a moderator script")
        session = cls._create(
            session_id=sid, history=history, allocator=allocator,
            toolbox=ToolBox(definitions, runners, host_tools, parallel=parallel_tool_calls),
            request_options=body, artifact=artifact, capabilities=capabilities,
            recipes=recipes, executor=executor, policy=policy, limits=limits, clock=clock,
            on_runtime_request=on_runtime_request, compactor=compactor,
            snapshot=record.moderator if record is not None else None,
            resumed=record is not None)
        session.history_compaction = history_compaction
        if record is not None:
            session.generated_from = session._written = len(history)
            session._ended_reason = record.ended_reason
        return session

    @classmethod
    def restore(cls, prompt: Any, path: str | os.PathLike[str], **options: Any) -> Session:
        """:meth:`open` from the session file at ``path`` (written by :meth:`save`)."""
        return cls.open(prompt, record=load_record(path), **options)

    @classmethod
    def _create(cls, *, session_id: str, history: list[Entry], allocator: EntryAllocator,
                toolbox: ToolBox, request_options: Mapping[str, Any],
                artifact: Artifact | None, capabilities: Capabilities | None,
                recipes: Mapping[str, Callable[[Any], ModelResult]] | None,
                executor: ModelExecutor | None, policy: RuntimePolicy | None,
                limits: HandlerLimits | None, clock: Callable[[], int],
                on_runtime_request: Callable[[RuntimeRequest], Any] | None,
                compactor: Callable[[list[Entry]], list[Entry]] | None,
                snapshot: Any, resumed: bool) -> Session:
        manager = None
        if artifact is not None:
            caps = capabilities or Capabilities()
            if recipes:
                executor = executor or ModelExecutor()
                caps = caps.with_recipes(*(executor.recipe(name, call, session_id)
                                           for name, call in recipes.items()))
            manager = ModeratorManager.create(artifact, caps, allocator, snapshot=snapshot,
                                              limits=limits, clock=clock)
        session = cls(session_id=session_id, history=history, allocator=allocator,
                      toolbox=toolbox, request_options=request_options, manager=manager,
                      policy=policy or RuntimePolicy(), executor=executor,
                      on_runtime_request=on_runtime_request, compactor=compactor)
        if manager is not None:
            session.startup_outcomes = session.driver.start_session(
                session._history, toolbox.definitions, resumed=snapshot is not None or resumed)
            session._observe(requests_of(session.startup_outcomes))
            if executor is not None:
                executor.register_session(session_id, manager)
        return session

    # ----------------------------------------------------------------- reading

    @property
    def history(self) -> list[Entry]:
        """The canonical history (a copy)."""
        return list(self._history)

    @property
    def tools(self) -> list[dict[str, Any]]:
        return self.toolbox.definitions

    @property
    def ended(self) -> bool:
        return self.ended_reason is not None

    @property
    def ended_reason(self) -> str | None:
        """Why the moderator ended the session (``Runtime.end_session``), or None."""
        if self.manager is not None and self.manager.ended_reason is not None:
            return self.manager.ended_reason
        if self.manager is not None and self.manager.is_halted() and self._ended_reason is None:
            return "session ended"
        return self._ended_reason

    def effective_entries(self) -> list[EffectiveEntry]:
        from runtime.overlay import Overlay, project

        overlay = self.manager.overlay if self.manager is not None else Overlay()
        return project(self._history, overlay)

    def effective_history(self) -> list[Item]:
        """What the next request would send (before ``turn_start`` and steering)."""
        if self.manager is None:
            return [entry.item for entry in self._history]
        return self.manager.effective_history(self._history)

    # ----------------------------------------------------------------- host input

    def _append(self, item: Item) -> Entry:
        entry = Entry(self.allocator.allocate(), item)
        self._history.append(entry)
        self._notify(entry)
        return entry

    def _notify(self, entry: Entry) -> None:
        if self.on_entry is not None:
            self.on_entry(entry)

    def add_user_message(self, text: str | Sequence[Mapping[str, Any]]) -> Entry:
        """Append a user message between turns (a host-started turn follows): a text, or
        Responses input content parts."""
        content = ([{"type": "input_text", "text": text}] if isinstance(text, str)
                   else [dict(part) for part in text])
        return self._append({"type": "message", "role": "user", "content": content})

    def append_item(self, item: Mapping[str, Any]) -> Entry:
        """Append a host-made item between turns (for example the output of a tool call a
        cancelled turn left unanswered)."""
        return self._append(dict(item))

    def rewind(self, length: int) -> None:
        """Drop the entries after the first ``length`` (a host's retry of its last turn);
        refused with a moderator, whose overlay may refer to them."""
        if self.manager is not None:
            raise ModerationError("a moderated session cannot be rewound")
        if not self.generated_from <= length <= len(self._history):
            raise ValueError(f"cannot rewind to {length} entries")
        del self._history[length:]
        self._written = min(self._written, length)

    def steer(self, text: str) -> bool:
        """A transient steering note for the next request only (False: whitespace, ignored)."""
        return self.steering.add_note(text)

    def defer_user_message(self, text: str) -> Entry:
        """A canonical steering entry: id allocated now, appended at the next safe point."""
        entry = Entry(self.allocator.allocate(), {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
        self.steering.add_entry(entry)
        return entry

    def enqueue(self, value: Any) -> None:
        """Queue a ChatML value as an internal event for the moderator."""
        if self.manager is None:
            raise ModerationError("this session has no moderator")
        self.manager.enqueue_internal_event(value)

    def drain(self) -> list[RuntimeRequest]:
        """An idle safe point: replay queued internal events; their runtime requests."""
        requests = requests_of(self.driver.drain(self._history, self.tools))
        self._observe(requests)
        return requests

    def _observe(self, requests: Sequence[RuntimeRequest]) -> None:
        if self.on_runtime_request is not None:
            for request in requests:
                self.on_runtime_request(request)

    # ----------------------------------------------------------------- turns

    def run_turn(self, model: Model) -> TurnResult:
        """One model request and its tool calls, moderated (spec 1.5)."""
        history = self._history
        tools = self.tools
        before = len(history)
        prepared = self.driver.prepare_turn(history, tools, self.steering)
        requests: list[RuntimeRequest] = list(prepared.runtime_requests)
        self._observe(prepared.runtime_requests)
        if prepared.stop:
            return TurnResult(None, (), tuple(requests), 0, None, self.ended_reason)
        body = dict(self.request_options)
        body["input"] = (compact_file_reads(prepared.inputs) if self.history_compaction
                         else prepared.inputs)
        if tools:
            body["tools"] = tools
        request = ModelRequest(body)
        outputs = model(request)
        calls: list[_Call] = []
        for item in outputs:
            if item.get("type") in CALL_KINDS:
                calls.append(self._schedule_call(dict(item), requests))
            else:
                entry = self._append(dict(item))
                self._surface(self.driver.item_appended(history, tools, entry), requests)
        for call in calls:
            output = call.future.result()
            entry = self._append(tool_output(str(call.entry.item.get("call_id", "")), output,
                                             custom=call.custom))
            self._surface(self.driver.handle_tool_result(history, tools, call.name, entry),
                          requests)
        deferred = self.steering.consume_entries() if not self.driver.ended else []
        for entry in deferred:
            history.append(entry)
            self._notify(entry)
            self._surface(self.driver.item_appended(history, tools, entry), requests)
        turn_end = self.driver.finish_turn(history, tools)
        self._surface(turn_end, requests)
        decision = decide_after_turn_end(self.policy, bool(calls) or bool(deferred), turn_end)
        if self.driver.ended:
            decision = attrs.evolve(decision, continue_=Continue.STOP,
                                    end_session_reason=self.ended_reason, requested_turn=False)
        if decision.compaction_requested and self.compactor is not None:
            self._history[:] = self.compactor(list(self._history))
        return TurnResult(request, tuple(history[before:]), tuple(requests), len(calls),
                          decision, self.ended_reason)

    def _surface(self, new: Sequence[RuntimeRequest], requests: list[RuntimeRequest]) -> None:
        requests.extend(new)
        self._observe(new)

    def _schedule_call(self, item: dict[str, Any], requests: list[RuntimeRequest]) -> _Call:
        """``pre_tool_call``, append the (moderated) call, start it -- or synthesise its output."""
        history = self._history
        tools = self.tools
        self.toolbox.check_declared(str(item.get("name", "")))  # fails the run now
        provisional = Entry(self.allocator.allocate(), item)
        moderated = self.driver.moderate_tool_call(history, tools, provisional)
        if self.on_tool_moderated is not None:
            self.on_tool_moderated(item, moderated)
        self._surface(moderated.runtime_requests, requests)
        entry = Entry(provisional.entry_id, moderated.call_item)
        history.append(entry)
        self._notify(entry)
        self._surface(self.driver.item_appended(history, tools, entry), requests)
        if moderated.synthetic_output is not None:
            future = done(moderated.synthetic_output)
        elif self.driver.ended:
            future = done(ENDED_OUTPUT.format(reason=self.ended_reason))
        else:
            future = self.toolbox.start(moderated.name, moderated.payload)
        return _Call(entry, moderated.name, is_custom(item), future)

    def run(self, model: Model, *, max_requests: int | None = None) -> RunResult:
        """Turns until the policy stops: tool follow-ups, and moderator-requested turns within
        the self-triggered budget (:class:`~runtime.errors.TurnBudgetExceeded` past it)."""
        budget = SelfTriggeredTurns(self.policy.budget.max_self_triggered_turns)
        turns: list[TurnResult] = []
        while max_requests is None or len(turns) < max_requests:
            result = self.run_turn(model)
            turns.append(result)
            decision = result.decision
            if decision is None or decision.continue_ is Continue.STOP:
                break
            if decision.requested_turn:
                budget.take()
            else:
                budget.reset()
        return RunResult(tuple(turns), self.ended_reason)

    # ----------------------------------------------------------------- persistence and output

    def record(self) -> SessionRecord:
        """Everything needed to resume: history, allocator position, moderator snapshot."""
        snapshot = self.manager.snapshot() if self.manager is not None else None
        return SessionRecord(self.session_id, self.allocator.namespace,
                             self.allocator.next_sequence, tuple(self._history), snapshot,
                             self.ended_reason)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`record` to ``path`` atomically."""
        save_record(path, self.record())

    def export_chatmd(self) -> str:
        """Canonical history as ChatMD plus the overlay annex (spec 2.5)."""
        return export_chatmd(self._history,
                             self.manager.overlay if self.manager is not None else None)

    def write_transcript(self, path: str | os.PathLike[str], *, show_tool_call: bool = False,
                         payload_dir: str | os.PathLike[str] | None = None) -> None:
        """Append the entries generated since the last write to the transcript at ``path``
        (user input messages skipped); an empty ``<user>`` block follows unless the session
        ended (spec 8.6). Payload files go to ``payload_dir`` (default: ``.chatmd`` beside
        the transcript), referred to relative to the transcript's folder."""
        items = [entry.item for entry in self._history[self._written:]
                 if not (entry.item.get("type", "message") == "message"
                         and entry.item.get("role") == "user")]
        folder = Path(payload_dir) if payload_dir is not None else \
            Path(path).parent / PAYLOAD_FOLDER
        append_to_transcript(path, items, show_tool_call=show_tool_call, payload_dir=folder,
                             payload_src=payload_src_for(folder, Path(path).parent),
                             placeholder=not self.ended)
        self._written = len(self._history)

    def close(self, timeout: float | None = 30.0) -> None:
        """Wait for spawned model jobs and stop the tool pool."""
        if self.executor is not None:
            self.executor.wait_all(timeout)
        self.toolbox.close()


__all__ = ["Model", "ModelRequest", "RunResult", "Session", "TurnResult"]
