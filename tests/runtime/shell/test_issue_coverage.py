"""Issue 14 lines that had no test of their own: preparation before spawning, later
pipelines' stdin, scopes on the executable reviewer path, the audit failure policies."""

from __future__ import annotations

import json
from pathlib import Path

from tests.runtime.shell.support import (
    call,
    chain_tool,
    error,
    open_prompt,
    runtime,
    structured_tool,
)
from tests.runtime.shell.test_exec_hooks import WORKER, hook_file


def test_every_stage_is_prepared_before_any_stage_starts(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    session = open_prompt(tmp_path, runtime() + chain_tool())
    code, message = error(call(session, "sh", command=f"touch {marker} | no-such-program-x1"))
    assert code == "resolution_error" and "no-such-program-x1" in message
    assert not marker.exists()  # the first stage never started
    deny_wc = ('<policy default="allow"><rule id="no-wc" action="deny"><basename value="wc"/>'
               '</rule></policy>')
    strict = open_prompt(tmp_path, runtime(policy=deny_wc) + chain_tool())
    assert error(call(strict, "sh", command=f"touch {marker} | wc -c"))[0] == "denied"
    assert not marker.exists()


def test_only_the_first_pipeline_reads_the_tool_stdin(tmp_path: Path) -> None:
    session = open_prompt(tmp_path, runtime() + chain_tool(stdin="optional",
                                                           result="structured"))
    data = json.loads(call(session, "sh", command="cat; wc -c", stdin="hello").text)
    assert data["stdout"].strip() == "0"  # the second pipeline got empty stdin
    first = json.loads(call(session, "sh", command="wc -c", stdin="hello").text)
    assert first["stdout"].strip() == "5"


SCOPED_HOOK = """#!/usr/bin/python3
import json, sys
message = json.load(sys.stdin)
body = {"decision": "approve_scope", "scope": "durable_exact"}
print(json.dumps({"version": 1, "request_id": message["request_id"], **body}))
"""


def test_an_executable_reviewer_cannot_grant_an_undeclared_scope(tmp_path: Path) -> None:
    hook = hook_file(tmp_path, SCOPED_HOOK)
    body = (f'<reviewers><reviewer id="x" kind="executable" executable="{hook}" '
            'runtime="w"/></reviewers><approvals scopes="once,exact_session"/>')
    session = open_prompt(tmp_path, WORKER + runtime(body, policy='<policy default="ask"/>')
                          + structured_tool())
    code, message = error(call(session, "run", program="echo", arguments=["x"]))
    assert code == "denied" and "durable_exact" in message


def _filter_failing_on(event: str) -> str:
    """An audit filter that fails (drops a protected field) on one event only."""
    return ('<script id="f" language="chatml" kind="shell_audit_filter">\n'
            'let initial_state = 0\n'
            f'let filter event state = if event.event == "{event}" then '
            'Task.bind(Audit.drop_field("sequence"), fun u -> Task.pure(state)) else '
            'Task.bind(Audit.keep(), fun u -> Task.pure(state))\n</script>\n')


def _audited(tmp_path: Path, failure: str, event: str) -> tuple[str, str]:
    body = f'<audit format="jsonl" path="audit.jsonl" failure="{failure}"><filter script="f"/>' \
           '</audit>'
    marker = tmp_path / f"ran-{failure}-{event}"
    session = open_prompt(tmp_path, _filter_failing_on(event) + runtime(body) + chain_tool())
    outcome = call(session, "sh", command=f"touch {marker}")
    ran = "ran" if marker.exists() else "not run"
    return (error(outcome)[0] if outcome.error_code else "ok", ran)


def test_audit_failure_policies_after_the_process_started(tmp_path: Path) -> None:
    # a failure on "finished" (the process already ran)
    assert _audited(tmp_path, "continue", "finished") == ("ok", "ran")
    assert _audited(tmp_path, "deny_start", "finished") == ("ok", "ran")
    assert _audited(tmp_path, "terminate", "finished") == ("audit_unavailable", "ran")


def test_audit_failure_policies_before_the_process_starts(tmp_path: Path) -> None:
    # a failure on "policy_decided" (nothing started yet)
    assert _audited(tmp_path, "continue", "policy_decided") == ("ok", "ran")
    assert _audited(tmp_path, "deny_start", "policy_decided") == ("audit_unavailable",
                                                                 "not run")
    assert _audited(tmp_path, "terminate", "policy_decided") == ("audit_unavailable",
                                                                "not run")
