"""MCP tools against a real server written with the ``mcp`` SDK, over stdio and streamable HTTP."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from chatmd.frontend import load_prompt_text
from chatmd.ir import McpTool
from chatmd.request import compile_request
from chatmd.request_context import ConversionContext
from chatmd.tools.mcp import McpRemoteTool
from runtime.builtin_tools import ToolEnv
from runtime.mcp import CatalogueCache, McpTools, McpUnavailable, open_mcp_tools
from runtime.mcp.connection import McpConnection
from runtime.mcp.loop import LoopThread
from runtime.mcp.servers import parse_server
from runtime.tools import ToolBox
from tests.runtime.tools.support import call, code_of, prompt_tools

SERVER = Path(__file__).with_name("mcp_server.py")
STDIO = "stdio:" + shlex.join([sys.executable, str(SERVER)])


@pytest.fixture()
def env(tmp_path: Path) -> ToolEnv:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return ToolEnv(workspace=workspace, prompt_dir=workspace)


def mcp_nodes(declarations: str, env: ToolEnv) -> list[McpTool]:
    return [tool for tool in prompt_tools(declarations, env.prompt_dir)
            if isinstance(tool, McpTool)]


def open_tools(declarations: str, env: ToolEnv, **options: object) -> McpTools:
    options.setdefault("cache", CatalogueCache())
    return open_mcp_tools(mcp_nodes(declarations, env), env, **options)  # type: ignore[arg-type]


def wait_for_eviction(cache: CatalogueCache, uri: str) -> None:
    """The list_changed notification arrives asynchronously: poll a bounded number of times."""
    assert poll(lambda: cache.get(uri) is None), "not evicted after tools/list_changed"


def poll(condition: Callable[[], bool]) -> bool:
    for _ in range(1000):
        if condition():
            return True
        time.sleep(0.01)
    return False


def test_stdio_server_definitions_calls_and_errors(env: ToolEnv) -> None:
    with open_tools(f'<tool mcp_server="{STDIO}"/>', env) as tools:
        names = [d["name"] for d in tools.definitions]
        assert names[:4] == ["echo", "add", "boom", "picture"]
        echo = tools.definitions[0]
        assert echo["type"] == "function" and echo["strict"] is False
        assert echo["description"] == "Return the text unchanged."
        assert echo["parameters"]["required"] == ["text"]
        assert call(tools.runners["echo"], text="héllo") == "héllo"
        assert call(tools.runners["add"], a=2, b=3) == "5"
        assert call(tools.runners["where"]) == os.path.realpath(env.workspace)
        failed = call(tools.runners["boom"])
        assert code_of(failed) == "mcp.tool_error" and "boom" in str(failed)
        image = call(tools.runners["picture"])
        assert isinstance(image, list) and image[0]["type"] == "input_image"
        assert image[0]["image_url"].startswith("data:image/png;base64,iVBOR")
        assert code_of(tools.runners["echo"]("{oops")) == "tool.invalid_arguments"
        assert code_of(tools.runners["echo"]("[1]")) == "tool.invalid_arguments"
        assert code_of(call(tools.runners["echo"], wrong=1)) == "mcp.tool_error"
        assert tools.diagnostics == []


def test_stdio_server_process_ends_with_close(env: ToolEnv) -> None:
    tools = open_tools(f'<tool mcp_server="{STDIO}" name="where"/>', env)
    server_pids = _children()
    assert server_pids
    tools.close()
    assert not (_children() & server_pids)


def _children() -> set[int]:
    """Live (non-zombie) child processes of this test process."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid() and fields[0] != "Z":
            found.add(int(entry.name))
    return found


