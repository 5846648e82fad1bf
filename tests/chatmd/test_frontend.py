"""The library API of chatmd.frontend: load/check, warnings, the check seam, unreadable input."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatcommon.diagnostics import Diagnostic, DiagnosticError, Severity
from chatmd import frontend
from chatmd.frontend import (
    check_prompt,
    check_prompt_text,
    load_prompt,
    load_prompt_text,
    script_source_file,
)
from chatmd.ir import Prompt, SrcSource

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "hello.chatmd"


def test_load_prompt_on_the_bundled_example() -> None:
    prompt = load_prompt(EXAMPLE)
    assert prompt.config.model == "gpt-4o"
    assert [m.kind for m in prompt.messages] == ["system", "user"]
    assert prompt.name == str(EXAMPLE) and prompt.prompt_dir == str(EXAMPLE.parent)


def test_load_prompt_raises_every_error(tmp_path: Path) -> None:
    path = tmp_path / "p.chatmd"
    path.write_text("<msg>x</msg>\n<tool name=' '/>\n", encoding="utf-8")
    with pytest.raises(DiagnosticError) as raised:
        load_prompt(path)
    assert [(d.code, d.file, d.line) for d in raised.value.diagnostics] == [
        ("chatmd.missing_attribute", str(path), 1), ("chatmd.tool_empty_name", str(path), 2)]


def test_parse_errors_do_not_hide_independent_declaration_errors() -> None:
    result = check_prompt_text("<msg>x</msg>\n<user>y</assistant>", checks=())
    assert [(d.code, d.line) for d in result.diagnostics] == [
        ("chatmd.mismatched_tag", 2), ("chatmd.missing_attribute", 1)]
    assert result.prompt is None and result.has_errors


def test_the_broken_element_itself_is_not_lowered() -> None:
    result = check_prompt_text('<msg role="bogus">x</assistant>', checks=())
    assert [d.code for d in result.diagnostics] == ["chatmd.mismatched_tag"]


def test_unreadable_root() -> None:
    result = check_prompt("/definitely/not/here.chatmd")
    assert not result.readable and result.prompt is None
    (diagnostic,) = result.diagnostics
    assert (diagnostic.code, diagnostic.line, diagnostic.column) == ("chatmd.unreadable_input", 1, 1)
    with pytest.raises(DiagnosticError):
        load_prompt("/definitely/not/here.chatmd")


def test_bom_and_crlf_root(tmp_path: Path) -> None:  # DECISIONS 13
    path = tmp_path / "w.chatmd"
    path.write_bytes("\ufeff<config model=\"m\"/>\r\n<user>\r\nhi\r\n</user>\r\n<msg>x</msg>".encode())
    result = check_prompt(path, checks=())
    (diagnostic,) = result.diagnostics
    assert (diagnostic.line, diagnostic.column) == (5, 1)
    prompt = load_prompt_text("\ufeff<user>x</user>")
    assert prompt.messages[0].content == "x"


def test_warnings_do_not_make_a_prompt_fail(tmp_path: Path) -> None:
    (tmp_path / "t.chatmd").write_text("<tool name='fork'/>", encoding="utf-8")
    text = '<import src="t.chatmd" local/>'
    result = check_prompt_text(text, name="r.chatmd", prompt_dir=str(tmp_path), checks=())
    assert [d.severity for d in result.diagnostics] == [Severity.WARNING]
    assert result.prompt is not None and not result.has_errors and result.warnings
    assert load_prompt_text(text, name="r.chatmd", prompt_dir=str(tmp_path)).tools


def test_extra_checks_run_on_the_best_effort_prompt() -> None:
    seen: list[Prompt] = []

    def no_fork(prompt: Prompt) -> list[Diagnostic]:
        seen.append(prompt)
        return [Diagnostic("tools.no_fork", "fork is not allowed", prompt.name, 1, 1)
                for tool in prompt.tools if getattr(tool, "name", "") == "fork"]

    result = check_prompt_text("<tool name='fork'/>\n<msg>x</msg>", checks=[no_fork])
    assert [d.code for d in result.diagnostics] == ["chatmd.missing_attribute", "tools.no_fork"]
    assert len(seen) == 1 and result.prompt is None
    clean = check_prompt_text("<user>x</user>", checks=[no_fork])
    assert clean.prompt is not None and clean.diagnostics == ()


def test_the_default_checks_are_chatmd_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(frontend, "chatmd_checks", lambda: [_sample_check])
    result = check_prompt_text("<user>x</user>")
    assert [d.code for d in result.diagnostics] == ["sample.check"]
    assert result.prompt is None


def _sample_check(prompt: Prompt) -> list[Diagnostic]:
    return [Diagnostic("sample.check", f"{len(prompt.items)} item", prompt.name, 1, 1)]


def test_checks_raising_diagnostic_errors_are_collected() -> None:
    def failing(prompt: Prompt) -> list[Diagnostic]:
        raise DiagnosticError(Diagnostic("x.y", "boom", prompt.name, 1, 1))

    assert [d.code for d in check_prompt_text("<user/>", checks=[failing]).diagnostics] == ["x.y"]


def test_sources_of_every_file_read_are_returned(tmp_path: Path) -> None:
    (tmp_path / "a.chatmd").write_text("<user>x</user>", encoding="utf-8")
    result = check_prompt_text('<import src="a.chatmd"/>', name="r.chatmd",
                               prompt_dir=str(tmp_path), checks=())
    assert {source.name for source in result.sources} == {"r.chatmd", "a.chatmd"}


def test_script_source_file_for_src_scripts(tmp_path: Path) -> None:
    (tmp_path / "m.chatml").write_text("let x =\n  1", encoding="utf-8")
    prompt = load_prompt_text('<script language="chatml" kind="moderator" src="m.chatml"/>',
                              name="sub/r.chatmd", prompt_dir=str(tmp_path), checks=())
    (script,) = prompt.scripts
    assert isinstance(script.source, SrcSource)
    source = script_source_file(script)
    assert (source.name, source.position(10)) == ("sub/m.chatml", (2, 3))


def test_load_prompt_text_is_deterministic(tmp_path: Path) -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    first = load_prompt_text(text, name="hello.chatmd", prompt_dir=str(tmp_path))
    assert first == load_prompt_text(text, name="other.chatmd", prompt_dir=str(EXAMPLE.parent))
