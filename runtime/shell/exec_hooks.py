"""Executable hooks, protocol ``shell-hook-json-v1`` (shell spec §8.11).

An executable reviewer, interceptor, analyzer or audit filter is pinned at
instantiation through its *worker runtime* (resolved and fingerprinted, its
``sha256`` checked: ``shell.hook_executable_unavailable`` /
``shell.hook_digest_mismatch``). Each call is one process run as a
structured command through the worker runtime -- the worker's policy,
capabilities, limits, backend and audit apply, never the caller's -- with one
canonical JSON object on stdin (``{hook_id, kind, payload, request_id,
version: 1}``) and exactly one JSON object expected on stdout: ``version: 1``,
the echoed ``request_id`` and the exact fields of one action. Oversize
input, truncated or oversize output, a non-zero exit, a request-id mismatch
or a schema violation raise :class:`~runtime.shell.chatml_bridge.HookError`,
handled by the caller per the hook's ``failure``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from runtime.shell.chatml_bridge import HookError
from runtime.shell.errors import InstantiationError, ShellError
from runtime.shell.instance import RuntimeInstance, ToolInstance
from runtime.shell.resolve import fingerprint

if TYPE_CHECKING:
    from runtime.shell.executor import ShellSession

#: kind -> (the key naming the action, {action: its exact extra fields}).
SCHEMAS: dict[str, tuple[str, dict[str, frozenset[str]]]] = {
    "before_interceptor": ("action", {
        "continue": frozenset(), "rewrite": frozenset({"program", "arguments"}),
        "respond": frozenset({"status", "stdout", "stderr"}), "reject": frozenset({"reason"})}),
    "after_interceptor": ("action", {
        "continue": frozenset(), "replace_result": frozenset({"stdout", "stderr"}),
        "reject": frozenset({"reason"})}),
    "reviewer": ("decision", {
        "defer": frozenset(), "approve_once": frozenset(),
        "approve_scope": frozenset({"scope"}), "deny": frozenset({"reason"}),
        "rewrite": frozenset({"program", "arguments"})}),
    "effect_analyzer": ("action", {
        "add_effects": frozenset({"effects"}), "replace_effects": frozenset({"effects"})}),
    "audit_filter": ("action", {
        "keep": frozenset(), "drop_field": frozenset({"field"}),
        "replace_fields": frozenset({"fields"})}),
}
_OPTIONAL = {"approve_scope": frozenset({"expires_at"})}


@dataclass(frozen=True)
class ExecutableHook:
    """One pinned hook executable and the worker runtime that runs it."""

    hook_id: str
    kind: str
    path: str
    sha256: str
    worker: RuntimeInstance
    timeout: float | None
    max_input: int
    max_output: int

    def call(self, session: ShellSession, request_id: str,
             payload: Mapping[str, Any]) -> dict[str, Any]:
        """Run the hook once; the decoded action object."""
        message = json.dumps({"hook_id": self.hook_id, "kind": self.kind, "payload": payload,
                              "request_id": request_id, "version": 1},
                             sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        if len(message.encode()) > self.max_input:
            raise HookError(f"hook {self.hook_id}: input exceeds max_input")
        tool = ToolInstance(f"hook:{self.hook_id}", self.worker, {"type": "structured"},
                            "optional", "none", "stdout", "result", pinned_sha256=self.sha256)
        outcome = session.run_tool(tool, {"program": self.path, "arguments": [],
                                          "stdin": message},
                                   origin=f"hook:{self.hook_id}", wall_time=self.timeout)
        result = outcome.result
        if result is None:
            raise HookError(f"hook {self.hook_id} failed: {outcome.text}")
        if result.status != ("exited", 0):
            raise HookError(f"hook {self.hook_id} {result.status[0]} with {result.status[1]}")
        if result.stdout_truncated or len(result.stdout.encode()) > self.max_output:
            raise HookError(f"hook {self.hook_id}: output exceeds max_output")
        return decode_response(self.hook_id, self.kind, result.stdout, request_id)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise HookError(f"duplicate key {key}")
        result[key] = value
    return result


def decode_response(hook_id: str, kind: str, text: str, request_id: str) -> dict[str, Any]:
    """Check one hook response against the protocol; the action object."""
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates)
    except ValueError as error:
        raise HookError(f"hook {hook_id}: the response is not one JSON object: {error}") from None
    if not isinstance(data, dict):
        raise HookError(f"hook {hook_id}: the response must be a JSON object")
    if data.get("version") != 1:
        raise HookError(f"hook {hook_id}: version must be 1")
    if data.get("request_id") != request_id:
        raise HookError(f"hook {hook_id}: request_id does not match")
    key, actions = SCHEMAS[kind]
    name = data.get(key)
    if name not in actions:
        raise HookError(f"hook {hook_id}: unknown {key} {name!r}")
    fields = set(data) - {"version", "request_id", key}
    required = actions[name]
    if not required <= fields or fields - required - _OPTIONAL.get(name, frozenset()):
        raise HookError(f"hook {hook_id}: {name} needs exactly the fields "
                        f"{', '.join(sorted(required)) or '(none)'}")
    return data


def pin_hook(hook_id: str, kind: str, record: Mapping[str, Any], caller: RuntimeInstance,
             workers: Mapping[str, RuntimeInstance]) -> ExecutableHook:
    """Resolve and pin a hook executable through its worker runtime (instantiation)."""
    worker = workers.get(str(record.get("runtime")))
    if worker is None:
        raise InstantiationError("shell.worker_runtime_unavailable",
                                 f"worker runtime {record.get('runtime')} of hook {hook_id} is "
                                 "not instantiated")
    path = caller.path(record["executable"])
    try:
        print_ = fingerprint(worker.resolver.resolve(path).path, path)
    except ShellError as error:
        raise InstantiationError("shell.hook_executable_unavailable", error.message) from None
    pinned = record.get("sha256")
    if pinned and str(pinned).lower() != print_.sha256:
        raise InstantiationError("shell.hook_digest_mismatch",
                                 f"hook {hook_id}: {path} does not match its pinned sha256")
    timeout = record.get("timeout")
    return ExecutableHook(hook_id, kind, print_.canonical, print_.sha256, worker,
                          float(timeout) if timeout else None,
                          int(record.get("max_input") or 1048576),
                          int(record.get("max_output") or 262144))


def runtime_hooks(runtime: RuntimeInstance) -> list[tuple[str, str, Mapping[str, Any]]]:
    """(key, kind, hook record) of every executable hook of a runtime."""
    record = runtime.record
    found: list[tuple[str, str, Mapping[str, Any]]] = []
    for reviewer in record["reviewers"].get("reviewers") or ():
        if reviewer.get("kind") == "executable" and reviewer.get("hook"):
            found.append((f"reviewer:{reviewer['id']}", "reviewer", reviewer["hook"]))
    for interceptor in record["interceptors"].get("interceptors") or ():
        if interceptor.get("hook"):
            found.append((f"interceptor:{interceptor['id']}",
                          f"{interceptor['phase']}_interceptor", interceptor["hook"]))
    for analyzer in record["effect_analysis"].get("analyzers") or ():
        if analyzer.get("hook"):
            found.append((f"analyzer:{analyzer['id']}", "effect_analyzer", analyzer["hook"]))
    audit_filter = record["audit"].get("filter")
    if audit_filter and audit_filter.get("hook"):
        found.append(("audit_filter", "audit_filter", audit_filter["hook"]))
    return found
