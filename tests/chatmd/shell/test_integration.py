"""The shell layer inside the toolchain: chatmdc check, compile --emit ir/request, shell explain."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from chatcommon.diagnostics import DiagnosticError
from chatmd.declarations.shell_validation import ShellDefinitions
from chatmd.frontend import check_prompt, check_prompt_text, load_prompt
from chatmd.ir import ShellTool
from chatmd.ir_json import ir_from_json
from chatmd.shell.integration import with_compiled_shell
from runtime.commands.chatmdc import main
from tests.support import REPO_ROOT

CLEAN = """\
<shell_access id="open" extends="builtin:yolo@1"><limits wall_time="10s"/></shell_access>
<shell_access id="dev" extends="open"><capabilities network="false"/></shell_access>
<tool name="sh" type="shell" mode="structured" runtime="dev" description="Run one program."/>
<tool name="status" command="git status" description="Show the status."/>
<moderator_runtime shell_runtime="dev"/>
<user>hi</user>
"""

REFUSED = """\
<shell_access id="dev" extends="builtin:workspace-development@1">
  <capabilities network="true"/>
  <backends><seatbelt when="any"/></backends>
</shell_access>
<tool name="sh" type="shell" mode="structured" runtime="dev"/>
<user>hi</user>
"""


def prompt_file(tmp_path: Path, text: str, name: str = "prompt.chatmd") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_check_reports_declaration_and_compile_diagnostics(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    path = prompt_file(tmp_path, REFUSED)
    assert main(["check", "--format", "json", str(path)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [(d["code"], d["line"]) for d in report["diagnostics"]] == [
        ("shell.unsupported_feature", 3)]
    assert "shell.backend.seatbelt.v1" in report["diagnostics"][0]["message"]
    assert main(["check", str(prompt_file(tmp_path, CLEAN, "clean.chatmd"))]) == 0


def test_an_invalid_runtime_stops_the_shell_layer_without_follow_on_errors() -> None:
    result = check_prompt_text('<shell_access id="r"><wat/></shell_access>\n'
                               '<tool name="t" type="shell" mode="chain" runtime="r"/>\n'
                               '<moderator_runtime shell_runtime="r"/>')
    assert [d.code for d in result.diagnostics] == ["shell.unexpected_text"]


def test_compile_emits_the_compiled_manifest_in_the_ir(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    path = prompt_file(tmp_path, CLEAN)
    assert main(["compile", str(path), "--emit", "ir"]) == 0
    data = json.loads(capsys.readouterr().out)
    runtimes = {r["id"]: r["compiled"] for r in data["shell_runtimes"]}
    # The prompt's legacy <tool name command/> brings the synthetic legacy:custom (§5.3).
    assert set(runtimes) == {"open", "dev", "legacy:custom"}
    assert runtimes["legacy:custom"]["capabilities"]["sandbox"] == "direct_unsafe"
    digest = runtimes["dev"]["manifest_sha256"]
    assert len(digest) == 64 and runtimes["open"]["manifest_sha256"] == digest
    assert runtimes["dev"]["resolved_profile"] == "builtin:yolo@1"
    assert runtimes["dev"]["capabilities"]["network"] is False
    assert runtimes["dev"]["limits"]["wall_time"] == 10.0
    (shell_tool,) = [t for t in data["tools"] if t["node"] == "shell"]
    compiled = shell_tool["compiled"]
    assert compiled["runtime"] == "dev" and compiled["manifest_sha256"] == digest
    assert compiled["definition"]["name"] == "sh"
    assert ir_from_json(data) == load_prompt(path)


def test_compiled_records_survive_the_ir_json_round_trip(tmp_path: Path) -> None:
    from chatmd.ir_json import ir_to_json

    prompt = with_compiled_shell(load_prompt(prompt_file(tmp_path, CLEAN)))
    back = ir_from_json(json.loads(json.dumps(ir_to_json(prompt))))
    assert back == prompt
    assert [r.compiled for r in back.shell_runtimes] == [r.compiled for r in prompt.shell_runtimes]
    assert all(r.compiled is not None for r in back.shell_runtimes)


def test_with_compiled_shell_refuses_a_prompt_that_does_not_compile(tmp_path: Path) -> None:
    result = check_prompt(prompt_file(tmp_path, REFUSED), checks=())
    assert result.prompt is not None
    with pytest.raises(DiagnosticError) as error:
        with_compiled_shell(result.prompt)
    assert error.value.code == "shell.unsupported_feature"


def test_requests_use_the_generated_shell_tool_definitions(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    path = prompt_file(tmp_path, CLEAN)
    assert main(["compile", str(path), "--emit", "request"]) == 0
    request = json.loads(capsys.readouterr().out)
    (shell,) = [tool for tool in request["tools"] if tool["name"] == "sh"]
    assert "one executable directly" in shell["description"]
    assert shell["description"].endswith("Additional tool guidance: Run one program.")
    assert shell["parameters"]["required"] == ["program", "arguments"]


def test_the_definer_refuses_an_invalid_tool() -> None:
    result = check_prompt_text('<tool name="t" type="shell" mode="chain" runtime="r" '
                               'stdin="maybe"/>', checks=())
    assert result.has_errors
    from chatmd.parser import parse_text
    from chatmd.provenance import Provenance

    element = parse_text('<tool name="t" type="shell" mode="chain" runtime="r" '
                         'stdin="maybe"/>').nodes[0]
    tool = ShellTool("t", "r", element, Provenance("<prompt>", 1, 1, ".", "."))  # type: ignore[arg-type]
    with pytest.raises(DiagnosticError) as error:
        ShellDefinitions().definition(tool)
    assert error.value.code == "shell.tool_invalid_attribute"


def test_explain_prints_the_merged_runtime(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    path = prompt_file(tmp_path, CLEAN)
    assert main(["shell", "explain", str(path), "dev"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"runtime dev, declared at {path}:2:1")
    assert "built from: dev <- open <- builtin:yolo@1 <- defaults" in out
    assert "set by dev" in out and "set by open" in out


def test_explain_a_refused_runtime_shows_why(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    path = prompt_file(tmp_path, REFUSED)
    assert main(["shell", "explain", str(path)]) == 1
    out = capsys.readouterr().out
    assert "NOT SUPPORTED" in out and "shell.unsupported_feature" in out


def test_explain_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = prompt_file(tmp_path, CLEAN)
    assert main(["shell", "explain", str(path), "nope"]) == 2
    assert "no runtime 'nope'" in capsys.readouterr().err
    assert main(["shell", "explain", str(tmp_path / "missing.chatmd")]) == 2
    broken = prompt_file(tmp_path, '<shell_access id="x" foo="1"/>', "broken.chatmd")
    assert main(["shell", "explain", str(broken)]) == 1
    assert "shell.unknown_attribute" in capsys.readouterr().err


def test_admin_ceilings_from_the_environment(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"allow_yolo": False}), encoding="utf-8")
    monkeypatch.setenv("OCHAT_SHELL_ADMIN_POLICY", str(policy))
    result = check_prompt(prompt_file(tmp_path, CLEAN))
    assert sorted(d.code for d in result.diagnostics) == ["shell.admin_yolo_denied",
                                                          "shell.admin_yolo_denied"]
    policy.write_text("{", encoding="utf-8")
    result = check_prompt(prompt_file(tmp_path, CLEAN))
    assert [d.code for d in result.diagnostics] == ["shell.admin_policy_load_failed"]


def test_prompts_without_shell_declarations_never_load_the_shell_layer(tmp_path: Path) -> None:
    path = prompt_file(tmp_path, "<system>s</system>\n<user>hi</user>\n")
    program = ("import sys; from chatmd.frontend import check_prompt; "
               f"assert not check_prompt({str(path)!r}).diagnostics; "
               "print(sorted(m for m in sys.modules if m.startswith('chatmd.shell.')))")
    output = subprocess.run([sys.executable, "-c", program], cwd=REPO_ROOT,
                            capture_output=True, text=True, check=True)
    assert output.stdout.strip() == "[]"
