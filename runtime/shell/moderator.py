"""The moderator's ``Process.run`` through ``<moderator_runtime shell_runtime>`` (shell spec §8.14).

:func:`process_runner` returns the ``on_process_run`` callback of
:class:`runtime.capabilities.Capabilities`: ``Process.run(program, args)``
becomes a structured request (no stdin, origin ``moderator``) against the
bound runtime -- its policy, approvals, capabilities, limits, backend and
audit all apply -- and returns stdout followed by stderr. A refused or
failed request fails the moderator's task with ``[CODE] message``.
:func:`with_process_run` plugs it into a host's capabilities.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import attrs

from chatml.tasks import OperationError
from runtime.capabilities import Capabilities
from runtime.shell.executor import ShellSession
from runtime.shell.instance import ToolInstance

TOOL_NAME = "moderator:Process.run"


def process_runner(session: ShellSession) -> Callable[[str, list[str]], str]:
    """``on_process_run`` for ``session``'s bound moderator runtime."""

    def run(program: str, arguments: list[str]) -> str:
        runtime_id = session.moderator_runtime
        if runtime_id is None:
            raise OperationError("Process.run is not configured")
        runtime = session.runtimes.get(runtime_id)
        if runtime is None:
            raise OperationError("[shell.moderator_runtime_missing] moderator shell runtime is "
                                 f"not instantiated: {runtime_id}")
        if not all(isinstance(a, str) for a in arguments):
            raise OperationError("[shell.moderator_invalid_arguments] Process.run args must be "
                                 "strings")
        tool = ToolInstance(TOOL_NAME, runtime, {"type": "structured"}, "none", "none",
                            "combined", "result")
        outcome = session.run_tool(tool, {"program": program, "arguments": list(arguments)},
                                   origin="moderator")
        if outcome.result is None:
            error = json.loads(outcome.text)["error"]
            raise OperationError(f"[{error['code']}] {error['message']}")
        return outcome.result.stdout + outcome.result.stderr
    return run


def with_process_run(capabilities: Capabilities, session: ShellSession) -> Capabilities:
    """``capabilities`` with ``Process.run`` routed through the session's moderator runtime."""
    if session.moderator_runtime is None:
        return capabilities
    return attrs.evolve(capabilities, on_process_run=process_runner(session))
