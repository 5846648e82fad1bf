"""Instantiation (shell spec §6.10): a compiled manifest plus the host -> live runtimes and tools.

:func:`instantiate` resolves ``${...}`` bases against :class:`HostDirs`,
builds each runtime's environment and secrets, checks its cwd, lowers roots,
resolver, limits and policy, keeps the available platform-matching backends
(failing when the sandbox mode cannot be served), opens its audit sink, and
prepares every tool (compact commands parsed, script-mode scripts loaded and
pinned). Everything is published together or not at all: the first problem
raises :class:`~runtime.shell.errors.InstantiationError`.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from chatmd.shell.compile.chain import ChainError, parse_chain
from runtime.shell.audit import AuditLog
from runtime.shell.backends import (
    Backend,
    check_available,
    instantiate_backends,
    unsupported_backends,
)
from runtime.shell.effects import Capabilities
from runtime.shell.environment import build_environment
from runtime.shell.errors import InstantiationError, ShellError
from runtime.shell.paths import HostDirs, canonical, resolve_path_expr
from runtime.shell.policy import Policy
from runtime.shell.resolve import Alias, Executable, Resolver, fingerprint
from runtime.shell.secrets import Redactor, load_secrets

_POSITIVE_LIMITS = ("max_stdin", "stdout", "stderr", "total_output")
#: The session audit sink rotates at 10 MiB, keeping 5 files (spec §8.13).
SESSION_AUDIT_ROTATE = 10 * 1024 * 1024


@dataclass
class RuntimeInstance:
    """One live runtime (immutable after instantiation)."""

    id: str
    manifest_sha256: str
    dirs: HostDirs
    source_dir: str | None
    cwd: str
    pipefail: bool
    capabilities: Capabilities
    resolver: Resolver
    env: Mapping[str, str]
    redactor: Redactor
    limits: Mapping[str, Any]
    backends: Sequence[Backend]
    accept_declared: bool
    policy: Policy
    approvals: Mapping[str, Any]
    reviewers: Sequence[Mapping[str, Any]]
    has_reviewers_section: bool
    audit: AuditLog | None
    audit_content: str
    audit_failure: str
    record: Mapping[str, Any] = field(repr=False, default_factory=dict)

    def path(self, record: Mapping[str, Any]) -> str:
        return resolve_path_expr(record, self.dirs, self.source_dir)


@dataclass(frozen=True)
class ScriptPin:
    """A script-mode tool's script, pinned at instantiation."""

    path: str
    sha256: str
    max_bytes: int
    interpreter: Executable | None
    launched_sha256: str


@dataclass
class ToolInstance:
    """One published shell tool."""

    name: str
    runtime: RuntimeInstance
    mode: Mapping[str, Any]
    stdin: str
    rationale: str
    result: str
    nonzero: str
    compact: tuple[str, ...] | None = None
    secret_values: Mapping[str, str | None] = field(default_factory=dict)
    script: ScriptPin | None = None
    raw_executable: str | None = None
    pinned_sha256: str | None = None
    """A hook tool's pinned executable digest (checked like a script's, spec §8.3 step 2)."""

    @property
    def mode_name(self) -> str:
        return str(self.mode.get("type"))


def _roots(entries: Sequence[Mapping[str, Any]], runtime: RuntimeInstance | None,
           resolve: Any, host_env: Mapping[str, str]) -> tuple[str, ...]:
    roots: list[str] = []
    for entry in entries:
        if entry.get("path") is not None:
            roots.append(canonical(resolve(entry["path"])))
        elif entry.get("path_env"):
            value = host_env.get(str(entry["path_env"]))
            if value:
                roots.append(canonical(value))
            elif not entry.get("optional"):
                raise InstantiationError("shell.capability_path_missing",
                                         f"root variable {entry['path_env']} is not set")
    return tuple(roots)


def _limits(record: Mapping[str, Any], runtime_id: str) -> dict[str, Any]:
    limits = dict(record)
    if limits.get("wall_time") is None:
        raise InstantiationError("shell.required_limit_disabled",
                                 f"runtime {runtime_id}: wall_time cannot be none")
    for name in _POSITIVE_LIMITS:
        if not limits.get(name):
            raise InstantiationError("shell.runtime_instantiation_failed",
                                     f"runtime {runtime_id}: limit {name} must be > 0")
    return limits


def _audit(record: Mapping[str, Any], dirs: HostDirs, source_dir: str | None,
           redactor: Redactor, session_audit: str | None) -> AuditLog | None:
    kind = record.get("format")
    if kind == "jsonl":
        return AuditLog(resolve_path_expr(record["path"], dirs, source_dir), redact=redactor)
    if kind == "session":
        path = session_audit or os.path.join(dirs.session_dir, ".chatmd", "shell-audit.jsonl")
        return AuditLog(path, redact=redactor, rotate_bytes=SESSION_AUDIT_ROTATE, keep=5)
    if kind == "stderr":
        return AuditLog(None, chained=False, redact=redactor)
    return None


