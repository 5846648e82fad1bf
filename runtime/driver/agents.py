"""Nested agents (spec 8.10): agent tools and inline ``<agent src>`` elements.

:func:`run_nested_agent` parses the agent prompt, opens a session for it with the
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

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from chatcommon.diagnostics import DiagnosticError
from chatmd.frontend import load_prompt_text
from chatmd.ir import AgentTool, Prompt
from chatmd.request_context import AgentRunError, FetchError, HttpFetcher
from runtime.driver.context import MAX_AGENT_DEPTH, DriverContext
from runtime.driver.failures import ToolFailure
from runtime.driver.streaming import NullObserver
from runtime.tools import Runner, ToolOutput

NESTED_SESSION_ID = "nested-agent"


def _chain(stack: Sequence[str], identity: str) -> str:
    return " -> ".join([*stack, identity])


def check_stack(ctx: DriverContext, identity: str) -> None:
    if identity in ctx.agent_stack:
        raise AgentRunError(f"agent cycle: {_chain(ctx.agent_stack, identity)}")
    if len(ctx.agent_stack) >= MAX_AGENT_DEPTH:
        raise AgentRunError(f"agents nested more than {MAX_AGENT_DEPTH} deep: "
                            f"{_chain(ctx.agent_stack, identity)}")


def _diagnostic_text(error: DiagnosticError) -> str:
    first = error.first
    return f"{first.file}:{first.line}:{first.column}: {first.message} [{first.code}]"


def run_nested_agent(ctx: DriverContext, prompt_text: str, *, name: str, prompt_dir: str,
                     identity: str, input_parts: Sequence[Mapping[str, Any]],
                     session_id: str | None = None) -> str:
    """Run the agent prompt and return its answer (see the module docstring)."""
    from runtime.driver.setup import blocking_model, open_session, streaming_model

    check_stack(ctx, identity)
    child = ctx.nested(identity)
    try:
        prompt = load_prompt_text(prompt_text, name=name, prompt_dir=prompt_dir)
    except DiagnosticError as error:
        raise AgentRunError(f"the agent prompt {name} has errors: "
                            f"{_diagnostic_text(error)}") from None
    sid = prompt.config.id or session_id or NESTED_SESSION_ID
    opened = open_session(prompt, child, session_id=sid)
    try:
        session = opened.session
        start = len(session.history)
        session.add_user_message(list(input_parts))
        model = (streaming_model(child, NullObserver()) if session.manager is not None
                 else blocking_model(child))
        result = session.run(model, max_requests=child.agent_turn_limit)
        last = result.turns[-1].decision if result.turns else None
        if last is not None and last.continue_.name != "STOP" and not session.ended:
            raise AgentRunError(f"the agent {name} did not finish within "
                                f"{child.agent_turn_limit} model requests")
        return _answer(session.history[start:])
    finally:
        opened.close()


def _answer(entries: Sequence[Any]) -> str:
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


class InlineAgents:
    """The :class:`chatmd.request_context.AgentRunner` for ``<agent src>`` elements."""

    def __init__(self, ctx: DriverContext) -> None:
        self.ctx = ctx

    def run_agent(self, prompt_text: str, input_parts: Sequence[Mapping[str, Any]],
                  prompt_dir: str, session_id: str | None) -> str:
        digest = hashlib.sha256(f"{prompt_dir}\0{prompt_text}".encode()).hexdigest()[:12]
        return run_nested_agent(self.ctx, prompt_text, name="<agent>", prompt_dir=prompt_dir,
                                identity=f"inline:{digest}", input_parts=input_parts,
                                session_id=session_id)


def _agent_source(tool: AgentTool, prompt: Prompt, ctx: DriverContext) -> tuple[str, str, str]:
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


def agent_tool_runner(tool: AgentTool, prompt: Prompt, ctx: DriverContext) -> Runner:
    """Runs the agent with the call's ``input`` as its user message; returns its answer."""

    def run(payload: str) -> ToolOutput:
        try:
            arguments = json.loads(payload)
        except ValueError as problem:
            raise ToolFailure(f"the arguments are not JSON ({problem}): expected "
                              '{"input": "..."}') from None
        if not isinstance(arguments, dict) or not isinstance(arguments.get("input"), str):
            raise ToolFailure('expected the arguments {"input": "<text for the agent>"}')
        text, folder, identity = _agent_source(tool, prompt, ctx)
        try:
            return run_nested_agent(ctx, text, name=tool.agent, prompt_dir=folder,
                                    identity=identity,
                                    input_parts=[{"type": "input_text",
                                                  "text": arguments["input"]}],
                                    session_id=tool.agent)
        except AgentRunError as problem:
            raise ToolFailure(str(problem)) from None
        except DiagnosticError as problem:
            raise ToolFailure(f"the agent {tool.agent} failed: "
                              f"{_diagnostic_text(problem)}") from None

    return run


__all__ = ["InlineAgents", "agent_tool_runner", "check_stack", "run_nested_agent"]
