"""Shell spec §10: the execution items of the conformance checklist (70-89), one test each.

Item 88 names a before-interceptor; interceptors need hooks (not executed by
this implementation, they fail closed at compile time), so the test drives
the same restart through a reviewer's rewrite: the rewritten command is
re-resolved, re-checked and denied.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from runtime.shell.approvals import ApprovalAnswer, ApprovalRequest
from runtime.shell.errors import InstantiationError
from tests.runtime.shell.support import (
    call,
    chain_tool,
    error,
    host_env,
    open_prompt,
    runtime,
    structured_tool,
)

ASK = '<policy default="ask"/>'


def recorder(asked: list[ApprovalRequest]) -> Callable[[ApprovalRequest], bool]:
    def ask(request: ApprovalRequest) -> bool:
        asked.append(request)
        return True
    return ask


def audit_body() -> str:
    return '<audit format="jsonl" path="audit.jsonl"/>'


def audit_commands(tmp_path: Path) -> list[list[str]]:
    lines = (tmp_path / "audit.jsonl").read_text().splitlines()
    return [json.loads(line)["command"] for line in lines if "command" in json.loads(line)]


def test_item_70_structured_arguments_are_literal(tmp_path: Path) -> None:
    session = open_prompt(tmp_path, runtime() + structured_tool(result="structured"))
    outcome = call(session, "run", program="/bin/echo", arguments=["a; rm -rf /"])
    data = json.loads(outcome.text)
    assert data["commands"][0]["argv"] == ["/bin/echo", "a; rm -rf /"]
    assert data["stdout"] == "a; rm -rf /\n"


def test_item_71_fixed_call_with_script_field(tmp_path: Path) -> None:
    session = open_prompt(tmp_path, runtime() + '<tool name="f" type="shell" runtime="r" '
                          'command="echo"/>')
    assert error(call(session, "f", arguments=[], script="x")) == (
        "shell.tool_field_forbidden", "script is not valid for this mode")


def test_item_72_pipeline_without_a_shell(tmp_path: Path) -> None:
    session = open_prompt(tmp_path, runtime() + chain_tool(result="structured"))
    data = json.loads(call(session, "sh", command="printf abc | wc -c").text)
    assert data["stdout"].strip() == "3" and len(data["commands"]) == 2
    assert all("/bin/sh" not in c["argv"] and "sh" not in c["argv"] for c in data["commands"])


@pytest.mark.parametrize("command, offset", [("echo $(id)", 5), ("cat a > b", 6),
                                              ("cat secret > copy", 11), ("sleep 1 &", 8),
                                              ("echo ok |", 0), ("", 0)])
def test_item_73_chain_parse_offsets(tmp_path: Path, command: str, offset: int) -> None:
    session = open_prompt(tmp_path, runtime() + chain_tool())
    code, message = error(call(session, "sh", command=command))
    assert code == "shell.tool_chain_parse" and message.endswith(f"byte offset {offset}")


def test_item_74_skipped_pipelines_are_never_prepared(tmp_path: Path) -> None:
    session = open_prompt(tmp_path, runtime(audit_body()) + chain_tool())
    assert call(session, "sh", command="false && echo x || echo y").text == "y\n"
    commands = audit_commands(tmp_path)
    assert ["echo", "x"] not in commands and ["echo", "y"] in commands


def test_item_75_pipefail(tmp_path: Path) -> None:
    on = open_prompt(tmp_path, runtime(attrs='pipefail="true"') + chain_tool())
    off = open_prompt(tmp_path, runtime() + chain_tool())
    assert call(on, "sh", command="false | true").result.status == ("exited", 1)  # type: ignore[union-attr]
    assert call(off, "sh", command="false | true").result.status == ("exited", 0)  # type: ignore[union-attr]


def test_item_76_deny_wins_and_no_approval_is_requested(tmp_path: Path) -> None:
    asked: list[ApprovalRequest] = []
    policy = ('<policy default="ask"><rule id="a" action="allow"><any_command/></rule>'
              '<rule id="d" action="deny"><any_command/></rule></policy>')
    session = open_prompt(tmp_path, runtime(policy=policy) + structured_tool(), approvals="ask",
                          ask=recorder(asked))
    assert error(call(session, "run", program="echo", arguments=[]))[0] == "denied"
    assert asked == []


def test_item_77_ask_without_reviewer_and_provider_none(tmp_path: Path) -> None:
    session = open_prompt(tmp_path, runtime('<approvals provider="none"/>', policy=ASK)
                          + structured_tool(), approvals="allow")
    assert error(call(session, "run", program="echo", arguments=[]))[0] == "permission_required"


def test_item_78_all_reviewers_defer(tmp_path: Path) -> None:
    body = '<reviewers><reviewer id="a" kind="ui"/><reviewer id="b" kind="ui"/></reviewers>'
    session = open_prompt(tmp_path, runtime(body, policy=ASK) + structured_tool(),
                          approvals="ask", ask=lambda r: ApprovalAnswer("defer"))
    assert error(call(session, "run", program="echo", arguments=[])) == (
        "denied", "all configured reviewers deferred")


def test_item_79_readonly_profile_refuses_reading_outside_before_approval(tmp_path: Path) -> None:
    asked: list[ApprovalRequest] = []
    text = ('<shell_access id="ro" extends="builtin:workspace-readonly"/>'
            + structured_tool(runtime_id="ro"))
    session = open_prompt(tmp_path, text, approvals="ask", ask=recorder(asked))
    assert error(call(session, "run", program="cat", arguments=["/etc/passwd"]))[0] == (
        "capability_violation")
    assert asked == []
    (tmp_path / "notes.txt").write_text("inside")
    assert call(session, "run", program="cat", arguments=["notes.txt"]).text == "inside"


def test_item_80_unknown_program_needs_arbitrary_code(tmp_path: Path) -> None:
    caps = '<capabilities sandbox="preferred"><read path="${workspace}"/></capabilities>'
    session = open_prompt(tmp_path, runtime(caps=caps) + structured_tool())
    assert error(call(session, "run", program="id", arguments=[]))[0] == "capability_violation"


def test_item_81_missing_program(tmp_path: Path) -> None:
    session = open_prompt(tmp_path, runtime() + structured_tool())
    code, message = error(call(session, "run", program="definitely-missing", arguments=[]))
    assert code == "resolution_error" and "definitely-missing" in message


def test_item_82_script_edited_after_instantiation(tmp_path: Path) -> None:
    (tmp_path / "s.sh").write_text("echo one\n")
    session = open_prompt(tmp_path, runtime() + '<tool name="s" type="shell" mode="script" '
                          'runtime="r" script="s.sh" interpreter="/bin/sh"/>')
    assert call(session, "s").text == "one\n"
    (tmp_path / "s.sh").write_text("echo two\n")
    assert error(call(session, "s"))[0] == "script_changed"


def test_item_83_idle_and_wall_timeouts(tmp_path: Path) -> None:
    idle = open_prompt(tmp_path, runtime(limits='<limits wall_time="1s" idle_time="0.2s"/>')
                       + structured_tool())
    assert error(call(idle, "run", program="sleep", arguments=["5"]))[0] == "idle_timed_out"
    wall = open_prompt(tmp_path, runtime(limits='<limits wall_time="0.3s" idle_time="none"/>')
                       + structured_tool())
    outcome = call(wall, "run", program="sh", arguments=["-c", "sleep 5 & echo $! > p; wait"])
    assert error(outcome)[0] == "timed_out"
    pid = int((tmp_path / "p").read_text())
    deadline = time.monotonic() + 1
    while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
        state = Path(f"/proc/{pid}/stat").read_text().split()[2] if Path(
            f"/proc/{pid}/stat").exists() else "Z"
        if state == "Z":
            break
        time.sleep(0.01)
    assert not Path(f"/proc/{pid}").exists() or Path(f"/proc/{pid}/stat").read_text().split()[
        2] == "Z"


def test_item_84_stdout_cap_and_total_output(tmp_path: Path) -> None:
    capped = open_prompt(tmp_path, runtime(limits='<limits wall_time="1s" stdout="10B"/>')
                         + structured_tool(result="structured"))
    data = json.loads(call(capped, "run", program="seq", arguments=["100"]).text)
    assert data["stdout"] == "1\n2\n3\n4\n5\n" and data["stdout_truncated"] is True
    flooded = open_prompt(tmp_path, runtime(limits='<limits wall_time="1s" stdout="10B" '
                                                   'total_output="1KiB"/>') + structured_tool())
    assert error(call(flooded, "run", program="seq", arguments=["10000"]))[0] == (
        "output_limit_exceeded")


def test_item_85_secret_redacted_in_output_and_audit(tmp_path: Path) -> None:
    body = '<environment><pass name="TOKEN" secret="true"/></environment>' + audit_body()
    session = open_prompt(tmp_path, runtime(body) + structured_tool(),
                          env=host_env(TOKEN="very-secret-value"))
    outcome = call(session, "run", program="printenv", arguments=["TOKEN"])
    assert outcome.text == "[REDACTED]\n"
    assert "very-secret-value" not in (tmp_path / "audit.jsonl").read_text()


def test_item_86_nonzero_error(tmp_path: Path) -> None:
    session = open_prompt(tmp_path, runtime() + structured_tool(nonzero="error"))
    outcome = call(session, "run", program="sh", arguments=["-c", "echo out; exit 2"])
    data = json.loads(outcome.text)["error"]
    assert data["code"] == "shell.tool_nonzero" and data["result"] == "out\n"


def test_item_87_structured_result(tmp_path: Path) -> None:
    session = open_prompt(tmp_path, runtime() + structured_tool(result="structured"))
    data = json.loads(call(session, "run", program="echo", arguments=["x"]).text)
    assert {"request_id", "status", "stdout", "stderr", "stdout_truncated", "stderr_truncated",
            "backend", "runtime_id", "manifest_sha256", "commands"} <= set(data)
    assert data["backend"] == "direct-unsafe" and data["runtime_id"] == "r"
    assert data["status"] == {"exited": 0} and len(data["manifest_sha256"]) == 64
    assert data["commands"][0]["argv"] == ["echo", "x"]
    assert len(data["commands"][0]["executable_sha256"]) == 64


def test_item_88_rewrite_is_re_resolved_and_re_checked(tmp_path: Path) -> None:
    policy = ('<policy default="ask"><rule id="no-rm" action="deny"><basename value="rm"/>'
              '</rule></policy>')
    session = open_prompt(tmp_path, runtime(policy=policy) + structured_tool(), approvals="ask",
                          ask=lambda r: ApprovalAnswer("rewrite", argv=("rm", "-rf", "x")))
    code, message = error(call(session, "run", program="echo", arguments=["x"]))
    assert code == "denied" and "no-rm" in message


def test_item_89_required_sandbox_without_a_confining_backend(tmp_path: Path) -> None:
    backends = '<backends merge="replace"><bubblewrap executable="/nonexistent/bwrap"/></backends>'
    caps = '<capabilities sandbox="required"/>'
    with pytest.raises(InstantiationError) as raised:
        open_prompt(tmp_path, runtime(caps=caps, backends=backends) + structured_tool())
    assert raised.value.code == "sandbox_unavailable"
