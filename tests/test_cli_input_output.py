"""Both CLIs treat unreadable input and unwritable output the same way (exit 2).

Invalid UTF-8 or a missing file is exit 2 with a ``*.unreadable_*`` diagnostic of
phase ``input`` and a message that names the offset (not raw codec text) in
every ``chatml`` and ``chatmdc`` subcommand; ``-o`` into a folder that does not
exist is exit 2 with a ``*.unwritable_output`` diagnostic, and no folder is
created. Also: the hint for the copy-update recursive row.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatml.check import check_source
from chatml.cli import main as chatml
from runtime.commands.chatmdc import main as chatmdc

CHATML_COMMANDS = [["check"], ["run"], ["dis"], ["compile", "-o", "{tmp}/out.cmlb"]]
CHATMD_COMMANDS = [["check"], ["compile"], ["compile", "--emit", "request"],
                   ["shell", "explain"]]


def _argv(words: list[str], tmp_path: Path, path: Path) -> list[str]:
    if words[0] == "compile" and "-o" in words:  # the input comes before -o
        return ["compile", str(path), *[w.format(tmp=tmp_path) for w in words[1:]]]
    return [*words, str(path)]


def _only_diagnostic(text: str) -> dict:  # type: ignore[type-arg]
    [diagnostic] = json.loads(text)["diagnostics"]
    return diagnostic  # type: ignore[no-any-return]


@pytest.mark.parametrize("words", CHATML_COMMANDS, ids=lambda w: w[0])
@pytest.mark.parametrize("problem", ["not_utf8", "missing"])
def test_chatml_unreadable_input_exits_2(words: list[str], problem: str, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.chatml"
    if problem == "not_utf8":
        path.write_bytes(b'let x = "\xff\xfe"\n')
    argv = _argv(words, tmp_path, path)
    assert chatml([argv[0], "--format", "json", *argv[1:]]) == 2
    captured = capsys.readouterr()
    diagnostic = _only_diagnostic(captured.out or captured.err)
    assert diagnostic["code"] == "chatml.unreadable_file"
    assert diagnostic["phase"] == "input"
    assert diagnostic["file"] == str(path)
    if problem == "not_utf8":
        assert diagnostic["message"] == (f"cannot read {path}: not UTF-8 text "
                                         "(invalid byte at offset 9)")
    else:
        assert diagnostic["message"].startswith(f"cannot read {path}: ")
    assert not (tmp_path / "out.cmlb").exists()


@pytest.mark.parametrize("words", CHATMD_COMMANDS, ids=" ".join)
@pytest.mark.parametrize("problem", ["not_utf8", "missing"])
def test_chatmdc_unreadable_input_exits_2(words: list[str], problem: str, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.chatmd"
    if problem == "not_utf8":
        path.write_bytes(b"<user>\xff</user>\n")
    status = chatmdc([*words, str(path)])
    assert status == 2
    err = capsys.readouterr().err
    assert "error[chatmd.unreadable_input]" in err
    assert "codec" not in err
    if problem == "not_utf8":
        assert "not UTF-8 text (invalid byte at offset 6)" in err


def test_the_repl_load_message_is_the_same(tmp_path: Path) -> None:
    from chatml.repl import ReplState, step

    path = tmp_path / "bad.chatml"
    path.write_bytes(b'let x = "\xff"\n')
    state, output = step(ReplState.start(), f":load {path}")
    assert output == f"cannot read {path}: not UTF-8 text (invalid byte at offset 9)\n"
    assert not state.finished


def test_chatml_compile_into_a_missing_folder_exits_2(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "ok.chatml"
    source.write_text("print(1)\n", encoding="utf-8")
    target = tmp_path / "missing" / "dir" / "out.cmlb"
    assert chatml(["compile", "--format", "json", str(source), "-o", str(target)]) == 2
    diagnostic = _only_diagnostic(capsys.readouterr().err)
    assert diagnostic["code"] == "chatml.unwritable_output"
    assert diagnostic["phase"] == "output"
    assert "does not exist" in diagnostic["message"]
    assert not (tmp_path / "missing").exists()
    assert chatml(["compile", str(source), "-o", str(tmp_path / "out.cmlb")]) == 0
    assert (tmp_path / "out.cmlb").read_bytes().startswith(b"CHATMLBC")


def test_chatmdc_compile_into_a_missing_folder_exits_2(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "ok.chatmd"
    source.write_text("<user>hi</user>\n", encoding="utf-8")
    target = tmp_path / "missing" / "dir" / "out.json"
    assert chatmdc(["compile", "--format", "json", str(source), "-o", str(target)]) == 2
    diagnostic = _only_diagnostic(capsys.readouterr().err)
    assert diagnostic["code"] == "chatmd.unwritable_output"
    assert "does not exist" in diagnostic["message"]
    assert not (tmp_path / "missing").exists()
    assert chatmdc(["compile", str(source), "-o", str(tmp_path / "out.json")]) == 0
    assert json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))["items"]


@pytest.mark.parametrize("text", [
    'let f ev st = match ev with | `A -> Task.pure({ st with job = "x" }) | _ -> Task.pure(st)',
    'let f c st = if c then Task.pure({ st with job = "x" }) else Task.pure(st)',
])
def test_the_copy_update_recursive_row_hint_names_the_fix(text: str) -> None:
    [diagnostic] = check_source(text).diagnostics
    assert diagnostic.code == "chatml.recursive_row"
    assert diagnostic.hint is not None
    assert "copy-update { st with ... }" in diagnostic.hint
    assert "`job`" in diagnostic.hint and "from the start" in diagnostic.hint


def test_other_join_failures_keep_the_generic_hint() -> None:
    [diagnostic] = check_source('let f c = if c then Task.pure(1) else Task.pure("s")').diagnostics
    assert diagnostic.hint == "both branches of `if` must have the same type"
