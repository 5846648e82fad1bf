"""Issue 16, row 1: malformed file references are refused at the attribute, in every command.

Each case names a prompt whose one file reference (import, script, doc, img,
agent, tool agent) holds a NUL byte or is too long for the file system; every
command that reads prompts must answer with ``chatmd.invalid_path`` positioned
at the attribute (never a ``ValueError`` traceback), with and without
``--confine``, and ``--format json`` must print one document.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from chatmd.frontend import check_prompt_text
from tests.robustness.support import chatmdc, write_files

LONG_PATH = "a/" * 2100 + "x"
LONG_NAME = "n" * 300 + ".md"

#: name -> (prompt text, the column of the offending attribute on line 1)
CASES: dict[str, tuple[str, int]] = {
    "import_nul": ('<import src="a\0b"/>\n<user>hi</user>\n', 9),
    "import_long_path": (f'<import src="{LONG_PATH}"/>\n<user>hi</user>\n', 9),
    "import_long_name": (f'<import src="{LONG_NAME}"/>\n<user>hi</user>\n', 9),
    "script_nul": ('<script id="m" kind="moderator" language="chatml" src="m\0.chatml"/>'
                   '\n<user>hi</user>\n', 51),
    "doc_nul": ('<user><doc src="d\0.txt" local/></user>\n', 12),
    "doc_long_name": (f'<user><doc src="{LONG_NAME}" local/></user>\n', 12),
    "img_nul": ('<user><img src="i\0.png" local/></user>\n', 12),
    "agent_nul": ('<user><agent src="a\0.chatmd" local>go</agent></user>\n', 14),
    "tool_agent_nul": ('<tool name="t" agent="a\0.chatmd" local/>\n<user>hi</user>\n', 16),
}

COMMANDS: dict[str, list[str]] = {
    "check": ["check"],
    "check_confine": ["check", "--confine"],
    "compile": ["compile"],
    "compile_confine_request": ["compile", "--confine", "--emit", "request"],
    "compile_chatmd": ["compile", "--emit", "chatmd"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_malformed_reference_is_a_diagnostic_at_the_attribute(
        case: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    text, column = CASES[case]
    write_files(tmp_path, {"p.chatmd": text})
    monkeypatch.chdir(tmp_path)
    outcome = chatmdc([*COMMANDS[command], "--format", "json", "p.chatmd"], capsys)
    assert outcome.status == 1
    stream = "out" if command.startswith("check") else "err"
    diagnostics = outcome.json(stream)["diagnostics"]
    invalid = [d for d in diagnostics if d["code"] == "chatmd.invalid_path"]
    assert len(invalid) == 1, diagnostics
    assert (invalid[0]["line"], invalid[0]["column"]) == (1, column)
    assert outcome.out == "" or stream == "out"  # no artefact is written


@pytest.mark.parametrize("case", sorted(CASES))
def test_text_output_names_the_problem(case: str, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    write_files(tmp_path, {"p.chatmd": CASES[case][0]})
    monkeypatch.chdir(tmp_path)
    outcome = chatmdc(["check", "p.chatmd"], capsys)
    assert outcome.status == 1
    assert "error[chatmd.invalid_path]" in outcome.err


def test_shell_explain_reports_instead_of_raising(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    write_files(tmp_path, {"p.chatmd": CASES["import_nul"][0]})
    outcome = chatmdc(["shell", "explain", str(tmp_path / "p.chatmd")], capsys)
    assert outcome.status == 1
    assert "chatmd.invalid_path" in outcome.err


@pytest.mark.parametrize("text", [
    '<import src="a\udc80b"/>',
    '<user><doc src="\ud800.txt" local/></user>',
    '<user><img src="\ud800.png" local/></user>',
])
def test_references_that_are_not_utf8_are_refused(text: str) -> None:
    """(Only through the library: files are read as strict UTF-8.)"""
    result = check_prompt_text(text, prompt_dir="/nonexistent-folder")
    codes = [d.code for d in result.diagnostics]
    assert codes == ["chatmd.invalid_path"]
    assert "not valid UTF-8" in result.diagnostics[0].message


def test_remote_references_are_left_to_the_fetcher() -> None:
    """A remote ``<img>``/``<doc>`` is not a file: no path rule applies to it."""
    text = '<user><img src="https://h/\0.png"/><doc src="https://h/' + "x" * 5000 + '"/></user>'
    result = check_prompt_text(text, prompt_dir="/nonexistent-folder")
    assert not result.diagnostics
