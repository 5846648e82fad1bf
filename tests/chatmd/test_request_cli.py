"""``chatmdc compile --emit request|chatmd``: output, exit codes and diagnostics."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from chatmd.frontend import load_prompt, load_prompt_text
from runtime.commands.chatmdc import main
from tests.support import REPO_ROOT

PROMPT = """<config model="gpt-4o" max_tokens="64"/>
<tool name="apply_patch"/>
<system>Be brief.</system>
<user>Summarise: <doc src="notes.txt" local/></user>
"""


@pytest.fixture
def prompt_file(tmp_path: Path) -> Path:
    (tmp_path / "notes.txt").write_text("the notes", encoding="utf-8")
    path = tmp_path / "p.chatmd"
    path.write_text(PROMPT, encoding="utf-8")
    return path


def test_emit_request_prints_the_request_body(prompt_file: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compile", str(prompt_file), "--emit", "request"]) == 0
    out, err = capsys.readouterr()
    body = json.loads(out)
    assert err == ""
    assert body["model"] == "gpt-4o" and body["max_output_tokens"] == 64
    assert [t["name"] for t in body["tools"]] == ["apply_patch"]
    assert body["input"][1] == {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "Summarise: "},
        {"type": "input_text", "text": "the notes"}]}


def test_conversion_errors_exit_1_with_positions(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.chatmd"
    path.write_text('<user>\n <doc src="gone.txt" local/></user>\n<msg role="x">y</msg>\n',
                    encoding="utf-8")
    assert main(["compile", str(path), "--emit", "request", "--format", "json"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    report = json.loads(err)
    assert [(d["code"], d["line"], d["column"]) for d in report["diagnostics"]] == [
        ("chatmd.doc_unresolved", 2, 2), ("chatmd.unknown_role", 3, 1)]


def test_warnings_are_reported_and_the_body_still_printed(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "mcp.chatmd"
    path.write_text('<tool mcp_server="stdio:srv"/>\n<user>hi</user>\n', encoding="utf-8")
    assert main(["compile", str(path), "--emit", "request"]) == 0
    out, err = capsys.readouterr()
    assert "tools" not in json.loads(out)
    assert "warning[chatmd.mcp_unresolved]" in err and "1 warning" in err


def test_declaration_errors_stop_before_conversion(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "decl.chatmd"
    path.write_text('<msg>x</msg>\n<user><doc src="gone" local/></user>\n', encoding="utf-8")
    assert main(["compile", str(path), "--emit", "request"]) == 1
    _, err = capsys.readouterr()
    assert "chatmd.missing_attribute" in err and "doc_unresolved" not in err


def test_unreadable_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compile", str(tmp_path / "none.chatmd"), "--emit", "request"]) == 2
    assert "chatmd.unreadable_input" in capsys.readouterr().err


class _Page(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802
        body = b"<p>served <b>page</b></p>"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/page"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_remote_documents_need_allow_network(tmp_path: Path, server: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "remote.chatmd"
    path.write_text(f'<user><doc src="{server}" strip/></user>\n', encoding="utf-8")
    assert main(["compile", str(path), "--emit", "request"]) == 1
    assert "network access is disabled" in capsys.readouterr().err
    assert main(["compile", str(path), "--emit", "request", "--allow-network"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["input"][0]["content"] == [{"type": "input_text", "text": "served\npage"}]


def test_emit_chatmd_gives_canonical_text_that_loads_back(prompt_file: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compile", str(prompt_file), "--emit", "chatmd"]) == 0
    out, _ = capsys.readouterr()
    original = load_prompt(prompt_file)
    again = load_prompt_text(out, name=str(prompt_file), prompt_dir=str(prompt_file.parent))
    assert again == original
    assert out.startswith('<config model="gpt-4o" max_tokens="64"/>\n')


def test_emit_chatmd_to_a_file(prompt_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = prompt_file.parent / "out" / "canonical.chatmd"
    target.parent.mkdir()  # a missing output folder is an error (tests/test_cli_input_output.py)
    assert main(["compile", str(prompt_file), "--emit", "chatmd", "-o", str(target)]) == 0
    assert capsys.readouterr().out == ""
    assert load_prompt(target) == load_prompt(prompt_file)


def test_the_console_script_runs(prompt_file: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "runtime.commands.chatmdc", "compile", str(prompt_file), "--emit", "request"],
        capture_output=True, text=True, cwd=REPO_ROOT, timeout=60, check=False)
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout)["model"] == "gpt-4o"
