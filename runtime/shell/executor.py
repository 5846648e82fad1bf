"""The shell executor: one tool call from JSON arguments to the model-visible result.

:class:`ShellSession` holds the instantiated tools of a manifest and the
session state (grant store, host reviewer, hooks, administrative policy).
:meth:`ShellSession.call` decodes and validates the input, builds the
request (§8.1), then evaluates the chain (§8.2): a pipeline runs only when its
operator allows it (skipped pipelines are never prepared), all its stages
are prepared (§8.3) before any starts, executables are re-verified just
before spawning, and the pipeline runs under the request's wall deadline
(§8.9). Every problem the model can cause comes back as a structured error
(:func:`runtime.shell.results.error_text`) with its code; nothing raises.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from runtime.shell.approvals import GrantStore, Reviewer
from runtime.shell.context import CallContext
from runtime.shell.errors import ShellError
from runtime.shell.instance import ToolInstance
from runtime.shell.output import finalise, preview
from runtime.shell.prepare import Plan, prepare_command
from runtime.shell.process import Budget, PipelineOutcome, Stage, run_pipeline
from runtime.shell.requests import (
    Request,
    chain_request,
    check_arguments,
    check_common,
    decode_input,
    raw_request,
    single,
    structured_request,
)
from runtime.shell.resolve import reverify
from runtime.shell.results import (
    CallOutcome,
    CommandRecord,
    RequestResult,
    StageResult,
    error_text,
    render,
)

_TERMINATION = {"timed_out": "the request exceeded its wall_time limit",
                "idle_timed_out": "no output for longer than the idle_time limit",
                "output_limit_exceeded": "the output exceeded the total_output limit"}


class ShellSession:
    """The instantiated tools of one manifest and the session's approval state."""

    def __init__(self, tools: Mapping[str, ToolInstance], *, reviewer: Reviewer | None = None,
                 grants: GrantStore | None = None, hooks: Any = None, admin: Any = None,
                 session_id: str | None = None, moderator_runtime: str | None = None,
                 runtimes: Mapping[str, Any] | None = None) -> None:
        self.tools = dict(tools)
        self.runtimes = dict(runtimes or {})
        self.reviewer = reviewer
        self.grants = grants or GrantStore()
        self.hooks = hooks
        self.admin = admin
        self.session_id = session_id or uuid.uuid4().hex
        self.moderator_runtime = moderator_runtime

    def call(self, tool_name: str, payload: str, *, origin: str = "tool") -> CallOutcome:
        """Run one call of ``tool_name`` with the JSON ``payload``; never raises ShellError."""
        tool = self.tools.get(tool_name)
        if tool is None:
            return CallOutcome(error_text("shell.tool_unknown", f"no shell tool {tool_name}"),
                               "shell.tool_unknown")
        try:
            inputs = decode_input(payload)
        except ShellError as error:
            return CallOutcome(error_text(error.code, tool.runtime.redactor(error.message)),
                               error.code)
        return self.run_tool(tool, inputs, origin=origin)

    def run_tool(self, tool: ToolInstance, inputs: Mapping[str, Any], *,
                 origin: str = "tool", wall_time: float | None = None) -> CallOutcome:
        """Run decoded ``inputs`` through ``tool`` (also used for moderator ``Process.run``
        and executable hooks); ``wall_time`` may only shorten the runtime's limit."""
        redact = tool.runtime.redactor
        limit = float(tool.runtime.limits["wall_time"])
        if wall_time is not None:
            limit = min(limit, wall_time)
        try:
            request = build_request(tool, inputs)
            ctx = CallContext(self, tool, request, uuid.uuid4().hex, time.monotonic() + limit,
                              origin)
            result = run_request(ctx)
        except ShellError as error:
            return CallOutcome(error_text(error.code, redact(error.message)), error.code)
        return render(result, tool.result, tool.nonzero)


