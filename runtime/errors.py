"""Errors the runtime raises: each carries a positioned :class:`~chatcommon.diagnostics.Diagnostic`.

A host catches :class:`ModerationError` (or ``DiagnosticError``) and renders
``error.diagnostic`` with :mod:`chatcommon.render`. Handler failures name the
script, the phase and the ChatML position (the failing expression when the
VM knows it, else the script's ``on_event`` binding).
"""

from __future__ import annotations

from typing import Any

from chatcommon.diagnostics import Diagnostic, DiagnosticError

PHASE = "moderation"


def runtime_diagnostic(code: str, message: str, *, file: str = "<moderator>", line: int = 1,
                       column: int = 1, hint: str | None = None) -> Diagnostic:
    return Diagnostic(code=code, message=message, file=file, line=line, column=column,
                      phase=PHASE, hint=hint)


class ModerationError(DiagnosticError):
    """Base of every runtime error; ``diagnostic`` says what and where, ``message`` is its text."""

    code = "runtime.moderation_error"
    #: Set by the manager on an error raised part-way through a queue: the outcomes
    #: of the events handled before it (read with ``getattr``; absent otherwise).
    committed: list[Any]

    def __init__(self, message: str, diagnostic: Diagnostic | None = None) -> None:
        self.message = message
        self.diagnostic = diagnostic or runtime_diagnostic(self.code, message)
        super().__init__(self.diagnostic)

    def __str__(self) -> str:
        return self.message


class SessionEnded(ModerationError):
    """The session was ended by ``Runtime.end_session``; nothing more is dispatched."""

    code = "runtime.session_ended"


class AwaitingUiInput(ModerationError):
    """A handler is suspended on an approval; dispatch, drains and snapshots wait for it."""

    code = "runtime.awaiting_ui_input"


class HandlerBusy(ModerationError):
    """A handler was dispatched while another handler of the same session runs (re-entrancy)."""

    code = "runtime.handler_busy"


class HandlerFailed(ModerationError):
    """A handler failed; nothing it did was committed."""

    code = "runtime.handler_failed"

    def __init__(self, message: str, diagnostic: Diagnostic | None = None, *,
                 reason: str = "", phase: str = "", script_id: str = "") -> None:
        self.reason = reason or message
        self.phase = phase
        self.script_id = script_id
        super().__init__(message, diagnostic)


class HandlerLimitExceeded(HandlerFailed):
    """A handler ran out of steps, memory, recursion depth or task fuel (DECISIONS 5)."""

    code = "runtime.limit_exceeded"


class UnknownTarget(HandlerFailed):
    """A replace/delete named an id that is neither canonical nor an inserted overlay entry."""

    code = "runtime.unknown_target"


class ConflictingToolModeration(HandlerFailed):
    """A handler made more than one tool-moderation action."""

    code = "runtime.conflicting_tool_moderation"


class UnexpectedToolModeration(ModerationError):
    """A committed handler of a phase other than ``pre_tool_call`` moderated a tool call."""

    code = "runtime.unexpected_tool_moderation"


class TurnBudgetExceeded(ModerationError):
    """The moderator requested more consecutive turns than the policy allows."""

    code = "runtime.turn_budget_exceeded"


class UnknownToolError(ModerationError):
    """The model called a tool that the prompt does not declare."""

    code = "runtime.unknown_tool"


class ModeratorLoadError(ModerationError):
    """A moderator script that does not compile or whose top level fails."""

    code = "runtime.moderator_load_error"

    def __init__(self, message: str, diagnostics: list[Diagnostic]) -> None:
        super().__init__(message, diagnostics[0] if diagnostics else None)
        self.diagnostics = diagnostics


class SnapshotError(ModerationError):
    """A snapshot that cannot be taken (non-data state, pending approval)."""

    code = "runtime.snapshot_error"


class SnapshotDecodeError(ModerationError):
    """Snapshot data that cannot be read back."""

    code = "runtime.snapshot_decode_error"


class SnapshotMismatch(ModerationError):
    """A snapshot of another script (its id or its source hash differs)."""

    code = "runtime.snapshot_mismatch"


__all__ = [
    "AwaitingUiInput", "ConflictingToolModeration", "HandlerBusy", "HandlerFailed",
    "HandlerLimitExceeded", "ModerationError", "ModeratorLoadError", "SessionEnded",
    "SnapshotDecodeError", "SnapshotError", "SnapshotMismatch", "TurnBudgetExceeded",
    "UnexpectedToolModeration", "UnknownTarget", "UnknownToolError", "runtime_diagnostic",
]
