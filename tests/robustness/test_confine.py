"""Issue 16, row "--confine incomplete": every local file reference stays beneath the prompt.

A pinned prompt (``--confine``) may read local ``<doc>``, ``<img>``,
``<agent>`` and ``<tool agent>`` files only beneath its own folder once ``..``,
absolute paths and symlinks are resolved: ``check`` and ``compile`` report
``chatmd.path_outside_prompt_dir`` at the attribute, and request conversion
with a confined context refuses to read them whatever the check said.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chatmd.frontend import load_prompt
from chatmd.request import compile_request
from chatmd.request_context import ConversionContext
from tests.robustness.support import chatmdc

SECRET = "SECRET-OUTSIDE-TEXT"

#: name -> element referring to ``{ref}`` (filled per way of escaping)
ELEMENTS = {
    "doc": '<user><doc src="{ref}" local/></user>\n',
    "doc_markdown": '<user><doc src="{ref}" local markdown/></user>\n',
    "img": '<user><img src="{ref}" local/></user>\n',
    "agent": '<user><agent src="{ref}" local>go</agent></user>\n',
    "tool_agent": '<tool name="t" agent="{ref}" local/>\n<user>hi</user>\n',
}
ESCAPES = ("dotdot", "absolute", "symlink", "symlinked_folder")


def _layout(tmp_path: Path, escape: str) -> tuple[Path, str]:
    """The prompt folder and the reference that escapes it in the way ``escape`` names."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET, encoding="utf-8")
    root = tmp_path / "prompt"
    root.mkdir()
    if escape == "dotdot":
        return root, "../outside/secret.txt"
    if escape == "absolute":
        return root, str(outside / "secret.txt")
    if escape == "symlink":
        os.symlink(outside / "secret.txt", root / "inside.txt")
        return root, "inside.txt"
    os.symlink(outside, root / "sub")
    return root, "sub/secret.txt"


@pytest.mark.parametrize("escape", ESCAPES)
@pytest.mark.parametrize("element", sorted(ELEMENTS))
@pytest.mark.parametrize("command", [["check", "--confine"],
                                     ["compile", "--confine", "--emit", "request"],
                                     ["compile", "--confine"]])
def test_confined_commands_refuse_references_leaving_the_folder(
        element: str, escape: str, command: list[str], tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    root, reference = _layout(tmp_path, escape)
    (root / "p.chatmd").write_text(ELEMENTS[element].format(ref=reference), encoding="utf-8")
    monkeypatch.chdir(root)
    outcome = chatmdc([*command, "--format", "json", "p.chatmd"], capsys)
    assert outcome.status == 1
    assert SECRET not in outcome.out and SECRET not in outcome.err
    stream = "out" if command[0] == "check" else "err"
    diagnostics = outcome.json(stream)["diagnostics"]
    outside = [d for d in diagnostics if d["code"] == "chatmd.path_outside_prompt_dir"]
    assert len(outside) == 1, diagnostics
    assert outside[0]["line"] == 1


@pytest.mark.parametrize("escape", ESCAPES)
def test_without_confine_the_document_is_read(escape: str, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The fixtures really escape: unconfined, the outside file's text is in the request."""
    root, reference = _layout(tmp_path, escape)
    (root / "p.chatmd").write_text(ELEMENTS["doc"].format(ref=reference), encoding="utf-8")
    monkeypatch.chdir(root)
    outcome = chatmdc(["compile", "--emit", "request", "p.chatmd"], capsys)
    assert outcome.status == 0, outcome.err
    assert SECRET in outcome.out


def test_confined_files_inside_the_folder_are_read(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "prompt"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "d.txt").write_text("INSIDE", encoding="utf-8")
    (root / "p.chatmd").write_text('<user><doc src="docs/../docs/d.txt" local/></user>\n',
                                   encoding="utf-8")
    outcome = chatmdc(["compile", "--confine", "--emit", "request", str(root / "p.chatmd")],
                      capsys)
    assert outcome.status == 0, outcome.err
    assert "INSIDE" in outcome.out


@pytest.mark.parametrize("escape", ESCAPES)
@pytest.mark.parametrize("element", ["doc", "img", "agent"])
def test_a_confined_context_refuses_even_an_unconfined_prompt(
        element: str, escape: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Request conversion enforces confinement itself (a host may skip the check)."""
    root, reference = _layout(tmp_path, escape)
    (root / "p.chatmd").write_text(ELEMENTS[element].format(ref=reference), encoding="utf-8")
    monkeypatch.chdir(tmp_path / "outside")  # the working-directory fallback must not apply
    prompt = load_prompt(root / "p.chatmd")

    def runner(text: str, parts: object, folder: str, session: str | None) -> str:
        return text  # an agent "answers" with its prompt: the secret would show

    from chatmd.request_context import CallbackAgentRunner

    context = ConversionContext(prompt_dir=root, confine=True,
                                agent_runner=CallbackAgentRunner(runner))
    result = compile_request(prompt, context)
    assert result.request is None
    assert any("refused" in d.message for d in result.diagnostics), result.diagnostics
    assert SECRET not in repr(result.diagnostics)
