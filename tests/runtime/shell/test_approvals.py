"""Policy decisions and approvals: grants, scopes, reviewers, durable store (§8.6, §8.7)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from runtime.shell.approvals import ApprovalAnswer, ApprovalRequest
from runtime.shell.executor import ShellSession
from tests.runtime.shell.support import call, error, open_prompt, runtime, structured_tool

ASK = '<policy default="ask"/>'


class Recorder:
    def __init__(self, *answers: bool | ApprovalAnswer) -> None:
        self.answers = list(answers)
        self.requests: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest) -> bool | ApprovalAnswer:
        self.requests.append(request)
        return self.answers.pop(0)


def ask_session(tmp_path: Path, reviewer: Recorder, body: str = "", policy: str = ASK,
                **options: Any) -> ShellSession:
    return open_prompt(tmp_path, runtime(body, policy=policy) + structured_tool(
        rationale="optional"), approvals="ask", ask=reviewer, **options)


def test_deny_beats_allow_and_no_approval_is_asked(tmp_path: Path) -> None:
    policy = ('<policy default="ask"><rule id="ok" action="allow"><any_command/></rule>'
              '<rule id="no" action="deny"><basename value="echo"/></rule></policy>')
    reviewer = Recorder()
    session = ask_session(tmp_path, reviewer, policy=policy)
    code, message = error(call(session, "run", program="echo", arguments=["x"]))
    assert code == "denied" and "no" in message and reviewer.requests == []
    assert call(session, "run", program="printf", arguments=["y"]).text == "y"


def test_approval_request_shows_a_redacted_display_command(tmp_path: Path) -> None:
    reviewer = Recorder(True)
    body = '<secrets><from_env name="KEY"/></secrets>'
    session = ask_session(tmp_path, reviewer, body,
                          env={"PATH": "/usr/bin:/bin", "KEY": "hunter2"})
    outcome = call(session, "run", program="echo", arguments=["pw=hunter2", "a b"],
                   rationale="because hunter2")
    assert outcome.text == "pw=[REDACTED] a b\n"
    shown = reviewer.requests[0]
    assert shown.command == "echo pw=[REDACTED] 'a b'"
    assert shown.rationale == "because [REDACTED]" and shown.policy_reason.startswith("default")


def test_exact_session_grant_is_reused_only_for_the_same_command(tmp_path: Path) -> None:
    reviewer = Recorder(ApprovalAnswer("approve", scope="exact_session"), True)
    session = ask_session(tmp_path, reviewer)
    for _ in range(3):
        assert call(session, "run", program="echo", arguments=["a"]).text == "a\n"
    assert len(reviewer.requests) == 1
    assert call(session, "run", program="echo", arguments=["b"]).text == "b\n"
    assert len(reviewer.requests) == 2


def test_prefix_session_grant_covers_longer_argv(tmp_path: Path) -> None:
    reviewer = Recorder(ApprovalAnswer("approve", scope="prefix_session", prefix=("echo",)))
    body = '<approvals scopes="once,prefix_session"/>'
    session = ask_session(tmp_path, reviewer, body)
    assert call(session, "run", program="echo", arguments=["1"]).text == "1\n"
    assert call(session, "run", program="echo", arguments=["2", "3"]).text == "2 3\n"
    assert len(reviewer.requests) == 1


def test_undeclared_scope_is_a_denial(tmp_path: Path) -> None:
    reviewer = Recorder(ApprovalAnswer("approve", scope="durable_exact"))
    session = ask_session(tmp_path, reviewer)
    code, message = error(call(session, "run", program="echo", arguments=["x"]))
    assert code == "denied" and "durable_exact" in message


def test_durable_grants_survive_a_new_session_and_are_written_atomically(tmp_path: Path) -> None:
    body = '<approvals scopes="once,durable_exact" durable="true"/>'
    grants = tmp_path / "grants.json"
    first = ask_session(tmp_path, Recorder(ApprovalAnswer("approve", scope="durable_exact")),
                        body, grants_path=grants)
    assert call(first, "run", program="echo", arguments=["d"]).text == "d\n"
    data = json.loads(grants.read_text())
    assert len(data["grants"]) == 1 and len(data["grants"][0]["command_hash"]) == 64
    later = Recorder()
    second = ask_session(tmp_path, later, body, grants_path=grants)
    assert call(second, "run", program="echo", arguments=["d"]).text == "d\n"
    assert later.requests == []


def test_host_deny_and_no_reviewer(tmp_path: Path) -> None:
    denied = open_prompt(tmp_path, runtime(policy=ASK) + structured_tool(), approvals="deny")
    assert error(call(denied, "run", program="echo", arguments=[]))[0] == "denied"
    unavailable = open_prompt(tmp_path, runtime(policy=ASK) + structured_tool(), approvals="ask")
    assert error(call(unavailable, "run", program="echo", arguments=[]))[0] == "denied"
    erroring = open_prompt(tmp_path, runtime('<approvals unavailable="error"/>', policy=ASK)
                           + structured_tool(), approvals="ask")
    assert error(call(erroring, "run", program="echo", arguments=[]))[0] == (
        "permission_required")


def test_reviewers_section_with_a_ui_reviewer(tmp_path: Path) -> None:
    body = '<reviewers><reviewer id="human" kind="ui"/></reviewers>'
    reviewer = Recorder(ApprovalAnswer("defer"))
    session = ask_session(tmp_path, reviewer, body)
    code, message = error(call(session, "run", program="echo", arguments=[]))
    assert (code, message) == ("denied", "all configured reviewers deferred")
    rewriting = ask_session(tmp_path, Recorder(
        ApprovalAnswer("rewrite", argv=("printf", "safer")), True), body)
    assert call(rewriting, "run", program="echo", arguments=["x"]).text == "safer"
