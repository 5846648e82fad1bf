"""Request conversion with a real context: files, images, agents, HTTP (spec §4.5-4.7, §7).

The conversion rules themselves are covered by the data-driven cases
(``test_request_testdata.py``); these tests vary the context: where local
files are found, data URIs, the agent runner and its cache, and remote
documents fetched from a loopback HTTP server started here.
"""

from __future__ import annotations

import base64
import gzip
import threading
from collections.abc import Iterator, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from chatcommon.diagnostics import Diagnostic, DiagnosticError, Severity
from chatmd.frontend import load_prompt_text
from chatmd.ir import Message, Prompt
from chatmd.request import build_request, compile_request, to_items
from chatmd.request_context import (
    AgentCache,
    AgentRunError,
    CallbackAgentRunner,
    ConversionContext,
    FetchError,
    HttpFetcher,
)

PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")


def convert(text: str, ctx: ConversionContext) -> list[dict[str, Any]]:
    return to_items(load_prompt_text(text, prompt_dir=str(ctx.prompt_dir)), ctx)


def errors_of(text: str, ctx: ConversionContext) -> list[Diagnostic]:
    with pytest.raises(DiagnosticError) as caught:
        convert(text, ctx)
    return caught.value.diagnostics


def first_text(items: list[dict[str, Any]]) -> str:
    return items[0]["content"][0]["text"]


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    prompt_dir, cwd = tmp_path / "prompt", tmp_path / "cwd"
    prompt_dir.mkdir()
    cwd.mkdir()
    return prompt_dir, cwd


# --- local documents ---------------------------------------------------------------------------


def test_prompt_dir_wins_over_cwd_and_absolute_paths_work(folders: tuple[Path, Path]) -> None:
    prompt_dir, cwd = folders
    (prompt_dir / "a.txt").write_text("from prompt dir", encoding="utf-8")
    (cwd / "a.txt").write_text("from cwd", encoding="utf-8")
    (cwd / "b.txt").write_text("b from cwd", encoding="utf-8")
    elsewhere = prompt_dir.parent / "elsewhere.txt"
    elsewhere.write_text("absolute", encoding="utf-8")
    ctx = ConversionContext(prompt_dir=prompt_dir, cwd=cwd)
    items = convert(f'<user><doc src="a.txt" local/></user><user><doc src="b.txt" local/></user>'
                    f'<user><doc src="{elsewhere}" local/></user>', ctx)
    assert [first_text([i]) for i in items] == ["from prompt dir", "b from cwd", "absolute"]


def test_documents_keep_crlf_and_lose_one_bom(folders: tuple[Path, Path]) -> None:
    prompt_dir, cwd = folders
    (prompt_dir / "c.txt").write_bytes("\ufeffa\r\nb".encode())
    items = convert('<user><doc src="c.txt" local/></user>',
                    ConversionContext(prompt_dir=prompt_dir, cwd=cwd))
    assert first_text(items) == "a\r\nb"


def test_a_folder_is_not_a_document(folders: tuple[Path, Path]) -> None:
    prompt_dir, cwd = folders
    (prompt_dir / "dir").mkdir()
    [problem] = errors_of('<user><doc src="dir" local/></user>',
                          ConversionContext(prompt_dir=prompt_dir, cwd=cwd))
    assert problem.code == "chatmd.doc_unresolved" and (problem.line, problem.column) == (1, 7)


# --- images ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "mime"), [("pic.PNG", "image/png"), ("pic.xyz", "image/jpeg"),
                                            ("p.jpeg", "image/jpeg"), ("a.svg", "image/svg+xml"),
                                            ("w.webp", "image/webp"), ("noext", "image/jpeg")])
def test_local_images_become_data_uris(folders: tuple[Path, Path], name: str, mime: str) -> None:
    prompt_dir, cwd = folders
    (prompt_dir / name).write_bytes(PNG)
    items = convert(f'<user><img src="{name}" local/></user>',
                    ConversionContext(prompt_dir=prompt_dir, cwd=cwd))
    part = items[0]["content"][0]
    assert part == {"type": "input_image", "detail": "auto",
                    "image_url": f"data:{mime};base64," + base64.b64encode(PNG).decode()}


def test_images_have_no_cwd_fallback_and_remote_urls_pass_through(
        folders: tuple[Path, Path]) -> None:
    prompt_dir, cwd = folders
    (cwd / "only_cwd.png").write_bytes(PNG)
    ctx = ConversionContext(prompt_dir=prompt_dir, cwd=cwd)
    [problem] = errors_of('<user>\n<img src="only_cwd.png" local/></user>', ctx)
    assert (problem.code, problem.line, problem.column) == ("chatmd.image_unresolved", 2, 1)
    items = convert('<tool_response tool_call_id="c"><img src="https://h/i.png"/></tool_response>',
                    ctx)
    assert items[0]["output"][0]["image_url"] == "https://h/i.png"


