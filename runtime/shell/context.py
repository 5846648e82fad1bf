"""The per-request context shared by preparation, approval and spawning.

:class:`CallContext` carries the tool, its runtime, the request, the request
id and wall deadline, the session (grants, reviewer, hooks, admin policy) and
emits audit records (:meth:`CallContext.audit`) with the fields of shell spec
§8.13, honouring the runtime's audit ``content`` and ``failure`` settings.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from runtime.shell.audit import AuditWriteError
from runtime.shell.errors import ShellError
from runtime.shell.instance import RuntimeInstance, ToolInstance
from runtime.shell.requests import Request

if TYPE_CHECKING:
    from runtime.shell.executor import ShellSession


#: Events after which a request's records are flushed to disk (``failure="deny_start"``).
_FINAL_EVENTS = frozenset({"started", "finished", "terminated", "rejected"})


def argv_sha256(argv: Sequence[str]) -> str:
    return hashlib.sha256("\0".join(argv).encode("utf-8", "surrogateescape")).hexdigest()


@dataclass
class CallContext:
    session: ShellSession
    tool: ToolInstance
    request: Request
    request_id: str
    deadline: float
    origin: str = "tool"
    started: bool = field(default=False)
    stdin_kind: str = "empty"
    """Of the command being prepared: ``supplied``, ``pipeline`` or ``empty``."""

    @property
    def runtime(self) -> RuntimeInstance:
        return self.tool.runtime

    def check_deadline(self) -> None:
        if time.monotonic() >= self.deadline:
            raise ShellError("timed_out", "the request exceeded its wall_time limit")

    def _durable(self, event: str) -> bool:
        """fsync policy: every record with ``failure="terminate"``, the records that open and
        close a process with ``deny_start``, none with ``continue`` (appends stay atomic)."""
        failure = self.runtime.audit_failure
        return failure == "terminate" or (failure == "deny_start" and event in _FINAL_EVENTS)

    def audit(self, event: str, *, argv: Sequence[str] = (), plan_id: str | None = None,
              effects: Sequence[str] = (), **extra: Any) -> None:
        log = self.runtime.audit
        if log is None:
            return
        record: dict[str, Any] = {
            "session_id": self.session.session_id, "runtime_id": self.runtime.id,
            "manifest_sha256": self.runtime.manifest_sha256, "request_id": self.request_id,
            "plan_id": plan_id, "event": event, "request_kind": self.request.kind,
            "tool": self.tool.name, "origin": self.origin,
            "command_sha256": argv_sha256(argv) if argv else None,
            "cwd_sha256": hashlib.sha256(self.runtime.cwd.encode()).hexdigest(),
            "effects": sorted({e.split(":", 1)[0] for e in effects}),
        }
        if argv and self.runtime.audit_content != "metadata":
            record["command"] = list(argv)
        record.update(_plain(extra))
        try:
            hooks = self.session.hooks
            if hooks is not None:
                filtered = hooks.filter_audit(self, record)
                if filtered is None:
                    return
                record = filtered
            log.write(record, sync=self._durable(event))
        except AuditWriteError as error:
            failure = self.runtime.audit_failure
            if failure == "terminate" or (failure == "deny_start" and not self.started):
                raise ShellError("audit_unavailable", str(error)) from None


def _plain(values: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in values.items() if value is not None}
