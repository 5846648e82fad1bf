"""Opening a driver session for a prompt, and the model callables the session calls.

:func:`open_session` builds what :meth:`runtime.session.Session.open` needs from a
:class:`~runtime.driver.context.DriverContext`: the conversion context (documents from
the prompt's folder, remote ones only with ``--allow-network``, inline agents run as nested
agents, the shared agent cache), the tool runners, and the ``--model`` override.
:func:`streaming_model` and :func:`blocking_model` adapt the client to the session's
``model(request) -> output items`` contract, emitting ``request_sent``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import attrs

from chatmd.ir import Message, Prompt, TextItem
from chatmd.request_context import ConversionContext, HttpFetcher, NoNetworkFetcher
from runtime.driver.context import DriverContext
from runtime.driver.streaming import StreamObserver, blocking_response, iter_response
from runtime.driver.toolset import ToolRunners, build_runners
from runtime.session import Model, ModelRequest, Session
from runtime.store import SessionRecord


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
    from runtime.driver.agents import InlineAgents

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
    tools = build_runners(prompt, ctx)
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
        return attrs.evolve(prompt, items=prompt.items[:-1]), True  # type: ignore[misc]
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


__all__ = ["OpenedSession", "blocking_model", "open_session", "streaming_model",
           "without_placeholder"]