def test_image_string_rendering_in_assistant_text_is_not_fetched(
        folders: tuple[Path, Path]) -> None:
    prompt_dir, cwd = folders
    items = convert('<assistant>x<img src="missing.png" local/></assistant>',
                    ConversionContext(prompt_dir=prompt_dir, cwd=cwd))
    assert first_text(items) == 'x\n<img src="missing.png" local="true"/>'


# --- agents ------------------------------------------------------------------------------------


class RecordingRunner:
    def __init__(self, answer: str = "summary") -> None:
        self.calls: list[tuple[str, list[Mapping[str, Any]], str, str | None]] = []
        self.answer = answer

    def run_agent(self, prompt_text: str, input_parts: Sequence[Mapping[str, Any]],
                  prompt_dir: str, session_id: str | None) -> str:
        self.calls.append((prompt_text, list(input_parts), prompt_dir, session_id))
        return self.answer


def test_identical_agents_run_once_in_the_agent_folder(folders: tuple[Path, Path]) -> None:  # 67
    prompt_dir, cwd = folders
    (prompt_dir / "agents").mkdir()
    (prompt_dir / "agents" / "a.chatmd").write_text("<system>summarise</system>", encoding="utf-8")
    runner = RecordingRunner()
    ctx = ConversionContext(prompt_dir=prompt_dir, cwd=cwd, agent_runner=runner, session_id="s")
    items = convert('<user><agent src="agents/a.chatmd" local>hi</agent>'
                    '<agent src="agents/a.chatmd" local>hi</agent></user>'
                    '<tool_response tool_call_id="c"><agent src="agents/a.chatmd" local>hi</agent>'
                    '</tool_response>', ctx)
    assert items[0]["content"] == [{"type": "input_text", "text": "summary"}] * 2
    assert items[1]["output"] == [{"type": "input_text", "text": "summary"}]
    assert runner.calls == [("<system>summarise</system>", [{"type": "input_text", "text": "hi"}],
                             str((prompt_dir / "agents").resolve()), "s")]


def test_agent_children_are_resolved_in_the_parent_prompt(folders: tuple[Path, Path]) -> None:
    prompt_dir, cwd = folders
    (prompt_dir / "a.chatmd").write_text("<system>x</system>", encoding="utf-8")
    (prompt_dir / "doc.txt").write_text("the document", encoding="utf-8")
    runner = RecordingRunner()
    ctx = ConversionContext(prompt_dir=prompt_dir, cwd=cwd, agent_runner=runner)
    convert('<user><agent src="a.chatmd" local>\n<doc src="doc.txt" local/></agent></user>', ctx)
    [(_, parts, _, _)] = runner.calls
    assert parts == [{"type": "input_text", "text": "\n"},
                     {"type": "input_text", "text": "the document"}]
    convert('<user><agent src="a.chatmd" local>other input</agent></user>', ctx)
    assert len(runner.calls) == 2  # a different input is a different cache key


def test_agent_cache_entries_expire_after_the_ttl() -> None:
    now = [0.0]
    cache = AgentCache(ttl_seconds=10, clock=lambda: now[0])
    cache.put(("a", True, "[]"), "r")
    now[0] = 10.0
    assert cache.get(("a", True, "[]")) == "r"
    now[0] = 10.5
    assert cache.get(("a", True, "[]")) is None


def test_agent_failures_are_positioned_diagnostics(folders: tuple[Path, Path]) -> None:
    prompt_dir, cwd = folders
    (prompt_dir / "a.chatmd").write_text("<system>x</system>", encoding="utf-8")

    def fail(text: str, parts: Sequence[Mapping[str, Any]], folder: str, session: str | None) -> str:
        raise AgentRunError("model unreachable")

    ctx = ConversionContext(prompt_dir=prompt_dir, cwd=cwd, agent_runner=CallbackAgentRunner(fail))
    problems = errors_of('<user>\n x <agent src="a.chatmd" local>q</agent>'
                         '<agent src="gone.chatmd" local>q</agent></user>', ctx)
    assert [(d.code, d.line, d.column) for d in problems] == [
        ("chatmd.agent_failed", 2, 4), ("chatmd.agent_failed", 2, 41)]
    assert "model unreachable" in problems[0].message
    assert "gone.chatmd" in problems[1].message


