"""The approval flow of one ``ask`` decision (shell spec §8.7 steps 1-5).

Compute the approval identity, look up stored grants, otherwise ask the
reviewers: the host's UI reviewer when the runtime has no ``<reviewers>``
section (``provider="ui"``), or each configured reviewer in order with the
``first_terminal`` strategy (``defer`` moves on; a reviewer error follows its
``failure`` setting). An approval for a scope the runtime does not declare
is a denial; a scoped approval is stored before the command runs (a
``durable_exact`` one in the grant file only when the runtime's
``<approvals durable="true">`` allows it, else for the session).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from runtime.shell.approvals import (
    ApprovalAnswer,
    ApprovalRequest,
    approval_identity,
    display_command,
    normalise_answer,
)
from runtime.shell.effects import Effect
from runtime.shell.errors import ShellError
from runtime.shell.policy import Decision
from runtime.shell.resolve import Executable

if TYPE_CHECKING:
    from runtime.shell.context import CallContext

_ANSWER_NAMES = {"approve": "approve_once", "deny": "deny", "rewrite": "rewrite"}


def _ask_reviewers(ctx: CallContext, shown: ApprovalRequest,
                   event: Callable[[], dict[str, Any]]) -> ApprovalAnswer:
    runtime = ctx.runtime
    host = ctx.session.reviewer
    if not runtime.has_reviewers_section:
        provider = runtime.approvals.get("provider")
        if provider == "ui" and host is not None:
            return normalise_answer(host(shown))
        if provider == "ui" and runtime.approvals.get("unavailable") == "deny":
            raise ShellError("denied", "approval is required and no reviewer is available")
        raise ShellError("permission_required",
                         "the command needs approval and no reviewer is available")
    for reviewer in runtime.reviewers:
        started = time.monotonic()
        try:
            answer = _one_reviewer(ctx, reviewer, shown, event)
        except ShellError as error:
            if reviewer.get("failure") in ("keep", "no_match"):
                continue
            raise ShellError("denied", f"reviewer {reviewer.get('id')} failed: "
                             f"{error.message}") from None
        if answer.decision != "defer":
            ctx.audit("reviewer_completed", reviewer_id=reviewer.get("id"),
                      reviewer_kind=reviewer.get("kind"), model=reviewer.get("model"),
                      response_action=answer.decision,
                      latency_ms=round((time.monotonic() - started) * 1000))
            return answer
    raise ShellError("denied", "all configured reviewers deferred")


def _one_reviewer(ctx: CallContext, reviewer: Mapping[str, Any], shown: ApprovalRequest,
                  event: Callable[[], dict[str, Any]]) -> ApprovalAnswer:
    kind = reviewer.get("kind")
    if kind == "ui":
        if ctx.session.reviewer is None:
            raise ShellError("permission_required", "no UI reviewer is available")
        return normalise_answer(ctx.session.reviewer(shown))
    hooks = ctx.session.hooks
    if hooks is None:
        raise ShellError("permission_required", f"reviewers of kind {kind} are not available")
    return hooks.review(ctx, reviewer, event())


def request_approval(ctx: CallContext, argv: tuple[str, ...], exe: Executable,
                     effects: Sequence[Effect], decision: Decision) -> tuple[str, ...] | None:
    """Approve or raise; returns a rewritten argv when a reviewer rewrites the command."""
    runtime = ctx.runtime
    request = ctx.request
    identity = approval_identity(
        manifest_sha256=runtime.manifest_sha256, runtime_id=runtime.id,
        request_kind=request.kind, executable=exe.canonical, executable_sha256=exe.sha256,
        cwd=runtime.cwd, env=runtime.env, stdin=request.stdin,
        script_sha256=request.script_sha256 or (ctx.tool.script.sha256 if ctx.tool.script
                                                else None), argv=argv)
    durable = runtime.approvals.get("durable") is True
    if ctx.session.grants.lookup(identity, durable=durable) is not None:
        return None
    labels = [e.label() for e in effects]
    ctx.audit("approval_requested", argv=argv, effects=labels)
    scopes = tuple(str(s) for s in runtime.approvals.get("scopes") or ("once",))
    shown = ApprovalRequest(
        runtime.id, ctx.tool.name, display_command(argv, runtime.redactor), request.kind,
        decision.reason, runtime.redactor(request.rationale) if request.rationale else None,
        scopes, identity.command_hash, tuple(labels),
        request.script_preview)
    hooks = ctx.session.hooks

    def event() -> dict[str, Any]:
        return hooks.context_event(ctx, "shell_reviewer", argv, exe, effects, decision)
    answer = _ask_reviewers(ctx, shown, event)
    ctx.audit("approval_answered", argv=argv, effects=labels,
              approval_answer="approve_scoped" if answer.decision == "approve"
              and answer.scope != "once" else _ANSWER_NAMES.get(answer.decision))
    if answer.decision == "rewrite" and answer.argv:
        return tuple(answer.argv)
    if answer.decision != "approve":
        raise ShellError("denied", answer.reason or "the command was denied by the reviewer")
    if answer.scope not in scopes:
        raise ShellError("denied", f"approval scope {answer.scope} is not declared by "
                         f"runtime {runtime.id}")
    ctx.session.grants.store(identity, answer, durable=durable)
    return None
