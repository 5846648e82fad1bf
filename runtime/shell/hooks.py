"""ChatML hooks of the runtimes of one session (shell spec §8.11): matchers, reviewers,
before and after interceptors, effect analyzers and audit filters.

:class:`ShellHooks` compiles every script the manifest references once
(:mod:`runtime.shell.chatml_bridge`), keeps hook state per lifecycle
(``invocation``: none, ``session``: per runtime and script, ``runtime``: per
script; persisted by :mod:`runtime.shell.hook_state`), builds the versioned
event records and decodes the one action of each call. A failed call follows the hook's ``failure`` setting and never
widens access: a matcher without ``failure`` matches ``ask``/``deny`` rules
and not ``allow`` rules; a before-interceptor error rejects unless
``keep``/``no_match``; an analyzer error adds an ``unknown`` effect.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from chatml.values import Variant
from runtime.shell.approvals import ApprovalAnswer
from runtime.shell.chatml_bridge import ChatMLHook, HookError, compile_hook, option
from runtime.shell.effects import Effect
from runtime.shell.errors import InstantiationError, ShellError
from runtime.shell.exec_hooks import ExecutableHook
from runtime.shell.hook_state import HookStateStore, StateError, encode_state
from runtime.shell.output import finalise
from runtime.shell.policy import Decision, MatchContext, compile_matcher
from runtime.shell.resolve import Executable

if TYPE_CHECKING:
    from runtime.shell.context import CallContext
    from runtime.shell.instance import RuntimeInstance
    from runtime.shell.results import StageResult

PROTECTED_AUDIT = frozenset({"sequence", "timestamp", "request_id", "runtime_id",
                             "manifest_sha256"})
_SCOPES = ("once", "exact_session", "prefix_session", "durable_exact")


def effect_from_string(text: str) -> Effect:
    if text in ("network", "child_processes", "arbitrary_code", "privilege_change"):
        return Effect(text)
    if text.startswith("read:"):
        return Effect("read_path", text[5:])
    if text.startswith("write:"):
        return Effect("write_path", text[6:])
    return Effect("unknown", reason=text)


class ShellHooks:
    """The compiled ChatML hooks of a manifest and their states for one session."""

    def __init__(self, scripts: Mapping[str, ChatMLHook],
                 executables: Mapping[tuple[str, str], ExecutableHook] | None = None,
                 model_recipes: Mapping[str, Any] | None = None,
                 store: HookStateStore | None = None,
                 sources: Mapping[str, str] | None = None) -> None:
        self.scripts = dict(scripts)
        self.executables = dict(executables or {})
        self.model_recipes = dict(model_recipes or {})
        self.store = store
        #: script id -> source SHA-256 (what a persisted state must match)
        self.source_sha256 = dict(sources or {})
        self._states: dict[tuple[str, ...], Any] = {}
        self._lock = threading.Lock()
        if store is not None:
            self._states.update(store.restore(
                {sid: (hook.kind, self.source_sha256.get(sid, ""))
                 for sid, hook in self.scripts.items()}))

    @classmethod
    def compile(cls, extension_scripts: Sequence[Mapping[str, Any]],
                sources: Mapping[str, str],
                executables: Mapping[tuple[str, str], ExecutableHook] | None = None,
                model_recipes: Mapping[str, Any] | None = None,
                store: HookStateStore | None = None) -> ShellHooks:
        """Compile every referenced script once; InstantiationError(shell.chatml_compile).

        ``store`` persists (and restores) the states of stateful hooks."""
        compiled: dict[str, ChatMLHook] = {}
        for entry in extension_scripts:
            script_id = str(entry["id"])
            source = sources.get(script_id)
            if source is None or hashlib.sha256(source.encode()).hexdigest() != entry[
                    "source_sha256"]:
                raise InstantiationError("shell.chatml_compile",
                                         f"the source of script {script_id} is not available "
                                         "or does not match the manifest")
            try:
                compiled[script_id] = compile_hook(script_id, str(entry["kind"]), source,
                                                   entry.get("limits") or {})
            except HookError as error:
                raise InstantiationError("shell.chatml_compile", str(error)) from None
        digests = {str(entry["id"]): str(entry["source_sha256"]) for entry in extension_scripts}
        return cls(compiled, executables, model_recipes, store, digests)

    # ----------------------------------------------------------------- calling

    def _call(self, ctx: CallContext, script_id: str, lifecycle: str | None,
              event: Mapping[str, Any], entry: str | None = None) -> tuple[str, tuple[Any, ...]]:
        hook = self.scripts.get(script_id)
        if hook is None:
            raise HookError(f"script {script_id} is not instantiated")
        key: tuple[str, ...] | None = None
        if lifecycle == "session":
            key = ("session", ctx.runtime.id, script_id)
        elif lifecycle == "runtime":
            key = ("runtime", script_id)
        with self._lock:
            state = self._states.get(key, hook.initial) if key else hook.initial
        action, new_state = hook.call(event, state, entry)
        if key is not None:
            self._commit(hook, key, new_state)
        return action.name, action.args

    def _commit(self, hook: ChatMLHook, key: tuple[str, ...], state: Any) -> None:
        """Keep (and persist) a stateful hook's new state; HookError leaves the old one."""
        try:
            encoded = encode_state(state, hook.max_depth)
        except (StateError, RecursionError) as error:
            raise HookError(f"script {hook.id}: {error}") from None
        size = len(json.dumps(encoded, ensure_ascii=False).encode("utf-8"))
        if size > hook.max_value:
            raise HookError(f"script {hook.id}: its state of {size} bytes exceeds max_value "
                            f"({hook.max_value})")
        if self.store is not None:
            try:
                self.store.save(key, hook.id, hook.kind, self.source_sha256.get(hook.id, ""),
                                encoded)
            except OSError as error:
                raise HookError(f"script {hook.id}: its state could not be saved: "
                                f"{error.strerror or error}") from None
        with self._lock:
            self._states[key] = state

    def _invoke(self, ctx: CallContext, key: str, entry: Mapping[str, Any],
                event: Mapping[str, Any]) -> tuple[str, tuple[Any, ...]]:
        """One hook call, ChatML or executable, as a ChatML-style (action, args)."""
        if entry.get("script"):
            return self._call(ctx, str(entry["script"]), entry.get("lifecycle"), event)
        hook = self.executables.get((ctx.runtime.id, key))
        if hook is None:
            raise HookError(f"hook {key} is not instantiated")
        data = hook.call(ctx.session, ctx.request_id, plain(event))
        return _from_executable(hook.kind, data)

    # ----------------------------------------------------------------- events

    def context_event(self, ctx: CallContext, phase: str, argv: Sequence[str], exe: Executable,
                      effects: Sequence[Effect], decision: Decision | None = None
                      ) -> dict[str, Any]:
        runtime = ctx.runtime
        caps = runtime.capabilities
        request = ctx.request
        policy = None
        if decision is not None:
            policy = {"version": "shell-policy-v1", "action": decision.action,
                      "reason": decision.reason,
                      "matches": [{"rule_id": r, "action": decision.action,
                                   "reason": option(None)} for r in decision.rule_ids]}
        return {
            "version": "shell-context-v1", "phase": phase, "request_id": ctx.request_id,
            "runtime_id": runtime.id, "manifest_sha256": runtime.manifest_sha256,
            "argv": [runtime.redactor(a) for a in argv],
            "executable": {"requested": exe.requested, "path": exe.path,
                           "canonical_path": exe.canonical, "trusted": exe.trusted,
                           "sha256": exe.sha256},
            "cwd": runtime.cwd, "origin": ctx.origin, "request_kind": request.kind,
            "stdin_kind": ctx.stdin_kind,
            "stdin_sha256": option(hashlib.sha256(request.stdin).hexdigest()
                                   if ctx.stdin_kind == "supplied" else None),
            "stdin_bytes": len(request.stdin) if ctx.stdin_kind == "supplied" else 0,
            "script_sha256": option(request.script_sha256),
            "script_preview": option(request.script_preview),
            "effects": [e.label() for e in effects],
            "capabilities": {"read_roots": list(caps.read_roots),
                             "write_roots": list(caps.write_roots), "network": caps.network,
                             "child_processes": caps.child_processes,
                             "arbitrary_code": caps.arbitrary_code,
                             "privilege_change": caps.privilege_change,
                             "sandbox": caps.sandbox},
            "session_id": option(ctx.session.session_id),
            "policy": option(policy),
        }

    # ----------------------------------------------------------------- matchers

    def matcher(self, ctx: CallContext, argv: Sequence[str], exe: Executable,
                effects: Sequence[Effect]) -> Callable[[str, str, str | None, str], bool]:
        def test(script: str, function: str, failure: str | None, action: str) -> bool:
            event = self.context_event(ctx, "shell_matcher", argv, exe, effects)
            try:
                name, _args = self._call(ctx, script, "invocation", event, function)
            except HookError:
                return _failed_match(failure, action)
            return name == "yes"
        return test

    # ----------------------------------------------------------------- analyzers

    def analyze(self, ctx: CallContext, argv: Sequence[str], exe: Executable,
                effects: list[Effect]) -> list[Effect]:
        for analyzer in ctx.runtime.record["effect_analysis"].get("analyzers") or ():
            event = self.context_event(ctx, "shell_effect", argv, exe, effects)
            try:
                name, args = self._invoke(ctx, f"analyzer:{analyzer['id']}", analyzer, event)
                effects = _apply_effect(effects, name, args, bool(analyzer.get("replace")))
            except HookError as error:
                if analyzer.get("failure") not in ("keep", "no_match"):
                    effects = [*effects, Effect("unknown", reason=f"analyzer failed: {error}")]
        return effects

    # ----------------------------------------------------------------- interceptors

    def _interceptors(self, runtime: RuntimeInstance, phase: str) -> list[Mapping[str, Any]]:
        return [i for i in runtime.record["interceptors"].get("interceptors") or ()
                if i.get("phase") == phase]

    def before(self, ctx: CallContext, argv: Sequence[str], exe: Executable,
               effects: Sequence[Effect], decision: Decision) -> tuple[Any, ...] | None:
        runtime = ctx.runtime
        for interceptor in self._interceptors(runtime, "before"):
            if interceptor.get("match") is not None:
                predicate = compile_matcher(interceptor["match"], runtime.dirs, runtime.source_dir)
                match = MatchContext(tuple(argv), exe.canonical, exe.trusted, runtime.cwd,
                                     tuple(effects), ctx.request.kind,
                                     self.matcher(ctx, argv, exe, effects))
                if not predicate(match, "deny"):
                    continue
            ident = str(interceptor["id"])
            event = self.context_event(ctx, "shell_before", argv, exe, effects, decision)
            answer = self._intercept(ctx, interceptor, ident, event)
            if answer is None:
                continue
            name, args = answer
            if name == "continue":
                continue
            ctx.audit("intercepted", argv=argv, interceptor=ident, response_action=name)
            if name == "rewrite" and _strings(args[0]):
                return ("rewrite", tuple(args[0]))
            if name == "respond":
                return ("respond", str(args[0]), str(args[1]), ident)
            reason = str(args[0]) if name == "reject" else "rewritten argv cannot be empty"
            raise ShellError("interceptor_rejected", f"interceptor {ident}: {reason}")
        return None

    def _intercept(self, ctx: CallContext, interceptor: Mapping[str, Any], ident: str,
                   event: Mapping[str, Any]) -> tuple[str, tuple[Any, ...]] | None:
        """One interceptor's answer (action, arguments); ``None`` when it failed and its
        ``failure`` setting (``keep`` / ``no_match``) says to go on as if it had not run."""
        try:
            return self._invoke(ctx, f"interceptor:{ident}", interceptor, event)
        except HookError as error:
            if interceptor.get("failure") in ("keep", "no_match"):
                return None
            raise ShellError("interceptor_rejected", f"interceptor {ident}: {error}") from None

    def after(self, ctx: CallContext, stage: StageResult) -> StageResult:
        """Run the after-interceptors over one finalised stage result (spec §8.9, §8.11)."""
        import dataclasses

        runtime = ctx.runtime
        limits = runtime.limits
        for interceptor in self._interceptors(runtime, "after"):
            ident = str(interceptor["id"])
            command = stage.command
            event = {"version": "shell-result-v1", "phase": "shell_after",
                     "argv": list(command.argv), "status_kind": command.status[0],
                     "status_code": command.status[1], "stdout": stage.stdout,
                     "stderr": stage.stderr, "stdout_truncated": stage.stdout_truncated,
                     "stderr_truncated": stage.stderr_truncated,
                     "intercepted_by": option(command.intercepted_by), "untrusted_output": True}
            answer = self._intercept(ctx, interceptor, ident, event)
            if answer is None:
                continue
            name, args = answer
            if name == "keep":
                continue
            ctx.audit("intercepted", argv=command.argv, interceptor=ident,
                      response_action=name)
            if name == "reject_disclosure":
                raise ShellError("interceptor_rejected", f"interceptor {ident}: {args[0]}")
            out = finalise(str(args[0]).encode(), int(limits["stdout"]), False, runtime.redactor)
            err = finalise(str(args[1]).encode(), int(limits["stderr"]), False, runtime.redactor)
            stage = dataclasses.replace(stage, stdout=out.text, stderr=err.text,
                                        stdout_truncated=out.truncated,
                                        stderr_truncated=err.truncated)
        return stage

    # ----------------------------------------------------------------- reviewers

    def review(self, ctx: CallContext, reviewer: Mapping[str, Any],
               context: Mapping[str, Any]) -> ApprovalAnswer:
        if reviewer.get("kind") == "model":
            return self._model_review(reviewer, context)
        if reviewer.get("kind") not in ("chatml", "executable"):
            raise ShellError("permission_required",
                             f"reviewers of kind {reviewer.get('kind')} are not available")
        entry = reviewer if reviewer.get("kind") == "chatml" else {"hook": reviewer.get("hook")}
        try:
            name, args = self._invoke(ctx, f"reviewer:{reviewer['id']}", entry, context)
        except HookError as error:
            raise ShellError("denied", str(error)) from None
        if name == "approve":
            return ApprovalAnswer("approve")
        if name == "approve_for":
            if args[0] not in _SCOPES:
                raise ShellError("denied", f"unknown approval scope: {args[0]}")
            return ApprovalAnswer("approve", scope=str(args[0]))
        if name == "deny":
            return ApprovalAnswer("deny", reason=str(args[0]))
        if name == "rewrite":
            if not _strings(args[0]):
                raise ShellError("denied", "rewritten argv cannot be empty")
            return ApprovalAnswer("rewrite", argv=tuple(args[0]))
        return ApprovalAnswer("defer")

    def _model_review(self, reviewer: Mapping[str, Any],
                      context: Mapping[str, Any]) -> ApprovalAnswer:
        from runtime.shell.model_review import ask_model

        recipe = self.model_recipes.get(str(reviewer.get("agent")))
        if recipe is None:
            raise ShellError("permission_required",
                             f"no model recipe {reviewer.get('agent')} for reviewer "
                             f"{reviewer.get('id')}")
        try:
            return ask_model(recipe, reviewer.get("model"), plain(context))
        except HookError as error:
            raise ShellError("denied", str(error)) from None

    # ----------------------------------------------------------------- audit filter

    def filter_audit(self, ctx: CallContext, record: dict[str, Any]) -> dict[str, Any] | None:
        from runtime.shell.audit import AuditWriteError

        audit = ctx.runtime.record["audit"]
        spec = audit.get("filter")
        if not spec:
            return record
        fields = sorted((k, v if isinstance(v, str) else json.dumps(v, sort_keys=True))
                        for k, v in record.items() if v is not None)
        event = {"version": "shell-audit-v1", "phase": "shell_audit", "sequence": "0",
                 "timestamp": 0.0, "session_id": option(record.get("session_id")),
                 "runtime_id": ctx.runtime.id, "manifest_sha256": ctx.runtime.manifest_sha256,
                 "request_id": ctx.request_id, "plan_id": option(record.get("plan_id")),
                 "event": str(record.get("event")),
                 "fields": [{"name": k, "value": ctx.runtime.redactor(v)} for k, v in fields]}
        try:
            name, args = self._invoke(ctx, "audit_filter", spec, event)
            return _apply_audit(record, name, args)
        except (HookError, ValueError) as error:
            raise AuditWriteError(f"audit filter failed: {error}") from None


