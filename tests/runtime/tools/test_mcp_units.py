"""The MCP catalogue cache, server values and result conversion, without a server."""

from __future__ import annotations

from pathlib import Path

import mcp_types as types
import pytest

from chatmd.tools.mcp import McpRemoteTool
from runtime.mcp.catalogue import MAX_SERVERS, TTL_SECONDS, CatalogueCache
from runtime.mcp.results import tool_output
from runtime.mcp.servers import BadServer, display, parse_server


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_catalogues_expire_after_five_minutes() -> None:
    clock = Clock()
    cache = CatalogueCache(clock=clock)
    cache.put("stdio:a", [McpRemoteTool("x")])
    clock.now += TTL_SECONDS
    assert cache.get("stdio:a") == (McpRemoteTool("x"),)
    clock.now += 1
    assert cache.get("stdio:a") is None
    assert len(cache) == 0


def test_at_most_32_servers_least_recently_used_out() -> None:
    cache = CatalogueCache()
    for n in range(MAX_SERVERS):
        cache.put(f"stdio:s{n}", [])
    assert cache.get("stdio:s0") == ()  # s0 becomes the most recently used
    cache.put("stdio:new", [])
    assert len(cache) == MAX_SERVERS
    assert cache.get("stdio:s1") is None
    assert cache.get("stdio:s0") == () and cache.get("stdio:new") == ()
    cache.evict("stdio:new")
    assert cache.get("stdio:new") is None


def test_server_values(tmp_path: Path) -> None:
    stdio = parse_server("stdio:python3 -m srv --name 'a b'", tmp_path)
    assert not isinstance(stdio, str)
    assert (stdio.command, stdio.args, stdio.cwd) == ("python3", ["-m", "srv", "--name", "a b"],
                                                     str(tmp_path))
    assert parse_server("https://h.test/mcp?x=1", tmp_path) == "https://h.test/mcp?x=1"
    for bad in ("stdio:", "stdio:   ", "ftp://h/x", "h.test/mcp", "http://"):
        with pytest.raises(BadServer):
            parse_server(bad, tmp_path)
    assert display("https://u:p@h.test:8443/mcp?client_secret=s") == "https://h.test:8443/mcp"


def test_results_become_outputs() -> None:
    text = types.TextContent(type="text", text="a")
    assert tool_output(types.CallToolResult(content=[text, text])) == "a\na"
    structured = types.CallToolResult(content=[], structured_content={"n": 1})
    assert tool_output(structured) == '{"n": 1}'
    error = types.CallToolResult(content=[text], is_error=True)
    assert tool_output(error) == "mcp.tool_error: a"
    image = types.ImageContent(type="image", data="AAAA", mime_type="image/png")
    parts = tool_output(types.CallToolResult(content=[text, image]))
    assert parts == [{"type": "input_text", "text": "a"},
                     {"type": "input_image", "image_url": "data:image/png;base64,AAAA",
                      "detail": "auto"}]
    assert tool_output(types.CallToolResult(content=[])) == ""
