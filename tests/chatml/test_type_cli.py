"""``chatml check``: output, JSON shape and exit statuses (chatml/cli.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from chatml.cli import SURFACE_CHOICES, main
from chatml.surfaces import SURFACE_NAMES


def _write(tmp_path: Path, text: str, name: str = "script.chatml") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_a_clean_file_prints_its_types_and_exits_0(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "let f x = x + 1\nlet id x = x\nmodule M = struct let v = 2 end\n")
    assert main(["check", path]) == 0
    out, err = capsys.readouterr()
    assert out == "val f : int -> int\nval id : 'a -> 'a\nval M : {v: int}\n"
    assert err == ""


def test_errors_go_to_stderr_with_a_summary_and_exit_1(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "let a = 1\nlet b = a ++ \"x\"\nlet c = nope\n")
    assert main(["check", path]) == 1
    out, err = capsys.readouterr()
    assert out == "val a : int\n"
    assert "error[chatml.type_mismatch]: Cannot unify int with string" in err
    assert f"--> {path}:2:9" in err
    assert "error[chatml.unknown_variable]" in err
    assert err.rstrip().endswith(f"chatml: 2 errors, 0 warnings in {path}")


def test_warnings_do_not_change_the_exit_status(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "let f c = if c then 1 else 2; 3\n")
    assert main(["check", path]) == 0
    _, err = capsys.readouterr()
    assert "warning[chatml.else_swallows_sequence]" in err


def test_json_output_holds_bindings_and_diagnostics(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "let f x = x\nlet g = f(1) + \"s\"\n")
    assert main(["check", "--format", "json", path]) == 1
    out, err = capsys.readouterr()
    document = json.loads(out)
    assert err == ""
    assert document["bindings"] == [{"name": "f", "type": "'a -> 'a"}]
    (diagnostic,) = document["diagnostics"]
    assert {key: diagnostic[key] for key in ("file", "line", "column", "code", "phase")} == {
        "file": path, "line": 2, "column": 9, "code": "chatml.type_mismatch", "phase": "type"}


def test_the_surface_flag_selects_the_builtins(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "let t = Log.info(\"x\")\n")
    assert main(["check", path]) == 1
    assert main(["check", "--surface", "moderator", path]) == 0
    out, _ = capsys.readouterr()
    assert out.endswith("val t : unit task\n")
    assert main(["check", "--surface", "shell_matcher", _write(tmp_path, "print(1)\n", "p.ml")]) == 1


def test_unreadable_files_and_usage_errors_exit_2(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(tmp_path / "missing.chatml")]) == 2
    _, err = capsys.readouterr()
    assert "chatml.unreadable_file" in err
    assert main(["check", "--surface", "nonsense", _write(tmp_path, "1")]) == 2
    assert main(["check"]) == 2
    assert main([]) == 2


def test_surface_choices_are_exactly_the_tables_surfaces() -> None:
    assert SURFACE_CHOICES == SURFACE_NAMES


def test_the_console_script_runs_as_a_process(tmp_path: Path) -> None:
    path = _write(tmp_path, "let x = [1, 2]\n")
    completed = subprocess.run([sys.executable, "-m", "chatml.cli", "check", path],
                               capture_output=True, text=True, timeout=60, check=False)
    assert completed.returncode == 0
    assert completed.stdout == "val x : int array\n"