def test_nested_prompt_errors_are_attached_as_related_notes(folders: tuple[Path, Path]) -> None:
    prompt_dir, cwd = folders
    (prompt_dir / "a.chatmd").write_text("<user>", encoding="utf-8")

    def nested(text: str, parts: Sequence[Mapping[str, Any]], folder: str, session: str | None) -> str:
        load_prompt_text(text, name="a.chatmd", prompt_dir=folder)
        return "unreachable"

    ctx = ConversionContext(prompt_dir=prompt_dir, cwd=cwd,
                            agent_runner=CallbackAgentRunner(nested))
    [problem] = errors_of('<user><agent src="a.chatmd" local>q</agent></user>', ctx)
    assert problem.code == "chatmd.agent_failed"
    assert [(r.file, r.line) for r in problem.related] == [("a.chatmd", 1)]


# --- remote documents over loopback HTTP -------------------------------------------------------

PAGES: dict[str, tuple[int, dict[str, str], bytes]] = {
    "/plain.txt": (200, {"Content-Type": "text/plain"}, b"remote text"),
    "/page.html": (200, {"Content-Type": "text/html"},
                   b"<h2>Head</h2><p>para <i>it</i></p><script>x()</script>"),
    "/page.html.gz": (200, {"Content-Type": "application/gzip"},
                      gzip.compress(b"<p>zipped <b>html</b></p>")),
    "/agent.chatmd": (200, {}, b"<system>remote agent</system>"),
    "/to-file": (302, {"Location": "file:///etc/passwd"}, b""),
    "/to-plain": (302, {"Location": "/plain.txt"}, b""),
}


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        status, headers, body = PAGES.get(self.path, (404, {}, b"not found"))
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_remote_documents_plain_stripped_and_markdown(folders: tuple[Path, Path],
                                                     server: str) -> None:
    prompt_dir, cwd = folders
    ctx = ConversionContext(prompt_dir=prompt_dir, cwd=cwd, fetcher=HttpFetcher(timeout=5))
    items = convert(f'<user><doc src="{server}/plain.txt"/></user>'
                    f'<user><doc src="{server}/page.html" strip/></user>'
                    f'<user><doc src="{server}/page.html" markdown/></user>'
                    f'<user><doc src="{server}/page.html.gz" strip/></user>', ctx)
    assert [first_text([i]) for i in items] == [
        "remote text", "Head\npara\nit", "## Head\n\npara *it*", "zipped\nhtml"]


def test_remote_failures_and_disabled_network(folders: tuple[Path, Path], server: str) -> None:
    prompt_dir, cwd = folders
    online = ConversionContext(prompt_dir=prompt_dir, cwd=cwd, fetcher=HttpFetcher(timeout=5))
    [missing] = errors_of(f'<user><doc src="{server}/nope"/></user>', online)
    assert missing.code == "chatmd.doc_unresolved" and "404" in missing.message
    [scheme] = errors_of('<user><doc src="file:///etc/passwd"/></user>', online)
    assert scheme.code == "chatmd.doc_unresolved" and "http" in scheme.message
    offline = ConversionContext.local(prompt_dir)
    [disabled] = errors_of(f'<user><doc src="{server}/plain.txt"/></user>', offline)
    assert "network access is disabled" in disabled.message


def test_remote_agent_prompts_come_through_the_fetcher(folders: tuple[Path, Path],
                                                       server: str) -> None:
    prompt_dir, cwd = folders
    runner = RecordingRunner("remote answer")
    ctx = ConversionContext(prompt_dir=prompt_dir, cwd=cwd, fetcher=HttpFetcher(timeout=5),
                            agent_runner=runner)
    items = convert(f'<user><agent src="{server}/agent.chatmd">go</agent></user>', ctx)
    assert first_text(items) == "remote answer"
    assert runner.calls[0][0] == "<system>remote agent</system>"


# --- the request -------------------------------------------------------------------------------


def test_build_request_raises_with_every_error_and_compile_keeps_warnings(
        folders: tuple[Path, Path]) -> None:
    prompt_dir, cwd = folders
    ctx = ConversionContext(prompt_dir=prompt_dir, cwd=cwd)
    # loaded without the prompt checks (which already reject the unknown built-in)
    # so that request building is seen to report every error on its own
    prompt = load_prompt_text('<config reasoning_effort="max"/><tool name="nope"/>'
                              '<msg role="x">a</msg><tool mcp_server="stdio:s"/>', checks=())
    with pytest.raises(DiagnosticError) as caught:
        build_request(prompt, ctx)
    assert sorted(d.code for d in caught.value.diagnostics) == [
        "agent.unknown_builtin", "chatmd.invalid_reasoning_effort", "chatmd.mcp_unresolved",
        "chatmd.unknown_role"]
    clean = load_prompt_text('<tool mcp_server="stdio:s"/><user>a</user>')
    result = compile_request(clean, ctx)
    assert result.ok and result.request is not None
    assert [(d.code, d.severity) for d in result.diagnostics] == [
        ("chatmd.mcp_unresolved", Severity.WARNING)]
    assert "tools" not in result.request