def test_selection_and_strict(env: ToolEnv) -> None:
    declarations = (f'<tool mcp_server="{STDIO}" name="echo" strict/>\n'
                    f'<tool mcp_server="{STDIO}" include="add, boom"/>\n'
                    f'<tool mcp_server="{STDIO}" includes="picture,missing"/>')
    with open_tools(declarations, env) as tools:
        assert [d["name"] for d in tools.definitions] == ["echo", "add", "boom", "picture"]
        assert [d["strict"] for d in tools.definitions] == [True, False, False, False]
        (warning,) = tools.diagnostics
        assert warning.code == "mcp.tool_not_found" and "missing" in warning.message
        assert warning.severity == "warning" and warning.line == 3
        assert sorted(tools.runners) == ["add", "boom", "echo", "picture"]


def test_a_stale_cached_catalogue_is_refreshed_once_for_a_missing_tool(env: ToolEnv) -> None:
    cache = CatalogueCache()
    cache.put(STDIO, [McpRemoteTool("echo")])  # stale: lacks `add`
    with open_tools(f'<tool mcp_server="{STDIO}" include="echo,add"/>', env,
                    cache=cache) as tools:
        assert [d["name"] for d in tools.definitions] == ["echo", "add"]
        assert tools.diagnostics == []
        assert call(tools.runners["add"], a=1, b=1) == "2"


def test_list_changed_evicts_the_catalogue(env: ToolEnv) -> None:
    cache = CatalogueCache()
    with open_tools(f'<tool mcp_server="{STDIO}"/>', env, cache=cache) as tools:
        assert cache.get(STDIO) is not None
        assert call(tools.runners["grow"], name="extra") == "grown"
        wait_for_eviction(cache, STDIO)
        assert "extra" in [t.name for t in tools.list_tools(STDIO)]
        assert call(tools.runners["shrink"], name="echo") == "shrunk"
        wait_for_eviction(cache, STDIO)
        gone = call(tools.runners["echo"], text="x")
        assert code_of(gone) == "mcp.tool_not_found" and "echo" in str(gone)


def test_a_slow_call_times_out_as_an_output(env: ToolEnv) -> None:
    with open_tools(f'<tool mcp_server="{STDIO}" name="slow"/>', env, call_timeout=1) as tools:
        assert code_of(call(tools.runners["slow"], seconds=30)) == "mcp.timeout"
        assert call(tools.runners["slow"], seconds=0) == "done"


def test_unreachable_servers_are_positioned_diagnostics(env: ToolEnv, tmp_path: Path) -> None:
    crash = tmp_path / "crash.py"
    crash.write_text("import sys\nsys.stderr.write('missing API token\\n')\nsys.exit(3)\n")
    cases = {
        "stdio:/nonexistent/mcp-server --flag": "mcp.unreachable",
        "stdio:" + shlex.join([sys.executable, str(crash)]): "mcp.unreachable",
        "http://127.0.0.1:9/mcp": "mcp.unreachable",
        "ftp://example.com/x": "mcp.invalid_server",
        "stdio:'unclosed": "mcp.invalid_server",
    }
    for server, code in cases.items():
        declarations = f'<user>x</user>\n\n<tool mcp_server="{server}"/>'
        with pytest.raises(McpUnavailable) as raised:
            open_tools(declarations, env)
        diagnostic = raised.value.diagnostic
        assert diagnostic.code == code, (server, diagnostic.message)
        assert (diagnostic.file, diagnostic.line, diagnostic.column) == ("tools.chatmd", 3, 1)
    with pytest.raises(McpUnavailable) as raised:
        open_tools("<tool mcp_server=\"stdio:" + shlex.join([sys.executable, str(crash)]) + '"/>',
                   env)
    assert "missing API token" in raised.value.diagnostic.message


def test_a_failing_second_server_closes_the_first(env: ToolEnv) -> None:
    before = _children()
    with pytest.raises(McpUnavailable):
        open_tools(f'<tool mcp_server="{STDIO}"/>\n<tool mcp_server="stdio:/nonexistent/x"/>', env)
    assert _children() <= before