def _failed_match(failure: str | None, action: str) -> bool:
    if failure is None:
        return action != "allow"
    if failure in ("deny", "error"):
        return action == "deny"
    return False


def _strings(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)


def _apply_effect(effects: list[Effect], name: str, args: tuple[Any, ...],
                  replace_allowed: bool) -> list[Effect]:
    if name == "replace":
        if not replace_allowed:
            raise HookError("Effect.replace needs an analyzer with replace=\"true\"")
        return [effect_from_string(str(s)) for s in args[0]]
    if name == "add":
        return [*effects, effect_from_string(str(args[0]))]
    if name == "add_many":
        return [*effects, *(effect_from_string(str(s)) for s in args[0])]
    if name == "read_path":
        return [*effects, Effect("read_path", str(args[0]))]
    if name == "write_path":
        return [*effects, Effect("write_path", str(args[0]))]
    return [*effects, Effect(name)]


def _apply_audit(record: dict[str, Any], name: str, args: tuple[Any, ...]) -> dict[str, Any]:
    if name == "keep":
        return record
    if name == "drop_field":
        field = str(args[0])
        if field in PROTECTED_AUDIT:
            raise ValueError(f"audit filter cannot drop {field}")
        return {k: v for k, v in record.items() if k != field}
    try:
        replacement = json.loads(str(args[0]))
    except ValueError:
        raise ValueError("audit replacement must be a JSON object") from None
    if not isinstance(replacement, dict):
        raise ValueError("audit replacement must be a JSON object")
    for key, value in replacement.items():
        if key in PROTECTED_AUDIT:
            raise ValueError(f"audit replacement cannot modify {key}")
        if not isinstance(value, str):
            raise ValueError(f"audit replacement field must be a string: {key}")
    return {**record, **replacement}


