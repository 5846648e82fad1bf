"""ChatML hooks: matchers, reviewers, before/after interceptors, analyzers, audit filters (§8.11)."""

from __future__ import annotations

import json
from pathlib import Path

from runtime.shell.executor import ShellSession
from tests.runtime.shell.support import call, error, open_prompt, runtime, structured_tool


def script(sid: str, kind: str, entry: str, body: str, initial: str = "0") -> str:
    return (f'<script id="{sid}" language="chatml" kind="{kind}">\n'
            f'let initial_state = {initial}\n'
            f'let {entry} event state = {body}\n</script>\n')


def then(action: str, state: str = "state") -> str:
    return f"Task.bind({action}, fun u -> Task.pure({state}))"


def first_arg_is(value: str) -> str:
    return f'String.equal(Array.get(Shell.argv(event), 1), "{value}")'


def session(tmp_path: Path, scripts: str, body: str, policy: str = '<policy default="allow"/>',
            **options: object) -> ShellSession:
    return open_prompt(tmp_path, scripts + runtime(body, policy=policy) + structured_tool(),
                       **options)  # type: ignore[arg-type]


def test_chatml_matcher_decides_a_rule(tmp_path: Path) -> None:
    matcher = script("m", "shell_matcher", "match_command",
                     "if " + first_arg_is("ok") + " then " + then('Match.yes("ok")')
                     + " else " + then('Match.no("other")'))
    policy = ('<policy default="deny"><rule id="by-script" action="allow">'
              '<chatml_match script="m"/></rule></policy>')
    shell = session(tmp_path, matcher, "", policy)
    assert call(shell, "run", program="echo", arguments=["ok"]).text == "ok\n"
    assert error(call(shell, "run", program="echo", arguments=["no"]))[0] == "denied"


def test_failing_matcher_is_conservative(tmp_path: Path) -> None:
    matcher = script("m", "shell_matcher", "match_command", 'fail("boom")')
    allow = ('<policy default="deny"><rule id="a" action="allow"><chatml_match script="m"/>'
             '</rule></policy>')
    assert error(call(session(tmp_path, matcher, "", allow), "run", program="echo",
                      arguments=["x"]))[0] == "denied"
    deny = ('<policy default="allow"><rule id="d" action="deny"><chatml_match script="m"/>'
            '</rule></policy>')
    assert error(call(session(tmp_path, matcher, "", deny), "run", program="echo",
                      arguments=["x"]))[0] == "denied"


def test_chatml_reviewer_with_session_state(tmp_path: Path) -> None:
    reviewer = script("rv", "shell_reviewer", "review",
                      "if state < 2 then " + then("Review.approve()", "state + 1")
                      + " else " + then('Review.deny("quota")'))
    body = '<reviewers><reviewer id="rv" kind="chatml" script="rv"/></reviewers>'
    shell = session(tmp_path, reviewer, body, '<policy default="ask"/>')
    assert call(shell, "run", program="echo", arguments=["1"]).text == "1\n"
    assert call(shell, "run", program="echo", arguments=["2"]).text == "2\n"
    assert error(call(shell, "run", program="echo", arguments=["3"])) == ("denied", "quota")


def test_reviewer_scope_outside_the_declared_scopes_is_denied(tmp_path: Path) -> None:
    reviewer = script("rv", "shell_reviewer", "review", then('Review.approve_for("durable_exact")'))
    body = '<reviewers><reviewer id="rv" kind="chatml" script="rv"/></reviewers>'
    shell = session(tmp_path, reviewer, body, '<policy default="ask"/>')
    assert error(call(shell, "run", program="echo", arguments=[]))[0] == "denied"


def test_before_interceptor_respond_and_rewrite(tmp_path: Path) -> None:
    before = script("b", "shell_before_interceptor", "before",
                    "if " + first_arg_is("cached") + " then "
                    + then('Intercept.respond("from cache", "")')
                    + " else if " + first_arg_is("danger") + " then "
                    + then('Intercept.rewrite(["rm", "-f", "x"])')
                    + " else " + then("Intercept.continue()"))
    body = '<interceptors><interceptor id="b" phase="before" script="b"/></interceptors>'
    policy = ('<policy default="allow"><rule id="no-rm" action="deny"><basename value="rm"/>'
              '</rule></policy>')
    shell = open_prompt(tmp_path, before + runtime(body, policy=policy)
                        + structured_tool(result="structured"))
    data = json.loads(call(shell, "run", program="echo", arguments=["cached"]).text)
    assert data["stdout"] == "from cache" and data["commands"][0]["intercepted_by"] == "b"
    assert data["commands"][0]["executable_sha256"] == ""
    # checklist item 88: the rewritten command is re-resolved, re-checked and denied
    code, message = error(call(shell, "run", program="echo", arguments=["danger"]))
    assert code == "denied" and "no-rm" in message
    assert json.loads(call(shell, "run", program="echo", arguments=["x"]).text)["stdout"] == "x\n"


def test_two_actions_fail_the_hook(tmp_path: Path) -> None:
    before = script("b", "shell_before_interceptor", "before",
                    "Task.bind(Intercept.continue(), fun u -> "
                    + then('Intercept.reject("x")') + ")")
    body = '<interceptors><interceptor id="b" phase="before" script="b"/></interceptors>'
    code, message = error(call(session(tmp_path, before, body), "run", program="echo",
                               arguments=[]))
    assert code == "interceptor_rejected" and "exactly one terminal action" in message


def test_after_interceptor_replaces_or_withholds(tmp_path: Path) -> None:
    after = script("a", "shell_after_interceptor", "after",
                   'if String.contains(event.stdout, "secret") then '
                   + then('Result.reject_disclosure("not shown")')
                   + " else " + then('Result.replace(String.to_upper(event.stdout), "")'))
    body = '<interceptors><interceptor id="a" phase="after" script="a"/></interceptors>'
    shell = session(tmp_path, after, body)
    assert call(shell, "run", program="echo", arguments=["hi"]).text == "HI\n"
    assert error(call(shell, "run", program="echo", arguments=["secret"])) == (
        "interceptor_rejected", "interceptor a: not shown")


def test_effect_analyzer_adds_effects_checked_against_capabilities(tmp_path: Path) -> None:
    analyzer = script("e", "shell_effect_analyzer", "analyze",
                      "if " + first_arg_is("net") + " then " + then("Effect.network()")
                      + " else " + then('Effect.read_path("/etc")'))
    body = '<effect_analysis><analyzer id="e" script="e"/></effect_analysis>'
    shell = session(tmp_path, analyzer, body)
    code, message = error(call(shell, "run", program="echo", arguments=["net"]))
    assert code == "capability_violation" and "network" in message
    assert error(call(shell, "run", program="echo", arguments=["x"]))[0] == (
        "capability_violation")


def test_audit_filter_drops_a_field_and_cannot_drop_protected_ones(tmp_path: Path) -> None:
    audit_filter = script("f", "shell_audit_filter", "filter",
                          then('Audit.drop_field("command")'))
    body = ('<audit format="jsonl" path="audit.jsonl"><filter script="f"/></audit>')
    shell = session(tmp_path, audit_filter, body)
    assert call(shell, "run", program="echo", arguments=["x"]).text == "x\n"
    records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert records and all("command" not in r for r in records)
    protected = script("f", "shell_audit_filter", "filter",
                       then('Audit.drop_field("request_id")'))
    strict = session(tmp_path, protected, body.replace('path="audit.jsonl"',
                                                       'path="b.jsonl" failure="deny_start"'))
    assert error(call(strict, "run", program="echo", arguments=["x"]))[0] == "audit_unavailable"
