"""``--format json``: every command writes exactly one JSON document (issue 15, part 4).

Every command that takes ``--format json`` (``chatml check/run/compile/dis``,
``chatmdc check/compile/shell explain``) is run over inputs that warn and
then fail in each phase (input, parse, type, run time); the stream that
carries the diagnostics must hold exactly one JSON document (``json.loads``
of the whole stream), with every phase's diagnostics in it, and nothing else.
``chatml compile`` reports the warnings ``chatml check`` reports, in both
formats, also when the build comes from the bytecode cache.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chatml.cli import main as chatml
from runtime.commands.chatmdc import main as chatmdc

WARN = 'print("a\\qb")\n'
PROGRAMS: dict[str, tuple[str, set[str]]] = {
    "clean": ("print(1)\n", set()),
    "warning": (WARN, {"chatml.unknown_escape"}),
    "warning_then_parse_error": (WARN + "let = 1\n", {"chatml.unknown_escape"}),
    "warning_then_type_error": (WARN + 'let x = 1 + "s"\n',
                                {"chatml.unknown_escape", "chatml.type_mismatch"}),
    "warning_then_runtime_error": (WARN + "print(1 / 0)\n",
                                   {"chatml.unknown_escape", "chatml.division_by_zero"}),
}
COMMANDS = ["check", "run", "compile", "dis"]


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def _chatml(command: str, path: Path, *extra: str) -> list[str]:
    words = [command, "--format", "json", *extra, str(path)]
    if command == "compile":
        words += ["-o", str(path.with_suffix(".cmlb"))]
    return words


def _document(text: str) -> dict[str, Any]:
    document = json.loads(text)  # the whole stream: exactly one document
    assert isinstance(document, dict) and isinstance(document["diagnostics"], list)
    return document


def _codes(document: dict[str, Any]) -> set[str]:
    return {d["code"] for d in document["diagnostics"]}


@pytest.mark.parametrize("program", sorted(PROGRAMS))
@pytest.mark.parametrize("command", COMMANDS)
def test_chatml_commands_write_one_document(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            command: str, program: str) -> None:
    text, expected = PROGRAMS[program]
    path = tmp_path / "script.chatml"
    path.write_text(text, encoding="utf-8")
    for _ in range(2):  # the second time from the bytecode cache, when there is one
        status = chatml(_chatml(command, path))
        out, err = capsys.readouterr()
        if command == "check":
            document = _document(out)
            assert err == ""
        else:
            document = _document(err)
        codes = _codes(document)
        if "parse_error" in program:
            assert "chatml.unknown_escape" in codes and len(codes) >= 2
            assert status == 1
            continue
        if command != "run":
            expected = expected - {"chatml.division_by_zero"}
        assert codes == expected, (command, program)
        if command == "run" and "runtime" in program:
            assert status == 3 and out.startswith("a\\qb")


@pytest.mark.parametrize("command", COMMANDS)
def test_chatml_usage_problems_are_in_the_document(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str],
                                                   command: str) -> None:
    assert chatml(_chatml(command, tmp_path / "missing.chatml")) == 2
    out, err = capsys.readouterr()
    stream = out if command == "check" else err
    assert _codes(_document(stream)) == {"chatml.unreadable_file"}
    if command != "check":
        path = tmp_path / "script.chatml"
        path.write_text("print(1)\n", encoding="utf-8")
        assert chatml(_chatml(command, path, "--surface", "bogus")) == 2
        assert _codes(_document(capsys.readouterr().err)) == {"chatml.unknown_surface"}


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_compile_reports_the_warnings_check_reports(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str],
                                                    fmt: str) -> None:
    path = tmp_path / "script.chatml"
    path.write_text(WARN, encoding="utf-8")
    assert chatml(["check", "--format", fmt, str(path)]) == 0
    checked = capsys.readouterr()
    for _ in range(2):
        assert chatml(["compile", "--format", fmt, str(path), "-o", str(tmp_path / "o")]) == 0
        compiled = capsys.readouterr()
        if fmt == "json":
            assert _codes(_document(compiled.err)) == _codes(_document(checked.out))
        else:
            assert "warning[chatml.unknown_escape]" in checked.err
            assert "warning[chatml.unknown_escape]" in compiled.err


# --------------------------------------------------------------------------- chatmdc

CLEAN = """\
<shell_access id="open" extends="builtin:yolo@1"><limits wall_time="10s"/></shell_access>
<shell_access id="dev" extends="open"><capabilities network="false"/></shell_access>
<tool name="sh" type="shell" mode="structured" runtime="dev" description="Run one program."/>
<moderator_runtime shell_runtime="dev"/>
<user>hi</user>
"""
BROKEN = '<shell_access id="x" foo="1"/>\n<user>hi</user>\n'
UNCLOSED = "<user>hi\n"


def _prompt(tmp_path: Path, text: str, name: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("text", [CLEAN, BROKEN, UNCLOSED, None])
@pytest.mark.parametrize("command", ["check", "compile", "explain"])
def test_chatmdc_commands_write_one_document(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             command: str, text: str | None) -> None:
    path = _prompt(tmp_path, text, "p.chatmd") if text is not None else str(tmp_path / "no.md")
    words = {"check": ["check", "--format", "json", path],
             "compile": ["compile", "--format", "json", path],
             "explain": ["shell", "explain", "--format", "json", path]}[command]
    status = chatmdc(words)
    out, err = capsys.readouterr()
    document = _document(out if command == "check" else err)
    if text is None or text is not CLEAN:
        assert document["diagnostics"] and status in (1, 2)
    else:
        assert status == 0


def test_explain_an_unknown_runtime_in_json(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    path = _prompt(tmp_path, CLEAN, "p.chatmd")
    assert chatmdc(["shell", "explain", "--format", "json", path, "nope"]) == 2
    assert _codes(_document(capsys.readouterr().err)) == {"chatmd.unknown_runtime"}
