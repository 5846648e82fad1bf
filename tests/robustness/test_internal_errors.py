"""Issue 16: an exception that escapes a command is one ``*.internal_error`` diagnostic.

The bug is simulated by making a frontend function raise; each command must
still exit 1 with the diagnostic (positioned in the input when the failing
code was working on a known span), in text and as one JSON document.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.robustness.support import chatmdc, chatml, write_files


def _boom(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("simulated bug")


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_chatmdc_check_reports_an_internal_error_at_the_element(
        fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    import chatmd.declarations.content as content

    write_files(tmp_path, {"p.chatmd": "<user>\n  <img src='x.png'/>\n</user>\n",
                           "q.chatmd": "<user>fine</user>\n"})
    original = content.content_items

    def failing(children: Any, provenance: Any, ctx: Any) -> Any:
        element = next(c for c in children if getattr(c, "tag", None) == "img")
        assert element.span is not None  # the span the diagnostic will point at
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(content, "content_items", failing)
    monkeypatch.chdir(tmp_path)
    outcome = chatmdc(["check", "--format", fmt, "p.chatmd", "q.chatmd"], capsys)
    monkeypatch.setattr(content, "content_items", original)
    assert outcome.status == 1
    if fmt == "json":
        (diagnostic,) = outcome.json()["diagnostics"]
        assert diagnostic["code"] == "chatmd.internal_error"
        assert (diagnostic["file"], diagnostic["line"], diagnostic["column"]) == ("p.chatmd", 2, 3)
        assert "RuntimeError: simulated bug" in diagnostic["message"]
    else:
        assert "error[chatmd.internal_error]" in outcome.err
        assert "p.chatmd:2:3" in outcome.err


@pytest.mark.parametrize("command", [["compile"], ["compile", "--emit", "request"],
                                     ["shell", "explain"]])
def test_chatmdc_commands_report_internal_errors(command: list[str], tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import chatmd.frontend as frontend
    import chatmd.shell.cli as shell_cli

    write_files(tmp_path, {"p.chatmd": "<user>hi</user>\n"})
    monkeypatch.setattr(frontend, "_load", _boom)
    monkeypatch.setattr(shell_cli, "explain_prompt", _boom)
    outcome = chatmdc([*command, str(tmp_path / "p.chatmd")], capsys)
    assert outcome.status == 1
    assert "error[chatmd.internal_error]" in outcome.err
    assert f"{tmp_path / 'p.chatmd'}:1:1" in outcome.err


@pytest.mark.parametrize("command", ["check", "run", "compile", "dis"])
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_chatml_commands_report_internal_errors(command: str, fmt: str, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import chatml.build as build
    import chatml.check as check

    source = tmp_path / "p.chatml"
    source.write_text("let x = 1\n", encoding="utf-8")
    monkeypatch.setattr(check, "check_file", _boom)
    monkeypatch.setattr(build, "build_file", _boom)
    argv = [command, "--format", fmt, str(source)]
    if command == "compile":
        argv += ["-o", str(tmp_path / "p.bc")]
    outcome = chatml(argv, capsys)
    assert outcome.status == 1
    if fmt == "json":
        stream = "out" if command == "check" else "err"
        assert outcome.codes(stream) == ["chatml.internal_error"]
    else:
        assert "error[chatml.internal_error]" in outcome.err
        assert f"{source}:1:1" in outcome.err
