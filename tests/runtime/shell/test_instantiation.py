"""Instantiation errors (spec §6.10), literal secrets, administrative hard deny (§8.3 step 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runtime.shell import shell_runners
from runtime.shell.errors import InstantiationError
from tests.runtime.shell.support import call, error, host_env, open_prompt, runtime, structured_tool


@pytest.mark.parametrize("body, code", [
    ('<environment><pass name="NEEDED" required="true"/></environment>',
     "shell.environment_missing"),
    ('<secrets><from_env name="NEEDED"/></secrets>', "shell.environment_missing"),
    ('<secrets><from_file path="absent.txt"/></secrets>', "shell.secret_file_missing"),
    ('<resolver><executable id="x" path="/nonexistent/x"/></resolver>',
     "shell.executable_unavailable"),
    ('<resolver><executable id="x" path="/bin/echo" sha256="00"/></resolver>',
     "shell.executable_digest_mismatch"),
    ('<policy default="allow"><rule id="r" action="allow"><program_regex value="(("/></rule>'
     '</policy>', "shell.invalid_program_regex"),
])
def test_instantiation_errors(tmp_path: Path, body: str, code: str) -> None:
    with pytest.raises(InstantiationError) as raised:
        open_prompt(tmp_path, runtime(body, policy="" if "<policy" in body else
                                      '<policy default="allow"/>') + structured_tool())
    assert raised.value.code == code


def test_wall_time_none_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InstantiationError) as raised:
        open_prompt(tmp_path, runtime(limits='<limits wall_time="none"/>') + structured_tool())
    assert raised.value.code == "shell.required_limit_disabled"


def test_capability_roots_from_the_environment(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "f").write_text("root")
    caps = ('<capabilities sandbox="preferred"><read path_env="DATA_ROOT"/>'
            '<read path_env="OTHER" optional="true"/></capabilities>')
    session = open_prompt(tmp_path, runtime(caps=caps) + structured_tool(),
                          env=host_env(DATA_ROOT=str(data)))
    assert call(session, "run", program="cat", arguments=[str(data / "f")]).text == "root"
    with pytest.raises(InstantiationError) as raised:
        open_prompt(tmp_path, runtime(caps=caps) + structured_tool())
    assert raised.value.code == "shell.capability_path_missing"


def test_literal_secrets_are_redacted(tmp_path: Path) -> None:
    body = '<secrets replacement="***"><literal value="hunter2"/></secrets>'
    session = open_prompt(tmp_path, runtime(body) + structured_tool())
    assert call(session, "run", program="echo", arguments=["pw hunter2"]).text == "pw ***\n"


def test_administrative_hard_deny(tmp_path: Path) -> None:
    policy = tmp_path / "admin.json"
    policy.write_text(json.dumps({"denied_programs": ["printf"],
                                  "denied_argument_substrings": ["--force"],
                                  "denied_effects": ["write_path"]}))
    env = host_env(OCHAT_SHELL_ADMIN_POLICY=str(policy))
    session = open_prompt(tmp_path, runtime() + structured_tool(), env=env)
    assert error(call(session, "run", program="printf", arguments=["x"]))[0] == "denied"
    assert error(call(session, "run", program="echo", arguments=["--force"]))[0] == "denied"
    code, message = error(call(session, "run", program="touch", arguments=["new"]))
    assert code == "denied" and "write_path" in message
    assert call(session, "run", program="echo", arguments=["ok"]).text == "ok\n"


def test_stdin_limit(tmp_path: Path) -> None:
    text = runtime(limits='<limits wall_time="1s" max_stdin="4B"/>') + structured_tool(
        stdin="optional")
    session = open_prompt(tmp_path, text)
    assert error(call(session, "run", program="cat", arguments=[], stdin="12345"))[0] == (
        "shell.tool_stdin_too_large")


def test_shell_runners_entry_point(tmp_path: Path) -> None:
    path = tmp_path / "p.chatmd"
    path.write_text(runtime() + structured_tool() + "\n<user>hi</user>\n")
    from runtime.shell.host import load_prompt_file

    runners = shell_runners(load_prompt_file(path), workspace=tmp_path, approvals="deny")
    assert set(runners) == {"run"}
    assert runners["run"](json.dumps({"program": "echo", "arguments": ["r"]})) == "r\n"
    assert json.loads(str(runners["run"]("{bad")))["error"]["code"] == "shell.tool_invalid_input"


def test_manifest_authorization(tmp_path: Path) -> None:
    from runtime.shell.authorization import ManifestSummary

    seen: list[ManifestSummary] = []

    def authorize(summary: ManifestSummary) -> bool:
        seen.append(summary)
        return False
    text = '<shell_access id="y" extends="builtin:yolo"/>' + structured_tool(runtime_id="y")
    with pytest.raises(InstantiationError) as raised:
        open_prompt(tmp_path, text, authorize=authorize)
    assert raised.value.code == "shell.manifest_rejected"
    assert seen[0].warnings and "builtin:yolo@1" in seen[0].warnings[0]
    assert seen[0].tools == ("run",) and seen[0].render().startswith("CRITICAL")
    with pytest.raises(InstantiationError) as raised:
        open_prompt(tmp_path, text, authorize=lambda summary: "0" * 64)
    assert raised.value.code == "shell.manifest_grant_mismatch"
    session = open_prompt(tmp_path, text,
                          authorize=lambda summary: summary.manifest_sha256)
    assert call(session, "run", program="echo", arguments=["ok"]).text == "ok\n"