@pytest.fixture(scope="module")
def http_server() -> Iterator[str]:
    process = subprocess.Popen([sys.executable, str(SERVER), "http"], stdout=subprocess.PIPE,
                               start_new_session=True, text=True)
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())  # the server prints its port once bound
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)


def test_streamable_http_server(env: ToolEnv, http_server: str) -> None:
    declarations = (f'<tool mcp_server="{http_server}" include="echo,query,picture" '
                    'client_id_env="TEST_MCP_ID" client_secret_env="TEST_MCP_UNSET"/>')
    with open_tools(declarations, env, environ={"TEST_MCP_ID": "abc"}) as tools:
        assert [d["name"] for d in tools.definitions] == ["echo", "query", "picture"]
        assert call(tools.runners["echo"], text="over http") == "over http"
        assert call(tools.runners["query"]) == "client_id=abc"
        assert isinstance(call(tools.runners["picture"]), list)


def test_mcp_tools_serve_as_the_request_catalogue(env: ToolEnv) -> None:
    declarations = f'<tool name="apply_patch"/>\n<tool mcp_server="{STDIO}" include="add,echo"/>'
    prompt = load_prompt_text(declarations + "\n<user>hi</user>\n", name="p.chatmd",
                              prompt_dir=str(env.prompt_dir))
    with open_tools(declarations, env) as tools:
        ctx = ConversionContext(prompt_dir=env.prompt_dir, cwd=env.workspace, mcp_catalogue=tools)
        result = compile_request(prompt, ctx)
        assert result.request is not None
        assert [d["name"] for d in result.request["tools"]] == ["apply_patch", "add", "echo"]
        assert result.request["tools"][1:] == tools.definitions


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_both_protocol_eras_report_list_changed(env: ToolEnv, mode: str) -> None:
    changes: list[str] = []
    loop = LoopThread()
    connection = McpConnection(parse_server(STDIO, env.workspace), loop, call_timeout=60,
                               on_list_changed=lambda: changes.append("changed"), mode=mode)
    try:
        connection.open(60)
        assert connection.call_tool("grow", {"name": f"extra_{mode}"}).is_error is False
        assert poll(lambda: bool(changes))
        assert f"extra_{mode}" in [tool.name for tool in connection.list_tools()]
    finally:
        connection.close()
        loop.stop()


def test_parallel_calls_from_worker_threads(env: ToolEnv) -> None:
    with open_tools(f'<tool mcp_server="{STDIO}" include="echo,add"/>', env) as tools:
        box = ToolBox(tools.definitions, tools.runners)
        try:
            futures = [box.start("echo", f'{{"text": "call {n}"}}') for n in range(16)]
            assert [f.result(timeout=120) for f in futures] == [f"call {n}" for n in range(16)]
        finally:
            box.close()


def test_a_crashed_server_makes_later_calls_fail_as_outputs(env: ToolEnv) -> None:
    tools = open_tools(f'<tool mcp_server="{STDIO}" include="die,echo"/>', env)
    try:
        assert code_of(call(tools.runners["die"])) == "mcp.call_failed"
        assert code_of(call(tools.runners["echo"], text="x")) == "mcp.call_failed"
    finally:
        tools.close()
    assert code_of(call(tools.runners["echo"], text="x")) == "mcp.call_failed"  # closed


def test_a_server_that_never_answers_times_out_at_start(env: ToolEnv, tmp_path: Path) -> None:
    mute = tmp_path / "mute.py"
    mute.write_text("import time\ntime.sleep(120)\n")
    before = _children()
    with pytest.raises(McpUnavailable) as raised:
        open_tools('<tool mcp_server="stdio:' + shlex.join([sys.executable, str(mute)]) + '"/>',
                   env, start_timeout=1)
    assert raised.value.diagnostic.code == "mcp.unreachable"
    assert "no answer within 1 s" in raised.value.diagnostic.message
    assert _children() <= before
