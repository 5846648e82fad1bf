"""The file-backed run: a transcript file is the conversation's state (spec 8.1, 8.5, 8.6).

:class:`FileRun` checks the file (errors: :class:`PromptErrors`), opens a
:class:`~runtime.session.Session` for it (optionally with the moderator snapshot of a
``--session`` sidecar), and runs turns until the model answers without tool calls, the
moderator ends the session, or the request limit is reached. The streamed model yields
each output item as it completes, the session appends it (and starts a tool call) at
once, and every entry the session appends goes to the transcript as it is appended
(:class:`TranscriptAppender`), in history order. On an
interrupt or a failure, calls left without an output get a ``cancelled`` output, so the
file stays a valid conversation to continue. After a normal finish an empty ``<user>``
placeholder is appended (not after an end-session, a failure or the turn limit).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs

from chatmd.frontend import CheckResult, check_prompt
from chatmd.ir import Prompt
from runtime.driver.append_log import recover
from runtime.driver.cache import CACHE_FILE, load_cache, save_cache
from runtime.driver.client import ModelApiFailure
from runtime.driver.context import DriverContext
from runtime.driver.display import Display
from runtime.driver.setup import (
    OpenedSession,
    blocking_model,
    open_session,
    streaming_model,
    without_placeholder,
)
from runtime.driver.transcript import TranscriptAppender
from runtime.errors import SnapshotMismatch, UnknownToolError
from runtime.ids import Entry
from runtime.items import CALL_KINDS, OUTPUT_KINDS, call_payload, is_custom, tool_output
from runtime.policy import Continue
from runtime.session import Model, RunResult, Session
from runtime.store import SessionRecord, load_record

EXIT_OK = 0
EXIT_PROMPT_ERRORS = 1
EXIT_USAGE = 2
EXIT_MODEL_API = 4
EXIT_TURN_LIMIT = 5
EXIT_INTERRUPTED = 130
CANCELLED_OUTPUT = "error: the tool call was cancelled (the run was interrupted or failed)"


class PromptErrors(Exception):
    """The transcript does not check: the diagnostics (nothing was sent)."""

    def __init__(self, result: CheckResult) -> None:
        super().__init__(f"{len(result.errors)} error(s)")
        self.result = result


class UsageError(Exception):
    """Unusable input: unreadable file, bad sidecar, nothing to send (exit 2)."""


@attrs.frozen
class RunOutcome:
    status: str
    """``finished``, ``ended``, ``turn_limit``, ``failed`` or ``interrupted``."""
    exit_code: int
    requests: int = 0
    message: str | None = None
    answer: str = ""


class LiveStream:
    """The stream observer of a run: the live display (the session appends the items)."""

    def __init__(self, display: Display) -> None:
        self.display = display

    def text_delta(self, text: str) -> None:
        self.display.text_delta(text)

    def reasoning_delta(self, text: str) -> None:
        self.display.reasoning_delta(text)

    def item_started(self, item: dict[str, Any]) -> None:
        pass

    def item_done(self, item: dict[str, Any]) -> None:
        if item.get("type") in ("message", "reasoning"):
            self.display.end_block()


def _assistant_text(item: Mapping[str, Any]) -> str | None:
    if item.get("type", "message") != "message" or item.get("role") != "assistant":
        return None
    content = item.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content
                        if isinstance(part, Mapping))
    return None


class FileRun:
    """One run over a transcript file (see the module docstring)."""

    def __init__(self, transcript: str | Path, ctx: DriverContext | None = None, *,
                 session_file: str | Path | None = None) -> None:
        self.path = Path(transcript)
        self._ctx = ctx
        self.session_file = Path(session_file) if session_file is not None else None
        self.opened: OpenedSession | None = None
        self.appender: TranscriptAppender | None = None
        self.prompt: Prompt | None = None
        self.had_placeholder = False
        self.checked: CheckResult | None = None
        self.requests = 0
        self.interrupted = False
        """A turn was interrupted: tools still running are abandoned at :meth:`close`."""
        self.answer = ""

    # ------------------------------------------------------------------ opening

    @property
    def ctx(self) -> DriverContext:
        assert self._ctx is not None, "FileRun needs a DriverContext before opening"
        return self._ctx

    @ctx.setter
    def ctx(self, value: DriverContext) -> None:
        self._ctx = value

    @property
    def session(self) -> Session:
        assert self.opened is not None, "FileRun.open first"
        return self.opened.session

    @property
    def data_dir(self) -> Path:
        return self.path.parent / ".chatmd"

    def check(self) -> CheckResult:
        """Check the file (nothing sent); raises UsageError or PromptErrors."""
        recover(self.path)
        result = check_prompt(self.path)
        if not result.readable:
            raise UsageError(result.diagnostics[0].message if result.diagnostics
                             else f"cannot read {self.path}")
        if result.prompt is None:
            raise PromptErrors(result)
        self.prompt, self.had_placeholder = without_placeholder(result.prompt)
        self.checked = result
        return result

    def open(self) -> None:
        """Open the session (after :meth:`check`); raises UsageError, DiagnosticError
        (an inline agent, the moderator or an MCP server failed), SnapshotMismatch."""
        if self.prompt is None:
            self.check()
        prompt = self.prompt
        assert prompt is not None
        self.data_dir.mkdir(mode=0o700, exist_ok=True)
        self.ctx.agent_cache = load_cache(self.data_dir / CACHE_FILE)
        self.appender = TranscriptAppender(self.path, show_tool_call=prompt.config.show_tool_call,
                                           payload_dir=self.data_dir, on_written=self.ctx.events.item)
        record = self._record()
        self.opened = open_session(prompt, self.ctx, session_id=prompt.config.id or str(self.path),
                                   record=record)
        if record is not None:
            self._adopt_new_items(record, prompt)
        self.session.on_entry = self._on_entry
        self.session.on_runtime_request = self._on_runtime_request
        if self.session.manager is not None:
            self.session.on_tool_moderated = self._on_tool_moderated
        self._cancel_dangling_calls()  # a call an earlier run was killed in the middle of

    def _record(self) -> SessionRecord | None:
        if self.session_file is None or not self.session_file.exists():
            return None
        try:
            return load_record(self.session_file)
        except (OSError, ValueError) as problem:
            raise UsageError(f"cannot read the session file {self.session_file}: "
                             f"{problem}") from None

    def _adopt_new_items(self, record: SessionRecord, prompt: Prompt) -> None:
        """History comes from the sidecar; items added to the file since (the user's next
        message) are appended to it."""
        from chatmd.request import to_items
        from runtime.driver.setup import conversion_context

        assert self.opened is not None
        items = to_items(prompt, conversion_context(prompt, self.ctx, record.session_id,
                                                    self.opened.tools))
        known = len(record.entries)
        if len(items) < known:
            raise UsageError(f"the transcript {self.path} holds {len(items)} items but the "
                             f"session file {self.session_file} holds {known}: they no longer "
                             "describe the same conversation (remove the session file to "
                             "start the moderator afresh)")
        for item in items[known:]:
            self.session.append_item(item)

    def _on_entry(self, entry: Entry) -> None:
        assert self.appender is not None
        self.appender.append(entry.item)
        text = _assistant_text(entry.item)
        if text is not None:
            self.answer = text
            if not self.ctx.stream:  # nothing was streamed: show the answer now
                self.ctx.display.text_delta(text)
                self.ctx.display.end_block()

    def _on_tool_moderated(self, item: Mapping[str, Any], moderated: Any) -> None:
        if moderated.synthetic_output is not None:
            outcome = "rejected"
        elif moderated.call_item.get("name") != item.get("name") or \
                call_payload(moderated.call_item) != call_payload(item):
            outcome = "rewritten"
        else:
            outcome = "approved"
        self.ctx.events.emit("moderation", request="pre_tool_call", outcome=outcome,
                             name=item.get("name"), call_id=item.get("call_id"),
                             detail=moderated.synthetic_output)

    def _on_runtime_request(self, request: Any) -> None:
        self.ctx.events.emit("moderation", request=type(request).__name__,
                             detail=str(request))

    # ------------------------------------------------------------------ running

    def model(self) -> Model:
        """The session's model: streamed (or blocking), counting this run's requests."""
        inner = (streaming_model(self.ctx, LiveStream(self.ctx.display)) if self.ctx.stream
                 else blocking_model(self.ctx))

        def model(request: Any) -> Iterator[dict[str, Any]]:
            self.requests += 1
            for item in inner(request):
                yield dict(item)

        return model

    def nothing_to_send(self) -> bool:
        """True when the conversation ends with the model's answer (nothing new to say)."""
        history = self.session.history
        if not history:
            return True
        last = history[-1].item
        return last.get("type", "message") == "message" and last.get("role") == "assistant"

    def run(self, max_turns: int | None) -> RunOutcome:
        """Turns until a stop (see the module docstring); never raises for model failures."""
        session = self.session
        requests_before = self.requests
        try:
            if session.ended:
                return self._outcome("ended", EXIT_OK, requests_before)
            result = session.run(self.model(), max_requests=max_turns)
            return self._settle(result, max_turns, requests_before)
        except ModelApiFailure as failure:
            self._cancel_dangling_calls()
            self.ctx.events.emit("error", kind="model_api", message=str(failure),
                                 status=failure.status)
            return self._outcome("failed", EXIT_MODEL_API, requests_before, str(failure))
        except UnknownToolError as failure:
            self._cancel_dangling_calls()
            self.ctx.events.emit("error", kind="model_api", message=str(failure))
            return self._outcome("failed", EXIT_MODEL_API, requests_before, str(failure))
        except KeyboardInterrupt:
            self.interrupted = True
            self._cancel_dangling_calls()
            self.ctx.events.emit("error", kind="interrupted", message="interrupted")
            return self._outcome("interrupted", EXIT_INTERRUPTED, requests_before,
                                 "interrupted")
        finally:
            self.ctx.display.end_block()
            if self.appender is not None:
                self.appender.checkpoint()  # the turn's appends become durable

    def _settle(self, result: RunResult, max_turns: int | None, before: int) -> RunOutcome:
        """The outcome of a run that raised nothing; the placeholder after a normal finish."""
        assert self.appender is not None
        session = self.session
        if session.ended:
            return self._outcome("ended", EXIT_OK, before,
                                 f"the moderator ended the session: {session.ended_reason}")
        last = result.turns[-1].decision if result.turns else None
        if last is not None and last.continue_ is not Continue.STOP:
            return self._outcome("turn_limit", EXIT_TURN_LIMIT, before,
                                 f"stopped after {max_turns} model request(s) (--max-turns); "
                                 "run again to continue")
        self.appender.placeholder()
        return self._outcome("finished", EXIT_OK, before)

    def _outcome(self, status: str, code: int, before: int,
                 message: str | None = None) -> RunOutcome:
        sent = self.requests - before
        return RunOutcome(status, code, sent, message, self.answer)

    def _cancel_dangling_calls(self) -> None:
        """After a failed or interrupted turn: give every call without an output a
        ``cancelled`` output (history and file)."""
        if self.opened is None:
            return
        answered = {str(e.item.get("call_id")) for e in self.session.history
                    if e.item.get("type") in OUTPUT_KINDS}
        for entry in self.session.history:
            item = entry.item
            if item.get("type") in CALL_KINDS and str(item.get("call_id")) not in answered:
                self.session.append_item(tool_output(str(item.get("call_id")), CANCELLED_OUTPUT,
                                                     custom=is_custom(item)))

    # ------------------------------------------------------------------ closing

    def close(self) -> None:
        """Save the sidecar and the agent cache, stop tools (also after a failure)."""
        if self.opened is None:
            return
        try:
            if self.session_file is not None:
                self.session.save(self.session_file)
            save_cache(self.data_dir / CACHE_FILE, self.ctx.agent_cache)
        finally:
            if self.interrupted:
                self.session.toolbox.close(wait=False)
            self.opened.close()
            self.opened = None
            if self.appender is not None:
                self.appender.close()


__all__ = ["EXIT_INTERRUPTED", "EXIT_MODEL_API", "EXIT_OK", "EXIT_PROMPT_ERRORS",
           "EXIT_TURN_LIMIT", "EXIT_USAGE", "FileRun", "PromptErrors", "RunOutcome",
           "SnapshotMismatch", "UsageError"]
