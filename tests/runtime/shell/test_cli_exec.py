"""``chatmdc shell exec``: what the model would receive, and the exit statuses 0 / 1 / 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runtime.commands.chatmdc import main
from tests.runtime.shell.support import chain_tool, runtime, structured_tool


def prompt(tmp_path: Path, text: str) -> str:
    path = tmp_path / "p.chatmd"
    path.write_text(text + "\n<user>hi</user>\n", encoding="utf-8")
    return str(path)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["shell", "exec", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_exec_exit_statuses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = prompt(tmp_path, runtime() + chain_tool() + structured_tool(nonzero="error"))
    ws = ["--workspace", str(tmp_path)]
    assert run(capsys, path, "sh", "--args", '{"command": "echo hi | tr a-z A-Z"}', *ws)[:2] == (
        0, "HI\n")
    status, out, _ = run(capsys, path, "run", "--args",
                         '{"program": "sh", "arguments": ["-c", "exit 3"]}', *ws)
    assert status == 0 and json.loads(out)["error"]["code"] == "shell.tool_nonzero"
    status, out, _ = run(capsys, path, "sh", "--args", '{"command": "cat a > b"}', *ws)
    assert status == 1 and json.loads(out)["error"]["code"] == "shell.tool_chain_parse"
    assert run(capsys, path, "sh", "--args", "not json")[0] == 1
    assert run(capsys, path, "nope")[0] == 2
    assert run(capsys, str(tmp_path / "missing.chatmd"), "sh")[0] == 2
    assert main(["shell", "exec", path, "sh", "--approvals", "maybe"]) == 2


def test_exec_approvals_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = prompt(tmp_path, runtime(policy='<policy default="ask"/>') + structured_tool())
    args = ["--args", '{"program": "echo", "arguments": ["ok"]}', "--workspace", str(tmp_path)]
    assert run(capsys, path, "run", *args, "--approvals", "allow")[:2] == (0, "ok\n")
    status, out, _ = run(capsys, path, "run", *args, "--approvals", "deny")
    assert status == 1 and json.loads(out)["error"]["code"] == "denied"


def test_exec_reports_instantiation_failures(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    text = runtime(attrs='cwd="missing-dir"') + structured_tool()
    status, _, err = run(capsys, prompt(tmp_path, text), "run")
    assert status == 1 and "shell.directory_unavailable" in err


def test_terminal_reviewer_answers(monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    import io

    from runtime.shell.approvals import ApprovalAnswer, ApprovalRequest
    from runtime.shell.commands import terminal_reviewer

    request = ApprovalRequest("r", "run", "echo hi", "structured", "default policy: ask",
                              "why", ("once", "exact_session"), "0" * 64)
    for typed, expected in (("y\n", True), ("n\n", False), ("\n", False),
                            ("1\n", ApprovalAnswer("approve", scope="exact_session"))):
        monkeypatch.setattr("sys.stdin", io.StringIO(typed))
        assert terminal_reviewer(request) == expected
    prompt = capsys.readouterr().err
    assert "echo hi" in prompt and "rationale: why" in prompt and "1 = exact_session" in prompt