def plain(value: Any) -> Any:
    """An event as JSON data: ``None``/``Some`` variants become null or their value."""
    if isinstance(value, Variant):
        return plain(value.args[0]) if value.tag == "Some" and value.args else None
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def _argv(data: Mapping[str, Any]) -> list[str]:
    program, arguments = data.get("program"), data.get("arguments")
    if not isinstance(program, str) or not isinstance(arguments, list) or not all(
            isinstance(a, str) for a in arguments):
        raise HookError("rewrite needs a string program and an array of string arguments")
    return [program, *arguments]


def _text(data: Mapping[str, Any], name: str) -> str:
    value = data.get(name)
    if not isinstance(value, str):
        raise HookError(f"{name} must be a string")
    return value


def _from_executable(kind: str, data: Mapping[str, Any]) -> tuple[str, tuple[Any, ...]]:
    """An executable hook's action in the ChatML action vocabulary."""
    name = str(data.get("decision") if kind == "reviewer" else data.get("action"))
    if name == "rewrite":
        return "rewrite", (_argv(data),)
    if name in ("reject", "deny"):
        return ("reject_disclosure" if kind == "after_interceptor" else name,
                (_text(data, "reason"),))
    if name == "respond":
        return "respond", (_text(data, "stdout"), _text(data, "stderr"))
    if name == "replace_result":
        return "replace", (_text(data, "stdout"), _text(data, "stderr"))
    if name == "continue":
        return ("keep" if kind == "after_interceptor" else "continue"), ()
    if name == "approve_once":
        return "approve", ()
    if name == "approve_scope":
        return "approve_for", (_text(data, "scope"),)
    if name in ("add_effects", "replace_effects"):
        effects = data.get("effects")
        if not isinstance(effects, list) or not all(isinstance(e, str) for e in effects):
            raise HookError("effects must be an array of strings")
        return ("add_many" if name == "add_effects" else "replace"), (effects,)
    if name == "drop_field":
        return "drop_field", (_text(data, "field"),)
    if name == "replace_fields":
        fields = data.get("fields")
        if not isinstance(fields, dict):
            raise HookError("fields must be an object")
        return "replace", (json.dumps(fields),)
    return name, ()