def test_host_choices_shape_the_envelope(folders: tuple[Path, Path]) -> None:
    prompt_dir, cwd = folders
    ctx = ConversionContext(prompt_dir=prompt_dir, cwd=cwd, default_model="m0",
                            default_max_output_tokens=99, parallel_tool_calls=None, store=None,
                            stream=True)
    request = build_request(load_prompt_text("<user>a</user>"), ctx)
    assert request == {"model": "m0", "max_output_tokens": 99, "stream": True, "input": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "a"}]}]}


def test_hand_built_prompts_are_reported_at_the_prompt_start(folders: tuple[Path, Path]) -> None:
    prompt_dir, cwd = folders
    prompt = Prompt(items=(Message("msg", "nobody", "x"),), name="built")
    with pytest.raises(DiagnosticError) as caught:
        to_items(prompt, ConversionContext(prompt_dir=prompt_dir, cwd=cwd))
    problem = caught.value.first
    assert (problem.code, problem.file, problem.line, problem.column) == (
        "chatmd.unknown_role", "built", 1, 1)


def test_tool_paths_default_to_the_working_directory(folders: tuple[Path, Path]) -> None:
    prompt_dir, cwd = folders
    paths = ConversionContext(prompt_dir=prompt_dir, cwd=cwd).tool_host().paths
    assert (paths.tool_dir, paths.workspace, paths.prompt_dir) == (str(cwd), str(cwd),
                                                                   str(prompt_dir))
    request = build_request(load_prompt_text('<tool name="read_file"/>'),
                            ConversionContext(prompt_dir=prompt_dir, cwd=cwd))
    assert f"- cwd: {cwd.resolve()} — ochat launch directory" in \
        request["tools"][0]["description"].splitlines()


def test_http_fetcher_does_not_follow_redirects_out_of_http(server: str) -> None:
    with pytest.raises(FetchError, match="file"):
        HttpFetcher(timeout=5).fetch(f"{server}/to-file")
    assert HttpFetcher(timeout=5).fetch(f"{server}/to-plain") == b"remote text"


def test_compressed_documents_may_not_expand_without_bound(folders: tuple[Path, Path],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import chatmd.request_content as content

    prompt_dir, cwd = folders
    (prompt_dir / "bomb.gz").write_bytes(gzip.compress(b"<p>" + b"a" * 5000 + b"</p>"))
    (prompt_dir / "broken.gz").write_bytes(b"\x1f\x8bnot gzip at all")
    monkeypatch.setattr(content, "MAX_DOCUMENT_BYTES", 1000)
    ctx = ConversionContext(prompt_dir=prompt_dir, cwd=cwd)
    [problem] = errors_of('<user><doc src="bomb.gz" local strip/></user>', ctx)
    assert problem.code == "chatmd.doc_unresolved" and "1000 bytes" in problem.message
    items = convert('<user><doc src="broken.gz" local strip/></user>', ctx)
    assert first_text(items).endswith("not gzip at all")  # best effort: used as it is


SHELL_PROMPT = (
    '<shell_access id="dev"><capabilities sandbox="direct_unsafe"/>'
    '<backends merge="replace"><direct id="d" when="any"/></backends></shell_access>\n'
    '<tool name="sh" type="shell" mode="chain" runtime="dev"/>\n<user>x</user>\n')


def test_long_form_shell_tools_are_defined_by_the_shell_compiler(
        folders: tuple[Path, Path]) -> None:
    prompt_dir, cwd = folders
    request = build_request(load_prompt_text(SHELL_PROMPT),
                            ConversionContext(prompt_dir=prompt_dir, cwd=cwd))
    [tool] = request["tools"]
    assert tool["name"] == "sh" and "parsed shell command chain" in tool["description"]
    assert tool["parameters"]["properties"]["command"] == {"type": "string"}
    without = compile_request(load_prompt_text(SHELL_PROMPT),
                              ConversionContext(prompt_dir=prompt_dir, cwd=cwd,
                                                shell_definer=None))
    assert [d.code for d in without.diagnostics] == ["chatmd.shell_tool_unavailable"]
