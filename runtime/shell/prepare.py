"""Per-command preparation in the normative order of shell spec §8.3.

:func:`prepare_command` resolves the executable, checks the script pin,
infers effects (built-in analysis, then analyzers), applies the
administrative hard deny, decides policy, runs before-interceptors, checks
capabilities, asks for approval when policy says ``ask``, re-reads a pinned
script, selects the backend and returns an immutable :class:`Plan`. A
rewrite (interceptor or reviewer) restarts from resolution; more than 12 is a
denial.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from runtime.shell.backends import (
    Backend,
    Confinement,
    limit_arguments,
    resource_limits,
    select_backend,
)
from runtime.shell.context import CallContext
from runtime.shell.effects import Effect, builtin_effects, check_capabilities
from runtime.shell.errors import InstantiationError, ShellError
from runtime.shell.instance import read_script
from runtime.shell.policy import Decision, MatchContext
from runtime.shell.resolve import Executable
from runtime.shell.review import request_approval

MAX_REWRITES = 12


@dataclass(frozen=True)
class Plan:
    """An immutable spawn plan for one command."""

    plan_id: str
    argv: tuple[str, ...]
    executable: Executable
    effects: tuple[Effect, ...]
    backend: Backend
    spawn_argv: tuple[str, ...]
    cwd: str
    rlimits: tuple[tuple[int, int], ...]
    intercepted_by: str | None = None
    response: tuple[str, str] | None = None


def _hard_deny(ctx: CallContext, argv: Sequence[str], effects: Sequence[Effect]) -> None:
    admin = ctx.session.admin
    if admin is None:
        return
    reason = None
    if os.path.basename(argv[0]) in admin.denied_programs:
        reason = f"program {os.path.basename(argv[0])} is denied by the administrative policy"
    for part in admin.denied_argument_substrings:
        if reason is None and any(part in arg for arg in argv[1:]):
            reason = "an argument is denied by the administrative policy"
    for effect in effects:
        if reason is None and effect.kind in admin.denied_effects:
            reason = f"effect {effect.kind} is denied by the administrative policy"
    if reason is not None:
        ctx.audit("rejected", argv=argv, reason=reason)
        raise ShellError("denied", reason)


def _effects(ctx: CallContext, argv: tuple[str, ...], exe: Executable) -> list[Effect]:
    effects = builtin_effects(argv, ctx.runtime.cwd, ctx.request.kind == "raw_shell")
    hooks = ctx.session.hooks
    if hooks is not None:
        effects = hooks.analyze(ctx, argv, exe, effects)
    return effects


def _decide(ctx: CallContext, argv: tuple[str, ...], exe: Executable,
            effects: Sequence[Effect]) -> Decision:
    hooks = ctx.session.hooks
    match = MatchContext(argv, exe.canonical, exe.trusted, ctx.runtime.cwd, tuple(effects),
                         ctx.request.kind,
                         None if hooks is None else hooks.matcher(ctx, argv, exe, effects))
    decision = ctx.runtime.policy.decide(match)
    labels = [e.label() for e in effects]
    ctx.audit("policy_decided", argv=argv, effects=labels, policy_action=decision.action,
              policy_reason=decision.reason)
    if decision.action == "deny":
        ctx.audit("rejected", argv=argv, effects=labels, reason=decision.reason)
        raise ShellError("denied", f"denied by policy ({decision.reason})")
    return decision


def _recheck_script(ctx: CallContext) -> None:
    pin = ctx.tool.script
    if pin is None:
        return
    try:
        data = read_script(pin.path, pin.max_bytes)
    except InstantiationError as error:
        raise ShellError("script_changed", error.message) from None
    if hashlib.sha256(data).hexdigest() != pin.sha256:
        raise ShellError("script_changed", f"script {pin.path} changed since it was pinned")


def prepare_command(ctx: CallContext, argv: tuple[str, ...]) -> Plan:
    """Prepare one command (§8.3); raises ShellError with the executor code."""
    runtime = ctx.runtime
    for _attempt in range(MAX_REWRITES + 1):
        exe = runtime.resolver.resolve(argv[0])
        pin = ctx.tool.script
        pinned = pin.launched_sha256 if pin is not None else ctx.tool.pinned_sha256
        if pinned is not None and exe.sha256 != pinned:
            raise ShellError("executable_changed",
                             f"{exe.canonical} does not match the pinned executable")
        effects = _effects(ctx, argv, exe)
        labels = [e.label() for e in effects]
        _hard_deny(ctx, argv, effects)
        ctx.audit("resolved", argv=argv, effects=labels)
        decision = _decide(ctx, argv, exe, effects)
        hooks = ctx.session.hooks
        if hooks is not None:
            outcome = hooks.before(ctx, argv, exe, effects, decision)
            if outcome is not None and outcome[0] == "rewrite":
                argv = tuple(outcome[1])
                continue
            if outcome is not None and outcome[0] == "respond":
                return _synthetic(exe, argv, effects, outcome[1], outcome[2], outcome[3])
        try:
            check_capabilities(effects, runtime.capabilities)
        except ShellError as error:
            ctx.audit("rejected", argv=argv, effects=labels, reason=error.message)
            raise
        if decision.action == "ask":
            rewrite = request_approval(ctx, argv, exe, effects, decision)
            if rewrite is not None:
                argv = rewrite
                continue
        ctx.check_deadline()
        _recheck_script(ctx)
        return _plan(ctx, argv, exe, effects)
    raise ShellError("denied", "too many command rewrites")


def _synthetic(exe: Executable, argv: tuple[str, ...], effects: Sequence[Effect], stdout: str,
               stderr: str, interceptor: str) -> Plan:
    from runtime.shell.backends import DirectBackend
    return Plan(uuid.uuid4().hex, argv, exe, tuple(effects), DirectBackend(None), (), "", (),
                interceptor, (stdout, stderr))


def _plan(ctx: CallContext, argv: tuple[str, ...], exe: Executable,
          effects: Sequence[Effect]) -> Plan:
    runtime = ctx.runtime
    caps = runtime.capabilities
    backend = select_backend(runtime.backends, caps.sandbox, runtime.accept_declared)
    confinement = Confinement(runtime.cwd, caps.read_roots, caps.write_roots, caps.network,
                              limit_arguments(runtime.limits))
    spawn = backend.wrap((exe.canonical, *argv[1:]), confinement)
    plan = Plan(uuid.uuid4().hex, argv, exe, tuple(effects), backend, spawn, runtime.cwd,
                resource_limits(runtime.limits))
    ctx.audit("plan_created", argv=argv, plan_id=plan.plan_id,
              effects=[e.label() for e in effects], backend=backend.name)
    return plan
