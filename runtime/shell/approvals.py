"""Approvals (shell spec §8.7): identity, grant stores, reviewers.

* :func:`approval_identity` / :func:`command_hash`: what an approval is bound
  to (manifest, runtime, request kind, executable path and SHA-256, cwd hash,
  environment hash, stdin digest and length, script digest, full argv),
  hashed over a length-prefixed concatenation.
* :class:`GrantStore`: ``exact_session`` and ``prefix_session`` grants in
  memory, ``durable_exact`` grants in a JSON file written atomically
  (:func:`chatcommon.atomic.atomic_write_bytes`). ``once`` is never stored.
  The file is used only for a runtime whose ``<approvals durable="true">``
  allows it: otherwise a ``durable_exact`` answer is kept for the session
  only (like ``exact_session``) and the file is neither read nor written.
* :class:`ApprovalRequest` is what a reviewer sees; a UI reviewer is a host
  callback returning ``True`` (approve once), ``False`` (deny) or an
  :class:`ApprovalAnswer`. Scopes are limited to the runtime's declared
  ``scopes`` on every path: an undeclared scope is a denial.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from chatcommon.atomic import atomic_write_bytes
from runtime.shell.errors import ShellError

SCOPES = ("once", "exact_session", "prefix_session", "durable_exact")


@dataclass(frozen=True)
class Identity:
    """The non-argv fields of an approval identity, and the argv."""

    fields: tuple[tuple[str, str], ...]
    argv: tuple[str, ...]

    @property
    def scope_hash(self) -> str:
        return _hash([value for _name, value in self.fields])

    @property
    def command_hash(self) -> str:
        return _hash([value for _name, value in self.fields] + list(self.argv))


def _hash(parts: Sequence[str]) -> str:
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogateescape")
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def approval_identity(*, manifest_sha256: str, runtime_id: str, request_kind: str,
                      executable: str, executable_sha256: str, cwd: str,
                      env: Mapping[str, str], stdin: bytes, script_sha256: str | None,
                      argv: Sequence[str]) -> Identity:
    env_text = "\0".join(f"{k}={v}" for k, v in sorted(env.items()))
    fields = (("manifest_sha256", manifest_sha256), ("runtime_id", runtime_id),
              ("request_kind", request_kind), ("executable", executable),
              ("executable_sha256", executable_sha256), ("cwd_sha256", sha256_text(cwd)),
              ("env_sha256", sha256_text(env_text)),
              ("stdin_sha256", hashlib.sha256(stdin).hexdigest()),
              ("stdin_bytes", str(len(stdin))), ("script_sha256", script_sha256 or ""))
    return Identity(fields, tuple(argv))


@dataclass(frozen=True)
class ApprovalRequest:
    """What a reviewer is shown."""

    runtime_id: str
    tool: str
    command: str
    """The display command: argv shell-quoted, secrets redacted."""
    request_kind: str
    policy_reason: str
    rationale: str | None
    scopes: tuple[str, ...]
    command_hash: str
    effects: tuple[str, ...] = ()
    script_preview: str | None = None


@dataclass(frozen=True)
class ApprovalAnswer:
    """A reviewer's answer: ``approve`` (with a scope), ``deny``, ``rewrite`` or ``defer``."""

    decision: str
    scope: str = "once"
    reason: str = ""
    prefix: tuple[str, ...] | None = None
    expires_at: float | None = None
    argv: tuple[str, ...] | None = None
    """For ``rewrite``: the replacement argv (preparation restarts with it)."""


Reviewer = Callable[[ApprovalRequest], "bool | ApprovalAnswer"]


def display_command(argv: Sequence[str], redact: Callable[[str], str]) -> str:
    return redact(shlex.join(argv))


@dataclass
class _Grant:
    scope: str
    scope_hash: str
    command_hash: str
    prefix: tuple[str, ...]
    expires_at: float | None

    def live(self) -> bool:
        return self.expires_at is None or self.expires_at > time.time()


@dataclass
class GrantStore:
    """Session grants in memory plus durable exact grants in ``durable_path`` (JSON)."""

    durable_path: str | None = None
    _session: list[_Grant] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def lookup(self, identity: Identity, *, durable: bool = True) -> str | None:
        """The scope of a stored grant covering ``identity``, or None.

        ``durable``: whether the runtime allows durable grants (the file is consulted)."""
        command, scope = identity.command_hash, identity.scope_hash
        with self._lock:
            for grant in self._session:
                if not grant.live():
                    continue
                if grant.scope == "exact_session" and grant.command_hash == command:
                    return grant.scope
                if (grant.scope == "prefix_session" and grant.scope_hash == scope
                        and identity.argv[:len(grant.prefix)] == grant.prefix):
                    return grant.scope
        for entry in self._durable() if durable else ():
            if entry.get("command_hash") == command and (
                    entry.get("expires_at") is None or entry["expires_at"] > time.time()):
                return "durable_exact"
        return None

    def store(self, identity: Identity, answer: ApprovalAnswer, *, durable: bool = True) -> None:
        """Keep a scoped grant; ``durable_exact`` goes to the file only when ``durable``."""
        if answer.scope == "once":
            return
        prefix = tuple(answer.prefix) if answer.prefix else identity.argv
        scope = answer.scope
        if scope == "durable_exact" and not durable:
            scope = "exact_session"  # the runtime does not allow durable grants: session only
        grant = _Grant(scope, identity.scope_hash, identity.command_hash, prefix,
                       answer.expires_at)
        if scope == "durable_exact":
            self._store_durable(grant)
            return
        with self._lock:
            self._session.append(grant)

    def _durable(self) -> list[dict[str, Any]]:
        if self.durable_path is None:
            return []
        try:
            with open(self.durable_path, encoding="utf-8") as handle:
                data = json.load(handle)
        except (OSError, ValueError):
            return []
        grants = data.get("grants") if isinstance(data, dict) else None
        return [g for g in grants or () if isinstance(g, dict)]

    def _store_durable(self, grant: _Grant) -> None:
        if self.durable_path is None:
            raise ShellError("denied", "durable grants are not available (no grant file)")
        with self._lock:
            grants = self._durable()
            grants.append({"command_hash": grant.command_hash, "expires_at": grant.expires_at,
                           "granted_at": time.time()})
            data = json.dumps({"version": 1, "grants": grants}, sort_keys=True, indent=1)
            try:
                atomic_write_bytes(self.durable_path, data.encode("utf-8"), mode=0o600)
            except OSError as error:
                raise ShellError("denied", f"the grant could not be stored: "
                                 f"{error.strerror or error}") from None


def normalise_answer(answer: object) -> ApprovalAnswer:
    if answer is True:
        return ApprovalAnswer("approve")
    if answer is False or answer is None:
        return ApprovalAnswer("deny", reason="denied by the reviewer")
    if isinstance(answer, ApprovalAnswer):
        return answer
    raise ShellError("denied", "the reviewer returned an invalid answer")


def default_grant_path(session_dir: str) -> str:
    return os.path.join(session_dir, ".chatmd", "shell-grants.json")
