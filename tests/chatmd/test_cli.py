"""The chatmdc command: check and compile --emit ir, exit codes, output formats, atomic -o."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from chatmd.frontend import load_prompt
from chatmd.ir_json import ir_from_json
from runtime.commands.chatmdc import main
from tests.support import REPO_ROOT

EXAMPLE = REPO_ROOT / "examples" / "hello.chatmd"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_check_clean_prompt_prints_one_summary_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(EXAMPLE)]) == 0
    assert capsys.readouterr() == ("", "chatmdc: 1 file checked, no problems\n")
    assert main(["check", str(EXAMPLE), str(EXAMPLE)]) == 0
    assert capsys.readouterr() == ("", "chatmdc: 2 files checked, no problems\n")


def test_check_quiet_keeps_a_clean_prompt_silent(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--quiet", str(EXAMPLE)]) == 0
    assert capsys.readouterr() == ("", "")
    assert main(["check", "--quiet", "--format", "text", str(EXAMPLE)]) == 0
    assert capsys.readouterr() == ("", "")


def test_check_json_of_a_clean_prompt_is_unchanged(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--format", "json", str(EXAMPLE)]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out) == {"diagnostics": [], "summary": {"errors": 0, "warnings": 0,
                                                              "files": 1}}
    assert err == ""


def test_check_reports_every_error_with_a_summary(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    bad = write(tmp_path, "bad.chatmd", '<msg>x</msg>\n<import src="t.chatmd" local/>\n'
                '<config max_tokens="x"/>\n')
    write(tmp_path, "t.chatmd", "<tool name='fork'/>")
    assert main(["check", str(bad), str(EXAMPLE)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert "error[chatmd.missing_attribute]" in err and "warning[chatmd.import_local_ignored]" in err
    assert f"--> {bad}:3:9" in err
    assert err.rstrip().endswith("chatmdc: 2 errors, 1 warning in 2 files")


def test_warnings_alone_exit_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "t.chatmd", "<tool name='fork'/>")
    path = write(tmp_path, "p.chatmd", '<import src="t.chatmd" local/>')
    assert main(["check", str(path)]) == 0
    assert capsys.readouterr().err.rstrip().endswith("chatmdc: 0 errors, 1 warning in 1 file")


def test_check_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "p.chatmd", "<msg>x</msg>")
    assert main(["check", "--format", "json", str(path)]) == 1
    out, err = capsys.readouterr()
    data = json.loads(out)
    (diagnostic,) = data["diagnostics"]
    assert {k: diagnostic[k] for k in ("file", "line", "column", "severity", "code", "phase")} == {
        "file": str(path), "line": 1, "column": 1, "severity": "error",
        "code": "chatmd.missing_attribute", "phase": "declarations"}
    assert {"end_line", "end_column", "message"} <= set(diagnostic)
    assert data["summary"] == {"errors": 1, "warnings": 0, "files": 1}
    assert err == ""


def test_import_chain_in_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "lib/a.chatmd", "<user>x</assistant>")
    path = write(tmp_path, "p.chatmd", '\n<import src="lib/a.chatmd"/>')
    assert main(["check", "--format", "json", str(path)]) == 1
    (diagnostic,) = json.loads(capsys.readouterr().out)["diagnostics"]
    assert diagnostic["file"] == "lib/a.chatmd"
    assert diagnostic["related"][-1] == {"message": "imported from", "file": str(path),
                                         "line": 2, "column": 1}


def test_check_unreadable_and_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "/no/such/file.chatmd"]) == 2
    assert "chatmd.unreadable_input" in capsys.readouterr().err
    assert main(["check"]) == 2
    assert main(["frobnicate"]) == 2
    assert main(["compile", str(EXAMPLE), "--emit", "yaml"]) == 2


def test_check_confine(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "outside.chatmd", "<tool name='fork'/>")
    path = write(tmp_path, "prompt/p.chatmd", '<import src="../outside.chatmd"/>')
    assert main(["check", str(path)]) == 0
    assert main(["check", "--confine", str(path)]) == 1
    assert "chatmd.path_outside_prompt_dir" in capsys.readouterr().err


def test_compile_ir_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compile", str(EXAMPLE)]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert ir_from_json(out) == load_prompt(EXAMPLE)
    assert json.loads(out)["ir_version"] == 1


def test_compile_ir_to_file_atomically(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "out" / "ir.json"
    target.parent.mkdir()  # a missing output folder is an error (tests/test_cli_input_output.py)
    assert main(["compile", str(EXAMPLE), "--emit", "ir", "-o", str(target)]) == 0
    assert capsys.readouterr().out == ""
    assert ir_from_json(target.read_text(encoding="utf-8")) == load_prompt(EXAMPLE)
    assert [p.name for p in target.parent.iterdir()] == ["ir.json"]  # no temporary left


def test_compile_with_errors_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "p.chatmd", "<msg>x</msg>")
    target = tmp_path / "ir.json"
    assert main(["compile", str(path), "-o", str(target)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "chatmd.missing_attribute" in err and not target.exists()
    assert main(["compile", str(path), "--format", "json"]) == 1
    assert json.loads(capsys.readouterr().err)["diagnostics"][0]["code"] == "chatmd.missing_attribute"
    assert main(["compile", "/no/such.chatmd"]) == 2


def test_unavailable_emit_mode_exits_2(monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    from runtime.commands import chatmdc as cli

    def unavailable(result: object, args: object) -> str:
        raise cli.EmitUnavailable("--emit chatmd is not available in this build")

    monkeypatch.setitem(cli.EMITTERS, "chatmd", unavailable)
    assert main(["compile", str(EXAMPLE), "--emit", "chatmd"]) == 2
    assert "--emit chatmd is not available in this build" in capsys.readouterr().err


def test_module_entry_point_exit_status(tmp_path: Path) -> None:
    path = write(tmp_path, "p.chatmd", "<user>x</assistant>")
    run = subprocess.run([sys.executable, "-m", "runtime.commands.chatmdc", "check", str(path)],
                         cwd=REPO_ROOT, capture_output=True, text=True, check=False)
    assert run.returncode == 1 and "chatmd.mismatched_tag" in run.stderr
