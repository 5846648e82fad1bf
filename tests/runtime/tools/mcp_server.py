"""A small MCP server for the tests, written with the official ``mcp`` SDK (``MCPServer``).

Run ``python mcp_server.py`` for stdio, or ``python mcp_server.py http`` for
streamable HTTP on 127.0.0.1: it binds an ephemeral port, prints it on the
first line of standard output, and serves until killed.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import socket
import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.utilities.types import Image

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg==")

server = MCPServer("chatmd-test")


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def boom() -> str:
    """Always fails."""
    raise ValueError("kaboom")


@server.tool()
def picture() -> Image:
    """A one-pixel PNG."""
    return Image(data=PNG, format="png")


@server.tool()
def where() -> str:
    """The server's working directory."""
    return os.getcwd()


@server.tool()
def query(ctx: Context) -> str:
    """The query string of the HTTP request (empty over stdio)."""
    url = getattr(ctx.request_context.request, "url", None)
    return str(url.query) if url is not None else ""


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep, then answer."""
    await asyncio.sleep(seconds)
    return "done"


async def _changed(ctx: Context) -> None:
    await ctx.notify_tools_changed()  # 2026-07-28 clients (subscriptions/listen)
    with contextlib.suppress(Exception):  # 2025 clients (a plain notification)
        await ctx.request_context.session.send_tool_list_changed()


@server.tool()
async def grow(name: str, ctx: Context) -> str:
    """Add a tool called `name` and announce the change."""
    server.add_tool(lambda: f"I am {name}", name=name, description="added at run time")
    await _changed(ctx)
    return "grown"


@server.tool()
async def shrink(name: str, ctx: Context) -> str:
    """Remove the tool `name` and announce the change."""
    server.remove_tool(name)
    await _changed(ctx)
    return "shrunk"


@server.tool()
def die() -> str:
    """End the server process at once (a crash)."""
    os._exit(1)


def serve_http() -> None:
    import uvicorn

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    print(listener.getsockname()[1], flush=True)
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning")
    asyncio.run(uvicorn.Server(config).serve(sockets=[listener]))


if __name__ == "__main__":
    if sys.argv[1:] == ["http"]:
        serve_http()
    else:
        server.run()
