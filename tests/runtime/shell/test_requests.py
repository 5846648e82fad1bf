"""Input validation and request building for every mode (shell spec §8.1, §8.2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from runtime.shell.executor import ShellSession
from tests.runtime.shell.support import (
    call,
    chain_tool,
    error,
    host_env,
    open_prompt,
    runtime,
    structured_tool,
)


@pytest.fixture()
def session(tmp_path: Path) -> ShellSession:
    tools = (chain_tool() + structured_tool() + structured_tool("piped", stdin="required")
             + '<tool name="fx" type="shell" runtime="r"><command program="printf">'
               '<arg value="%s|"/><secret_arg env="TOKEN" prefix="t="/>'
               '<path_arg path="sub" base="workspace"/></command>'
               '<arguments mode="optional" max_count="2" max_item_bytes="4"/></tool>'
             + '<tool name="none" type="shell" runtime="r" command="printf ok">'
               '</tool>'
             + '<tool name="req" type="shell" runtime="r" rationale="required">'
               '<command program="echo"/><arguments mode="required"/></tool>')
    text = runtime('<environment><pass name="TOKEN" secret="true"/></environment>') + tools
    return open_prompt(tmp_path, text, env=host_env(TOKEN="tok123"))


@pytest.mark.parametrize("payload, code", [
    ("not json", "shell.tool_invalid_input"),
    ("[1]", "shell.tool_invalid_input"),
    ('{"program": "echo", "program": "x", "arguments": []}', "shell.tool_duplicate_input"),
    ('{"program": "echo", "arguments": [], "extra": 1}', "shell.tool_unknown_input"),
    ('{"program": "echo", "arguments": "a"}', "shell.tool_invalid_input"),
    ('{"program": 3, "arguments": []}', "shell.tool_invalid_input"),
    ('{"program": "echo", "arguments": [], "command": "x"}', "shell.tool_field_forbidden"),
    ('{"program": "echo", "arguments": [], "stdin": "x"}', "shell.tool_stdin_forbidden"),
    ('{"arguments": []}', "shell.tool_program_required"),
    ('{"program": "echo"}', "shell.tool_arguments_required"),
    ('{"program": "echo", "arguments": ["a\\u0000b"]}', "shell.tool_invalid_input"),
    ('{"program": "", "arguments": []}', "shell.tool_program_required"),
])
def test_structured_input_errors(session: ShellSession, payload: str, code: str) -> None:
    outcome = session.call("run", payload)
    assert outcome.error_code == code and error(outcome)[0] == code


def test_model_arguments_stay_literal_argv_elements(session: ShellSession) -> None:
    outcome = call(session, "run", program="printf", arguments=["[%s]", "$HOME; rm -rf / *"])
    assert outcome.text == "[$HOME; rm -rf / *]"


def test_stdin_rules(session: ShellSession) -> None:
    assert error(call(session, "piped", program="cat", arguments=[]))[0] == (
        "shell.tool_stdin_required")
    assert call(session, "piped", program="cat", arguments=[], stdin="fed\n").text == "fed\n"


def test_fixed_tool_builds_literal_secret_and_path_arguments(session: ShellSession, tmp_path: Path) -> None:
    outcome = call(session, "fx", arguments=["a;b"])
    assert outcome.text == f"t=[REDACTED]|{tmp_path}/sub|a;b|"
    assert "tok123" not in outcome.text


@pytest.mark.parametrize("arguments, code", [
    (["1", "2", "3"], "shell.tool_too_many_arguments"),
    (["12345"], "shell.tool_argument_too_large"),
])
def test_fixed_argument_bounds(session: ShellSession, arguments: list[str], code: str) -> None:
    assert error(call(session, "fx", arguments=arguments))[0] == code


def test_required_arguments_and_rationale(session: ShellSession) -> None:
    assert error(call(session, "req", arguments=["x"]))[0] == "shell.tool_rationale_required"
    assert error(call(session, "req", rationale="why"))[0] == "shell.tool_arguments_required"
    assert error(call(session, "req", rationale="why", arguments=[]))[0] == (
        "shell.tool_too_few_arguments")
    assert call(session, "req", rationale="why", arguments=["x"]).text == "x\n"


def test_compact_fixed_command(session: ShellSession) -> None:
    assert call(session, "none").text == "ok"
    assert error(call(session, "none", program="x"))[0] == "shell.tool_field_forbidden"


def test_secret_argument_missing_from_the_environment(tmp_path: Path) -> None:
    text = runtime() + ('<tool name="fx" type="shell" runtime="r"><command program="echo">'
                        '<secret_arg env="ABSENT"/></command></tool>')
    session = open_prompt(tmp_path, text)
    assert error(call(session, "fx"))[0] == "shell.tool_secret_missing"


def test_legacy_tool_runs_through_legacy_custom_with_approval(tmp_path: Path) -> None:
    asked: list[str] = []

    def ask(request):  # type: ignore[no-untyped-def]
        asked.append(request.command)
        return True
    session = open_prompt(tmp_path, '<tool name="hello" command="printf hello"/>', approvals="ask",
                          ask=ask)
    outcome = call(session, "hello", arguments=["-x"])
    assert outcome.text.startswith("hello") and asked == ["printf hello -x"]
    assert session.tools["hello"].runtime.id == "legacy:custom"


def test_chain_parse_errors_carry_byte_offsets(session: ShellSession) -> None:
    code, message = error(call(session, "sh", command="é; cat a > b"))
    assert code == "shell.tool_chain_parse" and "byte offset 10" in message
