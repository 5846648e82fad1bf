"""Runners for a prompt's declared tools, by model-visible name (spec 8.8).

* built-ins (``read_file``/``get_contents``, ``apply_patch``, ...): :mod:`runtime.builtin_tools`
  (``builtin_runner(tool, ToolEnv)``), in-process, relative to the workspace;
* agent tools: a nested agent (``agent_runner``, :func:`runtime.driver.setup.agent_tool_runner`);
* shell tools (compact, legacy, long-form): :func:`runtime.driver.shell_tools.shell_runners`;
* MCP tools: :func:`runtime.mcp.open_mcp_tools`; the opened tools are the request
  conversion's MCP catalogue (definitions in declaration order, ``strict`` kept) and their
  runners join the others (a server unreachable at start is a positioned diagnostic,
  raised as ``DiagnosticError`` before any request).

Every runner is wrapped (:func:`instrument`): ``tool_started``/``tool_finished`` events, one
activity line on standard error, and any failure (a :class:`ToolFailure`, a bad argument, any
exception of the tool) becomes the tool output ``error: ...`` the model reads, never a crash
of the run.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from chatmd.ir import AgentTool, BuiltinTool, CustomTool, McpTool, Prompt, ReadFileTool, ShellTool
from chatmd.tools.names import MODEL_NAMES
from runtime.driver.context import DriverContext
from runtime.driver.display import preview
from runtime.driver.failures import ToolFailure
from runtime.driver.shell_tools import shell_runners
from runtime.tools import HostTool, Runner, ToolOutput


@attrs.define
class ToolRunners:
    runners: dict[str, Runner] = attrs.field(factory=dict)
    host_tools: list[HostTool] = attrs.field(factory=list)
    mcp_catalogue: Any = None
    """The opened MCP tools (a ``chatmd.tools.mcp.McpCatalogue`` for request conversion)."""
    closers: list[Callable[[], None]] = attrs.field(factory=list)

    def close(self) -> None:
        for close in reversed(self.closers):
            with contextlib.suppress(Exception):  # closing a tool never fails the run
                close()
        self.closers.clear()


def _unavailable(name: str, why: str) -> Runner:
    def run(payload: str) -> ToolOutput:
        raise ToolFailure(f"the tool '{name}' is not available: {why}")

    return run


def _builtin(tool: BuiltinTool | ReadFileTool, prompt: Prompt, ctx: DriverContext) -> Runner:
    from runtime.builtin_tools import ToolEnv, builtin_runner

    env = ToolEnv(workspace=ctx.workspace, prompt_dir=Path(prompt.prompt_dir or "."),
                  allow_network=ctx.allow_network)
    try:
        return builtin_runner(tool, env)
    except KeyError:
        return _unavailable(tool.name, "this build does not implement it")


def model_name(tool: BuiltinTool | ReadFileTool) -> str:
    return MODEL_NAMES.get(tool.name, tool.name)


def build_runners(prompt: Prompt, ctx: DriverContext, *,
                  agent_runner: Callable[[AgentTool, Prompt, DriverContext], Runner]
                  ) -> ToolRunners:
    """Runners (instrumented) for every tool ``prompt`` declares; agent tools run through
    ``agent_runner`` (:func:`runtime.driver.setup.agent_tool_runner`)."""
    result = ToolRunners()
    mcp_tools: list[McpTool] = []
    shell_tools: list[CustomTool | ShellTool] = []
    for tool in prompt.tools:
        if isinstance(tool, BuiltinTool | ReadFileTool):
            result.runners[model_name(tool)] = _builtin(tool, prompt, ctx)
        elif isinstance(tool, AgentTool):
            result.runners[tool.name] = agent_runner(tool, prompt, ctx)
        elif isinstance(tool, CustomTool | ShellTool):
            shell_tools.append(tool)
        elif isinstance(tool, McpTool):
            mcp_tools.append(tool)
    if shell_tools:
        result.runners.update(shell_runners(shell_tools, prompt, ctx))
    if mcp_tools:
        _open_mcp(mcp_tools, prompt, ctx, result)
    coded = {model_name(tool) for tool in prompt.tools
             if isinstance(tool, BuiltinTool | ReadFileTool)}
    if result.mcp_catalogue is not None:
        coded |= set(result.mcp_catalogue.runners)
    result.runners = {name: instrument(name, runner, ctx, coded_failures=name in coded)
                      for name, runner in result.runners.items()}
    result.host_tools = [attrs.evolve(host, runner=instrument(host.name, host.runner, ctx))
                         for host in result.host_tools]
    return result


def _open_mcp(tools: list[McpTool], prompt: Prompt, ctx: DriverContext,
              result: ToolRunners) -> None:
    """Connect to the MCP servers (a server unreachable now is a positioned diagnostic,
    raised as :class:`~chatcommon.diagnostics.DiagnosticError` before any request)."""
    from chatcommon.diagnostics import DiagnosticError
    from runtime.builtin_tools import ToolEnv
    from runtime.mcp import McpUnavailable, open_mcp_tools

    env = ToolEnv(workspace=ctx.workspace, prompt_dir=Path(prompt.prompt_dir or "."),
                  allow_network=ctx.allow_network)
    try:
        opened = open_mcp_tools(tools, env)
    except McpUnavailable as problem:
        raise DiagnosticError([problem.diagnostic]) from None
    result.closers.append(opened.close)
    result.mcp_catalogue = opened
    result.runners.update(opened.runners)


_FAILURE_CODE = re.compile(r"[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*: ")


def instrument(name: str, runner: Runner, ctx: DriverContext, *,
               coded_failures: bool = False) -> Runner:
    """``runner`` with events, an activity line, and failures turned into tool outputs.

    With ``coded_failures`` (built-in and MCP tools), an output starting with a failure code
    (``read_file.outside_roots: ...``) is reported as an error too.
    """

    def run(payload: str) -> ToolOutput:
        ctx.events.emit("tool_started", name=name, arguments=preview(payload, 200))
        started = time.perf_counter()
        error: str | None = None
        output: ToolOutput
        try:
            output = runner(payload)
        except ToolFailure as failure:
            error = str(failure)
        except Exception as failure:  # a tool's bug is the model's tool output, not a crash
            error = f"{type(failure).__name__}: {failure}"
        if error is not None:
            output = f"error: {error}"
        elif not isinstance(output, str | list):
            error = f"the tool returned {type(output).__name__}, not text"
            output = f"error: {error}"
        elif coded_failures and isinstance(output, str) and _FAILURE_CODE.match(output):
            error = output.splitlines()[0]
        seconds = time.perf_counter() - started
        ctx.events.emit("tool_finished", name=name, ok=error is None,
                        duration_ms=round(seconds * 1000, 3), error=error)
        ctx.display.tool_line(name, payload, seconds, error)
        return output

    return run


def runner_kinds(prompt: Prompt) -> dict[str, str]:
    """Model-visible tool name -> kind (for messages)."""
    kinds: dict[str, str] = {}
    for tool in prompt.tools:
        if isinstance(tool, BuiltinTool | ReadFileTool):
            kinds[model_name(tool)] = "builtin"
        elif isinstance(tool, AgentTool):
            kinds[tool.name] = "agent"
        elif isinstance(tool, CustomTool | ShellTool):
            kinds[tool.name] = "shell"
    return kinds


__all__ = ["ToolRunners", "build_runners", "instrument", "model_name"]
