"""Runners for shell tools (compact ``command=``, legacy and long-form): the one plug-in point.

Shell tools run through the shell executor (``runtime.shell``) of the shell execution
issue. Until that executor is part of this tree, :func:`shell_runner` fails closed: every
call returns a tool failure saying so (the model reads it; nothing is executed, nothing
is silently skipped). Plugging the executor in means replacing the body of
:func:`shell_runner` only.
"""

from __future__ import annotations

from chatmd.ir import CustomTool, Prompt, ShellTool
from runtime.driver.context import DriverContext
from runtime.driver.failures import ToolFailure
from runtime.tools import Runner, ToolOutput


def shell_runner(tool: CustomTool | ShellTool, prompt: Prompt, ctx: DriverContext) -> Runner:
    """The runner of a shell tool (fails closed until the shell executor lands)."""
    kind = "compact command" if isinstance(tool, CustomTool) else "shell"
    message = (f"the {kind} tool '{tool.name}' was not run: this build of chatmdc has no "
               "shell executor yet, so shell tools fail closed (nothing was executed)")

    def run(payload: str) -> ToolOutput:
        raise ToolFailure(message)

    return run


__all__ = ["shell_runner"]
