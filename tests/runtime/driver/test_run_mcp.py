"""``chatmdc run`` with MCP tools: a real server written with the ``mcp`` SDK (stdio, HTTP)."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.runtime.driver import loopback as lb
from tests.runtime.driver.support import parses, run_inprocess, write

SERVER = Path(__file__).resolve().parents[1] / "tools" / "mcp_server.py"
STDIO = "stdio:" + shlex.join([sys.executable, str(SERVER)])
Capsys = pytest.CaptureFixture[str]


def run(capsys: Capsys, server: lb.LoopbackServer, *args: str):  # type: ignore[no-untyped-def]
    return run_inprocess(capsys, ["run", *args, "--base-url", server.base_url])


def outputs_of(request: dict[str, object]) -> dict[str, object]:
    return {item["call_id"]: item["output"] for item in request["input"]  # type: ignore[index,union-attr]
            if item.get("type") == "function_call_output"}  # type: ignore[union-attr]


def mcp_prompt(folder: Path, server: str) -> Path:
    return write(folder / "p.chatmd", f'<config model="m"/>\n<tool mcp_server="{server}" '
                 'include="echo,add,boom"/>\n<user>Use the tools</user>\n')


def calls() -> list[lb.Reply]:
    return [lb.calls(lb.call_item("add", '{"a": 2, "b": 40}', "c1"),
                     lb.call_item("echo", '{"text": "over mcp"}', "c2"),
                     lb.call_item("boom", "{}", "c3")),
            lb.text("2 + 40 = 42")]


def check_run(tmp_path: Path, capsys: Capsys, server_uri: str) -> None:
    prompt = mcp_prompt(tmp_path, server_uri)
    with lb.LoopbackServer(calls()) as server:
        ran = run(capsys, server, str(prompt))
    assert ran.code == 0, ran.err
    tools = server.requests[0]["tools"]
    assert [tool["name"] for tool in tools] == ["echo", "add", "boom"]
    outputs = outputs_of(server.requests[1])
    assert outputs["c1"] == "42" and outputs["c2"] == "over mcp"
    assert "mcp.tool_error" in str(outputs["c3"])
    assert "tool boom" in ran.err and "error" in ran.err.split("tool boom", 1)[1]
    parses(prompt)


def test_mcp_over_stdio(tmp_path: Path, capsys: Capsys) -> None:
    check_run(tmp_path, capsys, STDIO)


@pytest.fixture()
def http_server() -> Iterator[str]:
    process = subprocess.Popen([sys.executable, str(SERVER), "http"], stdout=subprocess.PIPE,
                               start_new_session=True, text=True)
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)


def test_mcp_over_streamable_http(tmp_path: Path, capsys: Capsys, http_server: str) -> None:
    check_run(tmp_path, capsys, http_server)


def test_unreachable_mcp_server_is_a_diagnostic_before_any_request(tmp_path: Path,
                                                                   capsys: Capsys) -> None:
    prompt = mcp_prompt(tmp_path, "stdio:/nonexistent/mcp-server")
    with lb.LoopbackServer([lb.text("never")]) as server:
        ran = run(capsys, server, str(prompt))
    assert ran.code == 1 and server.requests == []
    assert "mcp.unreachable" in ran.err and "p.chatmd:2:1" in ran.err
