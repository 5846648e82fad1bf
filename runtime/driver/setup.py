"""Opening a driver session for a prompt, and the model callables the session calls.

:func:`open_session` builds what :meth:`runtime.session.Session.open` needs from a
:class:`~runtime.driver.context.DriverContext`: the conversion context (documents from
the prompt's folder, remote ones only with ``--allow-network``, inline agents run as nested
agents, the shared agent cache), the tool runners, and the ``--model`` override.
:func:`streaming_model` and :func:`blocking_model` adapt the client to the session's
``model(request) -> output items`` contract, emitting ``request_sent``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import attrs

from chatcommon.diagnostics import DiagnosticError
from chatcommon.records import evolve
from chatmd.frontend import load_prompt_text
from chatmd.ir import AgentTool, Message, Prompt, TextItem
from chatmd.request_context import AgentRunError, ConversionContext, HttpFetcher, NoNetworkFetcher
from runtime.driver.agents import (
    NESTED_SESSION_ID,
    agent_answer,
    agent_source,
    check_stack,
    diagnostic_text,
)
from runtime.driver.context import DriverContext
from runtime.driver.failures import ToolFailure
from runtime.driver.streaming import NullObserver, StreamObserver, blocking_response, iter_response
from runtime.driver.toolset import ToolRunners, build_runners
from runtime.session import Model, ModelRequest, Session
from runtime.store import SessionRecord
from runtime.tools import Runner, ToolOutput


@attrs.define
class OpenedSession:
    session: Session
    tools: ToolRunners

    def close(self) -> None:
        try:
            self.session.close()
        finally:
            self.tools.close()


def conversion_context(prompt: Prompt, ctx: DriverContext, session_id: str | None,
                       tools: ToolRunners | None = None) -> ConversionContext:
    context = ConversionContext(
        prompt_dir=prompt.prompt_dir or ".", cwd=ctx.workspace,
        fetcher=HttpFetcher() if ctx.allow_network else NoNetworkFetcher(),
        agent_runner=InlineAgents(ctx), agent_cache=ctx.agent_cache, session_id=session_id)
    if tools is not None and tools.mcp_catalogue is not None:
        context.mcp_catalogue = tools.mcp_catalogue
    return context


def open_session(prompt: Prompt, ctx: DriverContext, *, session_id: str | None = None,
                 record: SessionRecord | None = None) -> OpenedSession:
    """A session for ``prompt`` with its tools (the caller closes it)."""
    tools = build_runners(prompt, ctx, agent_runner=agent_tool_runner)
    try:
        session = Session.open(prompt, runners=tools.runners, host_tools=tools.host_tools,
                               session_id=session_id,
                               conversion=conversion_context(prompt, ctx, session_id, tools),
                               record=record)
    except BaseException:
        tools.close()
        raise
    if ctx.model is not None:
        session.request_options["model"] = ctx.model
    return OpenedSession(session, tools)


def is_blank_user_message(item: Any) -> bool:
    """An empty ``<user>`` placeholder (whitespace-only text)."""
    if not isinstance(item, Message) or item.role != "user" or item.tool_call is not None:
        return False
    content = item.content
    if content is None:
        return True
    if isinstance(content, str):
        return not content.strip()
    return all(isinstance(part, TextItem) and not part.text.strip() for part in content)


def without_placeholder(prompt: Prompt) -> tuple[Prompt, bool]:
    """``prompt`` without a trailing empty ``<user>`` placeholder; True when one was dropped."""
    if prompt.items and is_blank_user_message(prompt.items[-1]):
        return evolve(prompt, items=prompt.items[:-1]), True
    return prompt, False


def _sent(ctx: DriverContext, count: list[int], body: Mapping[str, Any]) -> None:
    count[0] += 1
    tools: Sequence[Any] = body.get("tools", [])
    ctx.events.emit("request_sent", request=count[0], model=body.get("model"),
                    input_items=len(body.get("input", [])), tools=len(tools),
                    agent_depth=len(ctx.agent_stack))


def streaming_model(ctx: DriverContext, observer: StreamObserver) -> Model:
    count = [0]

    def model(request: ModelRequest) -> Iterator[dict[str, Any]]:
        _sent(ctx, count, request.body)
        return iter_response(ctx.client, request.body, ctx.client_settings, observer)

    return model


def blocking_model(ctx: DriverContext) -> Model:
    count = [0]

    def model(request: ModelRequest) -> list[dict[str, Any]]:
        _sent(ctx, count, request.body)
        return blocking_response(ctx.client, request.body, ctx.client_settings)

    return model


def run_nested_agent(ctx: DriverContext, prompt_text: str, *, name: str, prompt_dir: str,
                     identity: str, input_parts: Sequence[Mapping[str, Any]],
                     session_id: str | None = None) -> str:
    """Run the agent prompt and return its answer (see the module docstring)."""
    check_stack(ctx, identity)
    child = ctx.nested(identity)
    try:
        prompt = load_prompt_text(prompt_text, name=name, prompt_dir=prompt_dir)
    except DiagnosticError as error:
        raise AgentRunError(f"the agent prompt {name} has errors: "
                            f"{diagnostic_text(error)}") from None
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
        return agent_answer(session.history[start:])
    finally:
        opened.close()


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
        text, folder, identity = agent_source(tool, prompt, ctx)
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
                              f"{diagnostic_text(problem)}") from None

    return run

__all__ = ["OpenedSession", "blocking_model", "open_session", "streaming_model",
           "without_placeholder"]
