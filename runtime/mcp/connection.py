"""One live MCP client session, owned by a task on the :class:`~runtime.mcp.loop.LoopThread`.

:meth:`McpConnection.open` starts the owner task, which enters the SDK's
``Client`` (stdio or streamable HTTP, protocol negotiated by the SDK) and
keeps it open until :meth:`close`. Requests (``tools/list``, ``tools/call``)
are separate tasks on the same loop. Tool-list changes are watched in both
protocol eras: a ``notifications/tools/list_changed`` message (2025 servers)
or a ``subscriptions/listen`` stream (2026-07-28 servers); either calls
``on_list_changed``. The server's standard error goes to an anonymous
temporary file whose tail explains a failed start.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import tempfile
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
from mcp import Client
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from chatmd.tools.mcp import McpRemoteTool
from runtime.mcp.loop import LoopThread
from runtime.mcp.servers import Target

# The SDK logs transport noise (unparseable lines, dropped streams) on "mcp.*"; without a
# handler Python would print it to standard error. Hosts that configure logging still see it.
logging.getLogger("mcp").addHandler(logging.NullHandler())

_STDERR_TAIL = 2000
_LIST_PAGES = 100


def root_cause(error: BaseException) -> BaseException:
    """The first leaf of nested exception groups (what actually went wrong)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def describe(error: BaseException) -> str:
    cause = root_cause(error)
    text = str(cause).strip()
    return f"{type(cause).__name__}: {text}" if text else type(cause).__name__


class McpConnection:
    """A client session to one server; every blocking method takes a deadline."""

    def __init__(self, target: Target, loop: LoopThread, *, call_timeout: float,
                 on_list_changed: Callable[[], None], mode: str = "auto") -> None:
        self.target = target
        self.mode = mode  # the SDK's protocol negotiation: "auto" or "legacy" (2025 handshake)
        self.loop = loop
        self.call_timeout = call_timeout
        self.on_list_changed = on_list_changed
        self.failure: BaseException | None = None
        self._client: Client | None = None
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._stderr = tempfile.TemporaryFile(  # noqa: SIM115 (closed by close())
            mode="w+", encoding="utf-8", errors="replace")

    # ------------------------------------------------------------------ lifecycle

    def open(self, timeout: float) -> None:
        """Connect and negotiate; raises (after cleaning up) when that fails or times out."""
        try:
            self.loop.run(self._open(), timeout)
        except BaseException:
            self._end_session()  # the standard error stays readable until close()
            raise

    async def _open(self) -> None:
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._stop = asyncio.Event()
        self._task = asyncio.ensure_future(self._own(ready))
        await ready

    async def _own(self, ready: asyncio.Future[None]) -> None:
        try:
            async with self._client_for_target() as client, anyio.create_task_group() as group:
                self._client = client
                if self._modern_list_changed(client):
                    group.start_soon(self._listen, client)
                ready.set_result(None)
                assert self._stop is not None
                await self._stop.wait()
                group.cancel_scope.cancel()
        except BaseException as error:  # reported to open() or to the next call
            self.failure = error
            if not ready.done():
                ready.set_exception(error if isinstance(error, Exception) else
                                    RuntimeError(describe(error)))
            if isinstance(error, asyncio.CancelledError):
                raise
        finally:
            self._client = None

    def _client_for_target(self) -> Client:
        options: dict[str, Any] = {"cache": None, "message_handler": self._on_message,
                                   "read_timeout_seconds": self.call_timeout, "mode": self.mode}
        if isinstance(self.target, str):
            return Client(self.target, **options)
        from mcp.client.stdio import stdio_client

        return Client(stdio_client(self.target, errlog=self._stderr), **options)

    @staticmethod
    def _modern_list_changed(client: Client) -> bool:
        tools = client.server_capabilities.tools
        return (client.protocol_version in MODERN_PROTOCOL_VERSIONS and tools is not None
                and bool(tools.list_changed))

    async def _listen(self, client: Client) -> None:
        with contextlib.suppress(Exception):
            async with client.listen(tools_list_changed=True) as subscription:
                async for _event in subscription:
                    self.on_list_changed()

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.on_list_changed()
        await anyio.lowlevel.checkpoint()

    def close(self) -> None:
        """End the session (the SDK stops a stdio server, killing its process group)."""
        self._end_session()
        self._stderr.close()

    def _end_session(self, timeout: float = 15.0) -> None:
        if self._task is not None and not self.loop.loop.is_closed():
            with contextlib.suppress(Exception):
                self.loop.run(self._close(), timeout)
        self._task = None

    async def _close(self) -> None:
        if self._stop is not None:
            self._stop.set()
        task = self._task
        if task is not None:
            if self._client is None:  # still connecting (a start that timed out): give up
                task.cancel()
            with contextlib.suppress(BaseException):
                await task

    def stderr_tail(self) -> str:
        """The last lines the server wrote to standard error (stdio servers)."""
        with contextlib.suppress(ValueError, OSError):
            self._stderr.flush()
            size = self._stderr.seek(0, 2)
            self._stderr.seek(max(0, size - _STDERR_TAIL))
            return self._stderr.read().strip()
        return ""

    # ------------------------------------------------------------------ requests

    def _live(self) -> Client:
        client = self._client
        if client is None:
            reason = describe(self.failure) if self.failure else "the session is closed"
            raise ConnectionError(f"the connection to the server was lost ({reason})")
        return client

    def list_tools(self) -> list[McpRemoteTool]:
        client = self._live()
        return self.loop.run(self._list_tools(client), self.call_timeout)

    @staticmethod
    async def _list_tools(client: Client) -> list[McpRemoteTool]:
        tools: list[McpRemoteTool] = []
        cursor: str | None = None
        for _ in range(_LIST_PAGES):
            page = await client.list_tools(cursor=cursor, cache_mode="bypass")
            tools += [McpRemoteTool(tool.name, tool.description, dict(tool.input_schema))
                      for tool in page.tools]
            cursor = page.next_cursor
            if cursor is None:
                break
        return tools

    def call_tool(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        client = self._live()
        return self.loop.run(client.call_tool(name, arguments), self.call_timeout + 5.0)

