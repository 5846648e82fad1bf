"""Executable hooks (``shell-hook-json-v1``) run through their worker runtime (spec §8.11)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runtime.shell.errors import InstantiationError
from runtime.shell.resolve import fingerprint
from tests.runtime.shell.support import call, error, open_prompt, runtime, structured_tool

HOOK = """#!/usr/bin/python3
import json, sys
message = json.load(sys.stdin)
payload = message["payload"]
argv = payload.get("argv") or []
kind = message["kind"]
if kind == "reviewer":
    body = {"decision": "deny", "reason": "hook says no"} if "no" in argv else \\
        {"decision": "approve_once"}
elif kind == "before_interceptor":
    body = {"action": "respond", "status": {"exited": 0}, "stdout": "canned", "stderr": ""} \\
        if "canned" in argv else {"action": "continue"}
elif kind == "effect_analyzer":
    body = {"action": "add_effects", "effects": ["network"] if "net" in argv else []}
else:
    body = {"action": "keep"}
print(json.dumps({"version": 1, "request_id": message["request_id"], **body}))
"""

WORKER = runtime(rid="w", policy='<policy default="allow"/>')


def hook_file(tmp_path: Path, text: str = HOOK) -> Path:
    path = tmp_path / "hook.py"
    path.write_text(text)
    path.chmod(0o755)
    return path


def caller(body: str, policy: str = '<policy default="allow"/>') -> str:
    return runtime(body, rid="r", policy=policy) + structured_tool()


def test_executable_reviewer(tmp_path: Path) -> None:
    hook = hook_file(tmp_path)
    body = (f'<reviewers><reviewer id="x" kind="executable" executable="{hook}" '
            'runtime="w"/></reviewers>')
    session = open_prompt(tmp_path, WORKER + caller(body, '<policy default="ask"/>'))
    assert call(session, "run", program="echo", arguments=["yes"]).text == "yes\n"
    assert error(call(session, "run", program="echo", arguments=["no"])) == (
        "denied", "hook says no")


def test_executable_interceptor_and_analyzer(tmp_path: Path) -> None:
    hook = hook_file(tmp_path)
    body = (f'<interceptors><interceptor id="i" phase="before" executable="{hook}" '
            'runtime="w"/></interceptors>'
            f'<effect_analysis><analyzer id="a" kind="executable" executable="{hook}" '
            'runtime="w"/></effect_analysis>')
    session = open_prompt(tmp_path, WORKER + caller(body))
    assert call(session, "run", program="echo", arguments=["canned"]).text == "canned"
    assert call(session, "run", program="echo", arguments=["plain"]).text == "plain\n"
    assert error(call(session, "run", program="echo", arguments=["net"]))[0] == (
        "capability_violation")


def test_a_broken_hook_follows_its_failure_setting(tmp_path: Path) -> None:
    hook = hook_file(tmp_path, "#!/bin/sh\necho not-json\n")
    body = (f'<interceptors><interceptor id="i" phase="before" executable="{hook}" '
            'runtime="w"/></interceptors>')
    strict = open_prompt(tmp_path, WORKER + caller(body))
    code, message = error(call(strict, "run", program="echo", arguments=["x"]))
    assert code == "interceptor_rejected" and "not one JSON object" in message
    lenient = open_prompt(tmp_path, WORKER + caller(body.replace('runtime="w"',
                                                                 'runtime="w" failure="keep"')))
    assert call(lenient, "run", program="echo", arguments=["x"]).text == "x\n"


def test_the_worker_policy_governs_the_hook(tmp_path: Path) -> None:
    hook = hook_file(tmp_path)
    worker = runtime(rid="w", policy='<policy default="deny"/>')
    body = (f'<interceptors><interceptor id="i" phase="before" executable="{hook}" '
            'runtime="w"/></interceptors>')
    session = open_prompt(tmp_path, worker + caller(body))
    assert error(call(session, "run", program="echo", arguments=["x"]))[0] == (
        "interceptor_rejected")


def test_hook_digest_is_pinned(tmp_path: Path) -> None:
    hook = hook_file(tmp_path)
    digest = fingerprint(str(hook), "hook").sha256
    body = (f'<interceptors><interceptor id="i" phase="before" executable="{hook}" '
            f'sha256="{"0" * 64}" runtime="w"/></interceptors>')
    with pytest.raises(InstantiationError) as raised:
        open_prompt(tmp_path, WORKER + caller(body))
    assert raised.value.code == "shell.hook_digest_mismatch"
    good = open_prompt(tmp_path, WORKER + caller(body.replace("0" * 64, digest)))
    hook.write_text(HOOK.replace("canned", "tinned"))
    code, message = error(call(good, "run", program="echo", arguments=["x"]))
    assert code == "interceptor_rejected" and "executable_changed" in message
    assert json.loads(json.dumps(message))


def test_executable_audit_filter(tmp_path: Path) -> None:
    hook = hook_file(tmp_path, HOOK.replace('body = {"action": "keep"}',
                                            'body = {"action": "drop_field", "field": "command"}'))
    body = (f'<audit format="jsonl" path="audit.jsonl"><filter executable="{hook}" '
            'runtime="w"/></audit>')
    session = open_prompt(tmp_path, WORKER + caller(body))
    assert call(session, "run", program="echo", arguments=["x"]).text == "x\n"
    records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert records and all("command" not in r for r in records)
