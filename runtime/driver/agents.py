"""Nested agents (spec 8.10): what does not open sessions -- the depth and cycle checks,
the agent prompt's source, the answer taken from its history.

:func:`runtime.driver.setup.run_nested_agent` (which opens the nested session) parses the agent prompt, opens a session for it with the
parent's driver settings (same client, model override, workspace, network flag, agent
cache), appends one user message built from the input parts, and runs it: the
non-streamed loop when it declares no moderator, the streamed (quiet) loop when it does.
It returns the text of the assistant messages it generated (parts joined by a space,
messages by a newline). At most :data:`~runtime.driver.context.MAX_AGENT_DEPTH` agents
may be nested, and an agent already running further up the stack is a cycle: both are
:class:`AgentRunError` naming the chain. A failing agent tool call is a tool output the
model reads; a failing inline agent is a ``chatmd.agent_failed`` diagnostic (exit 1).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from chatcommon.diagnostics import DiagnosticError
from chatmd.ir import AgentTool, Prompt
from chatmd.request_context import AgentRunError, FetchError, HttpFetcher
from runtime.driver.context import MAX_AGENT_DEPTH, DriverContext
from runtime.driver.failures import ToolFailure

NESTED_SESSION_ID = "nested-agent"


def _chain(stack: Sequence[str], identity: str) -> str:
    return " -> ".join([*stack, identity])


def check_stack(ctx: DriverContext, identity: str) -> None:
    if identity in ctx.agent_stack:
        raise AgentRunError(f"agent cycle: {_chain(ctx.agent_stack, identity)}")
    if len(ctx.agent_stack) >= MAX_AGENT_DEPTH:
        raise AgentRunError(f"agents nested more than {MAX_AGENT_DEPTH} deep: "
                            f"{_chain(ctx.agent_stack, identity)}")


def diagnostic_text(error: DiagnosticError) -> str:
    first = error.first
    return f"{first.file}:{first.line}:{first.column}: {first.message} [{first.code}]"


def agent_answer(entries: Sequence[Any]) -> str:
    texts = []
    for entry in entries:
        item = entry.item
        if item.get("type", "message") == "message" and item.get("role") == "assistant":
            content = item.get("content")
            if isinstance(content, str):
                texts.append(content)
            elif isinstance(content, list):
                texts.append(" ".join(str(part.get("text", "")) for part in content
                                      if isinstance(part, Mapping)))
    return "\n".join(texts)


def agent_source(tool: AgentTool, prompt: Prompt, ctx: DriverContext) -> tuple[str, str, str]:
    """The agent prompt's text, its folder and its identity (resolved path or URL)."""
    source = tool.agent
    if source.lower().startswith(("http://", "https://")) and not tool.local:
        if not ctx.allow_network:
            raise ToolFailure(f"the agent prompt {source} is remote and network access is off "
                              "(run with --allow-network)")
        try:
            return HttpFetcher().fetch(source).decode("utf-8", "replace"), \
                prompt.prompt_dir or ".", source
        except FetchError as problem:
            raise ToolFailure(str(problem)) from None
    base = tool.provenance.source_dir if tool.provenance is not None and \
        getattr(tool.provenance, "source_dir", None) else prompt.prompt_dir or "."
    path = Path(base, source)
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as problem:
        raise ToolFailure(f"the agent prompt {source} cannot be read: {problem}") from None
    resolved = os.path.realpath(path)
    return text, os.path.dirname(resolved), resolved


__all__ = ["NESTED_SESSION_ID", "agent_answer", "agent_source", "check_stack", "diagnostic_text"]