def build_request(tool: ToolInstance, inputs: Mapping[str, Any]) -> Request:
    """The request of one call (spec §8.1)."""
    runtime = tool.runtime
    kind = tool.mode_name
    stdin, rationale = check_common(inputs, kind, tool.stdin, tool.rationale,
                                    int(runtime.limits["max_stdin"]))
    if kind == "structured":
        return structured_request(inputs, stdin, rationale)
    if kind == "chain":
        return chain_request(inputs, stdin, rationale)
    if kind == "raw":
        assert tool.raw_executable is not None
        script = str(inputs.get("script", ""))
        return raw_request(inputs, tool.raw_executable,
                           list(tool.mode.get("arguments_before_script") or ("-c",)), stdin,
                           rationale, preview(script, runtime.redactor))
    if kind == "script":
        pin = tool.script
        assert pin is not None
        arguments = list(inputs.get("arguments") or ())
        fixed = list(tool.mode.get("fixed_arguments") or ())
        if pin.interpreter is not None:
            argv = [pin.interpreter.path, *fixed, pin.path, *arguments]
        else:
            argv = [pin.path, *fixed, *arguments]
        return Request("script_file", single(argv), (), stdin, rationale, pin.sha256)
    arguments = check_arguments(inputs, tool.mode.get("arguments") or {})
    argv = [*_fixed_argv(tool), *arguments]
    return Request("structured", single(argv), (), stdin, rationale)


def _fixed_argv(tool: ToolInstance) -> list[str]:
    if tool.compact is not None:
        return list(tool.compact)
    command = tool.mode["command"]
    argv = [str(command.get("program") or command.get("executable_ref"))]
    for arg in command.get("arguments") or ():
        kind = arg.get("type")
        if kind == "literal":
            argv.append(str(arg["value"]))
        elif kind == "secret":
            value = tool.secret_values.get(str(arg["env"]))
            if value is None:
                raise ShellError("shell.tool_secret_missing",
                                 f"environment variable {arg['env']} of a secret argument is "
                                 "not set in the runtime environment")
            argv.append(str(arg.get("prefix") or "") + value)
        elif kind == "path":
            expr = {"base": arg.get("base"), "path": arg.get("path")}
            argv.append(tool.runtime.path(expr))
    return argv


def _skipped(operator: str, last: tuple[str, int] | None) -> bool:
    succeeded = last == ("exited", 0)
    return (operator == "&&" and not succeeded) or (operator == "||" and succeeded)


def pipeline_status(statuses: Sequence[tuple[str, int]], pipefail: bool) -> tuple[str, int]:
    if pipefail:
        for status in reversed(statuses):
            if status != ("exited", 0):
                return status
        return ("exited", 0)
    return statuses[-1]


def run_request(ctx: CallContext) -> RequestResult:
    """Evaluate the request's chain and assemble the result (spec §8.2, §8.9).

    Each executed stage's result is finalised, then passed through the
    after-interceptors (§8.11) as soon as its pipeline has finished, so a
    withheld stage stops the chain before any later pipeline runs.
    """
    request = ctx.request
    runtime = ctx.runtime
    limits = runtime.limits
    status: tuple[str, int] | None = None
    stages: list[StageResult] = []
    last: StageResult | None = None
    backends: list[str] = []
    for index, pipeline in enumerate(request.pipelines):
        if index > 0 and _skipped(request.operators[index - 1], status):
            continue
        plans = []
        for stage, argv in enumerate(pipeline):
            ctx.stdin_kind = "pipeline" if stage else (
                "supplied" if index == 0 and request.stdin else "empty")
            plans.append(prepare_command(ctx, argv))
        outcome = _spawn(ctx, plans, request.stdin if index == 0 else b"")
        status = pipeline_status(outcome.statuses, runtime.pipefail)
        results = _stage_results(ctx, plans, outcome)
        stages += results
        last = results[-1]
        for plan in plans:
            if plan.backend.name not in backends and not plan.response:
                backends.append(plan.backend.name)
    assert status is not None and last is not None
    err = finalise("".join(s.stderr for s in stages).encode("utf-8"), int(limits["stderr"]),
                   any(s.stderr_truncated for s in stages), lambda s: s)
    if len(last.stdout.encode()) + len(err.text.encode()) > int(limits["total_output"]):
        raise ShellError("output_limit_exceeded", _TERMINATION["output_limit_exceeded"])
    return RequestResult(ctx.request_id, status, last.stdout, err.text, last.stdout_truncated,
                         err.truncated, "+".join(backends), runtime.id,
                         runtime.manifest_sha256, tuple(s.command for s in stages))


