"""Runners for shell tools (compact ``command=``, legacy and long-form) through ``runtime.shell``.

The prompt's shell layer is instantiated once per run (:func:`runtime.shell.shell_runners`):
every shell tool is published with the manifest's runtime, or -- when instantiation fails
(a required sandbox missing, an admin ceiling exceeded, ...) -- none runs and each call
returns a tool failure naming the reason (fail closed, never silently skipped).
Approvals follow ``--approvals``: ``allow`` and ``deny`` answer every ``ask`` rule
themselves; ``ask`` asks on the terminal when standard input is one, and denies otherwise.
"""

from __future__ import annotations

import sys
import threading

from chatmd.ir import CustomTool, Prompt, ShellTool
from runtime.driver.context import DriverContext
from runtime.driver.failures import ToolFailure
from runtime.shell.approvals import ApprovalAnswer, ApprovalRequest
from runtime.tools import Runner, ToolOutput

_ASKING = threading.Lock()  # parallel tool calls ask one at a time


def _terminal_ask(request: ApprovalRequest) -> bool | ApprovalAnswer:
    from runtime.shell.commands import terminal_reviewer

    with _ASKING:
        return terminal_reviewer(request)


def shell_runners(tools: list[CustomTool | ShellTool], prompt: Prompt,
                  ctx: DriverContext) -> dict[str, Runner]:
    """One runner per shell tool of ``prompt`` (``tools``, in declaration order)."""
    from runtime.shell import shell_runners as instantiate
    from runtime.shell.errors import InstantiationError

    ask = _terminal_ask if ctx.approvals == "ask" and sys.stdin.isatty() else None
    try:
        runners = instantiate(prompt, workspace=ctx.workspace, approvals=ctx.approvals, ask=ask)
    except InstantiationError as error:
        reason = f"the prompt's shell runtimes cannot run here: {error}"
        return {tool.name: _failing(tool, reason) for tool in tools}
    return {tool.name: runners.get(tool.name) or _failing(tool, "it has no compiled shell tool")
            for tool in tools}


def _failing(tool: CustomTool | ShellTool, reason: str) -> Runner:
    message = f"the shell tool '{tool.name}' was not run: {reason} (nothing was executed)"

    def run(payload: str) -> ToolOutput:
        raise ToolFailure(message)

    return run


__all__ = ["shell_runners"]
