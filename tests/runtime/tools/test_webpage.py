"""webpage_to_markdown against a loopback HTTP server: HTML to Markdown, text, slices, errors."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from runtime.builtin_tools import ToolEnv
from runtime.builtin_tools.text_files import MAX_OUTPUT_BYTES
from runtime.builtin_tools.webpage import github_raw_url, line_range
from runtime.tools import Runner
from tests.runtime.tools.support import call, code_of, runner_for

PAGES: dict[str, tuple[str, bytes]] = {
    "/page": ("text/html; charset=utf-8", (
        b"<!DOCTYPE html><html><head><title>T</title><style>p{}</style></head><body>"
        b"<h1>Title</h1><p>Some <b>bold</b> text and a <a href='/x'>link</a>.</p>"
        b"<script>alert('no')</script><ul><li>one</li><li>two</li></ul>"
        b"<pre><code>x = 1</code></pre><p>Unclosed <i>tags"
    )),
    "/latin": ("text/html", "<html><meta charset='iso-8859-1'><p>caf\xe9</p></html>"
               .encode("latin-1")),
    "/file.py": ("text/plain", "".join(f"line {n}\n" for n in range(1, 101)).encode()),
    "/big.txt": ("text/plain", b"y" * (MAX_OUTPUT_BYTES + 100)),
}


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        page = PAGES.get(self.path)
        if page is None:
            self.send_error(404, "Not Found")
            return
        self.send_response(200)
        self.send_header("Content-Type", page[0])
        self.send_header("Content-Length", str(len(page[1])))
        self.end_headers()
        self.wfile.write(page[1])

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture()
def run(tmp_path: Path) -> Runner:
    env = ToolEnv(workspace=tmp_path, prompt_dir=tmp_path, allow_network=True)
    return runner_for('<tool name="webpage_to_markdown"/>', env)


def test_html_becomes_markdown(run: Runner, base_url: str) -> None:
    output = call(run, url=f"{base_url}/page")
    assert isinstance(output, str)
    assert output.startswith("# Title\n")
    assert "Some **bold** text and a [link](/x)." in output
    assert "- one\n- two" in output
    assert "x = 1" in output
    assert "alert" not in output and "p{}" not in output
    assert "café" in str(call(run, url=f"{base_url}/latin"))


def test_text_is_returned_as_is_and_sliced_by_line_fragment(run: Runner, base_url: str) -> None:
    assert call(run, url=f"{base_url}/file.py#L10-L12") == "line 10\nline 11\nline 12\n"
    assert call(run, url=f"{base_url}/file.py#L99") == "line 99\n"
    assert str(call(run, url=f"{base_url}/file.py")).endswith("line 100\n")
    big = call(run, url=f"{base_url}/big.txt")
    assert str(big).endswith("\n---\n[File truncated]")


def test_failures_are_outputs(run: Runner, base_url: str) -> None:
    missing = call(run, url=f"{base_url}/missing")
    assert code_of(missing) == "webpage_to_markdown.fetch_failed" and "404" in str(missing)
    assert code_of(call(run, url="file:///etc/passwd")) == "webpage_to_markdown.invalid_url"
    assert code_of(call(run, url="notaurl")) == "webpage_to_markdown.invalid_url"
    closed = call(run, url="http://127.0.0.1:9/")
    assert code_of(closed) == "webpage_to_markdown.fetch_failed"
    assert code_of(run("{}")) == "tool.invalid_arguments"


def test_github_blob_urls_are_fetched_raw() -> None:
    assert github_raw_url("https://github.com/o/r/blob/main/src/a.py#L3-L9") == \
        "https://raw.githubusercontent.com/o/r/main/src/a.py"
    assert github_raw_url("https://github.com/o/r/tree/main/src") is None
    assert github_raw_url("https://example.com/o/r/blob/main/a.py") is None
    assert line_range("L10-L80") == (10, 80)
    assert line_range("L7") == (7, 7)
    assert line_range("L9-L3") is None
    assert line_range("readme") is None