def _stage_results(ctx: CallContext, plans: Sequence[Plan],
                   outcome: PipelineOutcome) -> list[StageResult]:
    """The finalised result of each stage of a finished pipeline, after-interceptors applied.

    Only the last stage has a stdout of its own (the others fed the next stage)."""
    limits = ctx.runtime.limits
    redact = ctx.runtime.redactor
    hooks = ctx.session.hooks
    results = []
    for position, (plan, (data, cut), stage_status) in enumerate(
            zip(plans, outcome.stderrs, outcome.statuses, strict=True)):
        out = finalise(outcome.stdout if position == len(plans) - 1 else b"",
                       int(limits["stdout"]), outcome.stdout_truncated
                       and position == len(plans) - 1, redact)
        err = finalise(data, int(limits["stderr"]), cut, redact)
        record = CommandRecord(tuple(redact(a) for a in plan.argv),
                               "" if plan.response else plan.executable.sha256,
                               stage_status, plan.intercepted_by)
        result = StageResult(record, out.text, out.truncated, err.text, err.truncated)
        results.append(hooks.after(ctx, result) if hooks is not None else result)
    return results


def _spawn(ctx: CallContext, plans: Sequence[Plan], stdin: bytes) -> PipelineOutcome:
    runtime = ctx.runtime
    limits = runtime.limits
    if len(stdin) > int(limits["max_stdin"]):
        raise ShellError("stdin_limit_exceeded", "stdin exceeds the max_stdin limit")
    if all(plan.response is not None for plan in plans):
        return _synthetic_outcome(plans)
    if any(plan.response is not None for plan in plans):
        raise ShellError("interceptor_rejected",
                         "an interceptor response cannot stand in for one stage of a pipeline")
    for plan in plans:
        reverify(plan.executable)
        if plan.backend.wrapper is not None:
            reverify(plan.backend.wrapper)
    ctx.check_deadline()
    for plan in plans:
        ctx.audit("started", argv=plan.argv, plan_id=plan.plan_id, backend=plan.backend.name)
    ctx.started = True
    stages = [Stage(plan.spawn_argv, plan.cwd, runtime.env, plan.rlimits) for plan in plans]
    idle = limits.get("idle_time")
    budget = Budget(ctx.deadline, None if idle is None else float(idle), int(limits["stdout"]),
                    int(limits["stderr"]), int(limits["total_output"]))
    try:
        outcome = run_pipeline(stages, stdin, budget)
    except OSError as error:  # pipes, selector, pidfd: the host is out of resources
        raise ShellError("spawn_error", f"cannot run the pipeline: "
                         f"{error.strerror or error}") from None
    _audit_outcome(ctx, plans, outcome)
    if outcome.termination is not None:
        raise ShellError(outcome.termination, _TERMINATION[outcome.termination])
    return outcome


def _audit_outcome(ctx: CallContext, plans: Sequence[Plan], outcome: PipelineOutcome) -> None:
    for channel, count in outcome.output_bytes:
        ctx.audit("output", channel=channel, bytes=count)
    for plan, (kind, value) in zip(plans, outcome.statuses, strict=True):
        if outcome.termination is not None:
            ctx.audit("terminated", argv=plan.argv, plan_id=plan.plan_id,
                      exit_kind=outcome.termination)
        else:
            ctx.audit("finished", argv=plan.argv, plan_id=plan.plan_id, exit_kind=kind,
                      exit_code=value if kind == "exited" else None,
                      signal=value if kind == "signaled" else None)


def _synthetic_outcome(plans: Sequence[Plan]) -> PipelineOutcome:
    last = plans[-1].response
    assert last is not None
    return PipelineOutcome(
        tuple(("exited", 0) for _ in plans), last[0].encode("utf-8"), False,
        tuple(((p.response or ("", ""))[1].encode("utf-8"), False) for p in plans), None, ())
