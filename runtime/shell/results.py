"""Model-visible results and errors (shell spec §9, §7 invocation errors).

:func:`error_text` is the JSON error object ``{"error": {"code", "message"}}``;
:func:`render` turns a :class:`RequestResult` into what the model receives:
``combined`` (stdout then stderr), ``stdout``, or the ``structured`` JSON
object; with ``nonzero="error"`` a status other than ``exited 0`` becomes the
error ``shell.tool_nonzero`` (the rendered result under ``result``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CommandRecord:
    argv: tuple[str, ...]
    executable_sha256: str
    status: tuple[str, int]
    intercepted_by: str | None


@dataclass(frozen=True)
class StageResult:
    """One executed stage, finalised: what after-interceptors see and may replace."""

    command: CommandRecord
    stdout: str
    stdout_truncated: bool
    stderr: str
    stderr_truncated: bool


@dataclass(frozen=True)
class RequestResult:
    request_id: str
    status: tuple[str, int]
    stdout: str
    stderr: str
    stdout_truncated: bool
    stderr_truncated: bool
    backend: str
    runtime_id: str
    manifest_sha256: str
    commands: tuple[CommandRecord, ...]


@dataclass(frozen=True)
class CallOutcome:
    """What a tool call produced: the model-visible ``text``; ``error_code`` when refused."""

    text: str
    error_code: str | None = None
    result: RequestResult | None = None

    @property
    def ran(self) -> bool:
        return self.result is not None


def status_json(status: tuple[str, int]) -> dict[str, int]:
    return {status[0]: status[1]}


def error_text(code: str, message: str, **extra: Any) -> str:
    return json.dumps({"error": {"code": code, "message": message, **extra}},
                      ensure_ascii=False)


def structured(result: RequestResult) -> dict[str, Any]:
    return {
        "request_id": result.request_id, "status": status_json(result.status),
        "stdout": result.stdout, "stderr": result.stderr,
        "stdout_truncated": result.stdout_truncated,
        "stderr_truncated": result.stderr_truncated, "backend": result.backend,
        "runtime_id": result.runtime_id, "manifest_sha256": result.manifest_sha256,
        "untrusted_output": True,
        "commands": [{"argv": list(c.argv), "executable_sha256": c.executable_sha256,
                      "status": status_json(c.status), "intercepted_by": c.intercepted_by}
                     for c in result.commands],
    }


def render(result: RequestResult, mode: str, nonzero: str) -> CallOutcome:
    if mode == "structured":
        text = json.dumps(structured(result), ensure_ascii=False)
    elif mode == "stdout":
        text = result.stdout
    else:
        text = result.stdout + result.stderr
    if nonzero == "error" and result.status != ("exited", 0):
        kind, value = result.status
        return CallOutcome(error_text("shell.tool_nonzero",
                                      f"the command {kind} with {value}", result=text),
                           "shell.tool_nonzero", result)
    return CallOutcome(text, None, result)
