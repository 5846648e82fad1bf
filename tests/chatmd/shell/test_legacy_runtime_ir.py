"""The synthetic ``legacy:custom`` runtime in the IR (shell spec §5.3, issue 14).

A legacy ``<tool name command/>`` makes ``legacy:custom`` appear in
``Prompt.shell_runtimes`` like a declared runtime, but without a syntax tree
(``element`` is None): it survives the IR JSON round trip, gets its compiled
record for ``--emit ir``, and no writer prints it as if the user wrote it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatmd.canonical_writer import write_prompt
from chatmd.frontend import load_prompt_text
from chatmd.ir import LEGACY_RUNTIME_ID, CustomTool
from chatmd.ir_json import ir_from_json, ir_to_json
from chatmd.shell.integration import compile_prompt_shell, with_compiled_shell
from runtime.commands.chatmdc import main
from runtime.prompt_checks import check_prompt_text

LEGACY = '<tool name="x" command="ls" description="List."/>\n<user>hi</user>\n'


def test_a_legacy_tool_brings_legacy_custom_into_the_ir() -> None:
    prompt = load_prompt_text(LEGACY, name="p.chatmd", prompt_dir="/tmp")
    (runtime,) = prompt.shell_runtimes
    assert runtime.id == LEGACY_RUNTIME_ID and runtime.extends is None
    assert runtime.synthetic and runtime.element is None
    (tool,) = prompt.tools
    assert isinstance(tool, CustomTool)
    assert runtime.provenance is not None and tool.provenance is not None
    assert (runtime.provenance.line, runtime.provenance.column) == (1, 1)


def test_no_legacy_tool_no_synthetic_runtime() -> None:
    prompt = load_prompt_text('<tool name="apply_patch"/>\n<user>hi</user>\n',
                              name="p.chatmd", prompt_dir="/tmp")
    assert prompt.shell_runtimes == ()


def test_declared_runtimes_come_first_and_are_not_synthetic() -> None:
    text = ('<shell_access id="dev" extends="builtin:yolo@1"/>\n'
            '<tool name="a" command="ls"/>\n<tool name="b" command="pwd"/>\n'
            '<tool name="sh" type="shell" mode="structured" runtime="dev"/>\n<user>hi</user>\n')
    prompt = load_prompt_text(text, name="p.chatmd", prompt_dir="/tmp")
    assert [(r.id, r.synthetic) for r in prompt.shell_runtimes] == [
        ("dev", False), (LEGACY_RUNTIME_ID, True)]
    compiled, diagnostics = compile_prompt_shell(prompt)
    assert diagnostics == [] and compiled is not None and compiled.manifest is not None
    assert [r["id"] for r in compiled.manifest.payload["runtimes"]] == ["dev", LEGACY_RUNTIME_ID]


def test_the_ir_json_round_trip_keeps_the_synthetic_runtime() -> None:
    prompt = with_compiled_shell(load_prompt_text(LEGACY, name="p.chatmd", prompt_dir="/tmp"))
    data = json.loads(json.dumps(ir_to_json(prompt)))
    (entry,) = data["shell_runtimes"]
    assert entry["id"] == LEGACY_RUNTIME_ID and entry["element"] is None
    assert entry["compiled"]["capabilities"]["sandbox"] == "direct_unsafe"
    assert entry["compiled"]["environment"]["inherit"] == "raw"
    back = ir_from_json(data)
    assert back == prompt
    assert back.shell_runtimes[0].synthetic
    assert back.shell_runtimes[0].compiled == prompt.shell_runtimes[0].compiled


def test_writers_do_not_print_the_synthetic_runtime() -> None:
    prompt = load_prompt_text(LEGACY, name="p.chatmd", prompt_dir="/tmp")
    text = write_prompt(prompt)
    assert "shell_access" not in text and "legacy:custom" not in text
    again = load_prompt_text(text, name="p.chatmd", prompt_dir="/tmp")
    assert again == prompt and len(again.shell_runtimes) == 1


def test_compile_emit_chatmd_adds_no_runtime_element(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "p.chatmd"
    path.write_text(LEGACY, encoding="utf-8")
    assert main(["compile", str(path), "--emit", "chatmd"]) == 0
    out = capsys.readouterr().out
    assert "<shell_access" not in out and "legacy" not in out
    assert '<tool name="x" command="ls" description="List."/>' in out
    assert main(["compile", str(path), "--emit", "ir"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in data["shell_runtimes"]] == [LEGACY_RUNTIME_ID]
    assert data["shell_runtimes"][0]["compiled"]["manifest_sha256"]


def test_script_checks_cope_with_the_synthetic_runtime() -> None:
    text = ('<tool name="x" command="ls"/>\n'
            '<shell_access id="dev" extends="builtin:yolo@1"><policy><rule id="m" action="ask">'
            '<chatml_match script="m"/></rule></policy></shell_access>\n'
            '<script id="m" language="chatml" kind="shell_matcher">\n'
            'let initial_state = 0\n'
            'let match_command event state = '
            'Task.bind(Match.yes("ok"), fun u -> Task.pure(state))\n</script>\n'
            '<user>hi</user>\n')
    result = check_prompt_text(text, name="p.chatmd", prompt_dir="/tmp")
    assert result.prompt is not None
    assert [r.id for r in result.prompt.shell_runtimes] == ["dev", LEGACY_RUNTIME_ID]
    assert [d.code for d in result.diagnostics if d.is_error] == []


def test_the_language_server_copes_with_the_synthetic_runtime(tmp_path: Path) -> None:
    from lsprotocol import types as lsp

    from runtime.lsp.analysis import analyse
    from runtime.lsp.hover import hover
    from runtime.lsp.symbols import symbols

    text = ('<shell_access id="dev" extends="builtin:yolo@1"/>\n' + LEGACY)
    path = str(tmp_path / "p.chatmd")
    analysis = analyse(path, text)
    assert [d for d in analysis.published[path]
            if d.severity == lsp.DiagnosticSeverity.Error] == []
    assert [r.id for r in analysis.prompt.shell_runtimes] == ["dev", LEGACY_RUNTIME_ID]
    names = [s.name for s in symbols(analysis)]
    assert not any("legacy" in name for name in names)  # nothing the user did not write
    assert any("dev" in name for name in names)
    shown = hover(analysis, lsp.Position(line=1, character=2))
    assert shown is not None and "tool" in str(shown.contents)