def instantiate_runtime(record: Mapping[str, Any], manifest_sha256: str, dirs: HostDirs,
                        host_env: Mapping[str, str], platform: str, *,
                        literal_secrets: Sequence[str] = (),
                        session_audit: str | None = None) -> RuntimeInstance:
    runtime_id = str(record["id"])
    source_dir = (record.get("source") or {}).get("source_dir")

    def resolve(path: Mapping[str, Any]) -> str:
        return resolve_path_expr(path, dirs, source_dir)

    cwd = canonical(resolve(record["cwd"]))
    if not os.path.isdir(cwd):
        raise InstantiationError("shell.directory_unavailable",
                                 f"runtime {runtime_id}: cwd {cwd} is not a directory")
    env, pass_secrets = build_environment(record["environment"], host_env, dirs, source_dir)
    secrets = load_secrets(record["secrets"], host_env, dirs, source_dir, literal_secrets)
    redactor = Redactor([*pass_secrets, *secrets],
                        str(record["secrets"].get("replacement") or "[REDACTED]"))
    caps_record = record["capabilities"]
    caps = Capabilities(
        str(caps_record["sandbox"]), bool(caps_record["network"]),
        bool(caps_record["child_processes"]), bool(caps_record["arbitrary_code"]),
        bool(caps_record["privilege_change"]),
        _roots(caps_record.get("reads") or (), None, resolve, host_env),
        _roots(caps_record.get("writes") or (), None, resolve, host_env))
    resolver_record = record["resolver"]
    aliases = {str(e["id"]): Alias(resolve(e["path"]), bool(e.get("trusted")), e.get("sha256"))
               for e in resolver_record.get("executables") or ()}
    resolver = Resolver(cwd, aliases,
                        [resolve(e["path"]) for e in resolver_record.get("search_paths") or ()],
                        [resolve(e["path"]) for e in resolver_record.get("trusted_roots") or ()],
                        env.get("PATH"))
    _check_aliases(aliases)
    backends_record = record["backends"]
    backends = instantiate_backends(backends_record, platform, resolve)
    accept = bool(backends_record.get("accept_declared_confinement"))
    check_available(backends, caps.sandbox, accept, runtime_id,
                    unsupported_backends(backends_record, platform))
    reviewers = record.get("reviewers") or {}
    return RuntimeInstance(
        id=runtime_id, manifest_sha256=manifest_sha256, dirs=dirs, source_dir=source_dir,
        cwd=cwd, pipefail=bool(record.get("pipefail")), capabilities=caps, resolver=resolver,
        env=env, redactor=redactor, limits=_limits(record["limits"], runtime_id),
        backends=backends, accept_declared=accept,
        policy=Policy.from_manifest(record["policy"], dirs, source_dir),
        approvals=dict(record["approvals"]), reviewers=list(reviewers.get("reviewers") or ()),
        has_reviewers_section=bool(reviewers.get("reviewers")),
        audit=_audit(record["audit"], dirs, source_dir, redactor, session_audit),
        audit_content=str(record["audit"].get("content") or "redacted"),
        audit_failure=str(record["audit"].get("failure") or "continue"), record=record)


def _check_aliases(aliases: Mapping[str, Alias]) -> None:
    for alias_id, alias in aliases.items():
        try:
            print_ = fingerprint(alias.path, alias_id)
        except ShellError as error:
            raise InstantiationError("shell.executable_unavailable", error.message) from None
        if alias.sha256 and alias.sha256.lower() != print_.sha256:
            raise InstantiationError("shell.executable_digest_mismatch",
                                     f"executable {alias_id} ({alias.path}) does not match its "
                                     "pinned sha256")


def read_script(path: str, max_bytes: int, *, code_missing: str = "shell.script_unavailable",
                code_large: str = "shell.script_too_large") -> bytes:
    try:
        with open(path, "rb") as handle:
            if not os.path.isfile(path):
                raise OSError("not a regular file")
            data = handle.read(max_bytes + 1)
    except OSError:
        raise InstantiationError(code_missing, f"script {path} is not a readable regular file"
                                 ) from None
    if len(data) > max_bytes:
        raise InstantiationError(code_large, f"script {path} is larger than {max_bytes} bytes")
    return data


def _script_pin(mode: Mapping[str, Any], runtime: RuntimeInstance) -> ScriptPin:
    path = canonical(runtime.path(mode["script"]))
    max_bytes = int(mode.get("max_source_bytes") or 1048576)
    digest = hashlib.sha256(read_script(path, max_bytes)).hexdigest()
    interpreter = None
    if mode.get("interpreter") is not None:
        target = runtime.path(mode["interpreter"])
        try:
            interpreter = Executable(target, target, False, fingerprint(target, target))
        except ShellError as error:
            raise InstantiationError("shell.script_executable_unavailable",
                                     error.message) from None
        launched = interpreter.sha256
    else:
        if not mode.get("executable", True):
            raise InstantiationError("shell.script_not_executable",
                                     f"script {path} has no interpreter and is not executable")
        try:
            launched = fingerprint(path, path).sha256
        except ShellError as error:
            raise InstantiationError("shell.script_executable_unavailable",
                                     error.message) from None
    return ScriptPin(path, digest, max_bytes, interpreter, launched)


def instantiate_tool(record: Mapping[str, Any], runtime: RuntimeInstance) -> ToolInstance:
    mode = record["mode"]
    tool = ToolInstance(str(record["name"]), runtime, mode, str(record["stdin"]),
                        str(record["rationale"]), str(record["result"]), str(record["nonzero"]))
    kind = mode.get("type")
    if kind == "fixed":
        command = mode["command"]
        if command.get("type") == "compact":
            try:
                words = parse_chain(str(command["text"])).single_command
            except ChainError as error:
                raise InstantiationError("shell.tool_invalid_fixed_command",
                                         f"tool {tool.name}: {error}") from None
            if words is None:
                raise InstantiationError("shell.tool_invalid_fixed_command",
                                         f"tool {tool.name}: the command must be one simple "
                                         "command")
            tool.compact = words
        else:
            tool.secret_values = {
                str(arg["env"]): runtime.env.get(str(arg["env"]))
                for arg in command.get("arguments") or () if arg.get("type") == "secret"}
    elif kind == "script":
        tool.script = _script_pin(mode, runtime)
    elif kind == "raw":
        target = runtime.path(mode["executable"])
        try:
            tool.raw_executable = fingerprint(target, target).canonical
        except ShellError as error:
            raise InstantiationError("shell.executable_unavailable", error.message) from None
    return tool
