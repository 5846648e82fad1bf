"""Environment sanitisation, secret redaction, and the hash-chained audit log (§8.8, §8.12, §8.13)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runtime.commands.chatmdc import main
from runtime.shell.audit import AuditLog, verify
from runtime.shell.environment import build_environment
from runtime.shell.paths import HostDirs
from tests.runtime.shell.support import call, error, host_env, open_prompt, runtime, structured_tool

DIRS = HostDirs("/w", "/p", "/s", "/c", "/h", "/p")


def test_environment_is_sanitised_even_when_raw() -> None:
    host = {"PATH": "relative:/usr/bin::/bin:/usr/bin", "LD_PRELOAD": "x.so", "BASH_ENV": "e",
            "PYTHONPATH": "p", "GIT_DIR": "g", "KEEP": "1", "TERM": "xterm"}
    safe, _ = build_environment({"inherit": "safe"}, host, DIRS, None)
    assert safe["PATH"] == "/usr/bin:/bin" and safe["KEEP"] == "1"
    assert not {"LD_PRELOAD", "BASH_ENV", "PYTHONPATH", "GIT_DIR"} & set(safe)
    assert (safe["TERM"], safe["PAGER"], safe["NO_COLOR"]) == ("dumb", "cat", "1")
    raw, _ = build_environment({"inherit": "raw"}, host, DIRS, None)
    assert "GIT_DIR" in raw and "LD_PRELOAD" not in raw and "PYTHONPATH" not in raw
    empty, _ = build_environment({"inherit": "none"}, host, DIRS, None)
    assert set(empty) == {"PATH", "PAGER", "GIT_PAGER", "TERM", "NO_COLOR"}
    assert empty["PATH"] == "/usr/bin:/bin:/usr/sbin:/sbin"


def test_environment_operations_in_order() -> None:
    ops = [{"type": "set", "name": "A", "value": "1"}, {"type": "set", "name": "AB", "value": "2"},
           {"type": "unset_prefix", "value": "AB"},
           {"type": "path", "prepend": {"base": "workspace", "path": "bin"}},
           {"type": "path_env", "name": "TOOLS", "suffix": "bin", "position": "append"},
           {"type": "pass", "name": "TOKEN", "secret": True}]
    env, secrets = build_environment({"inherit": "none", "operations": ops},
                                     {"TOOLS": "/opt/t", "TOKEN": "s3"}, DIRS, None)
    assert env["A"] == "1" and "AB" not in env and env["TOKEN"] == "s3"
    assert env["PATH"] == "/w/bin:/opt/t/bin" and secrets == ["s3"]


def test_the_command_sees_the_sanitised_environment(tmp_path: Path) -> None:
    text = runtime('<environment inherit="all_sanitized"><set name="MINE" value="v"/>'
                   '</environment>') + structured_tool()
    session = open_prompt(tmp_path, text, env=host_env(LD_PRELOAD="/x.so", KEEP="k"))
    env = dict(line.split("=", 1) for line in call(session, "run", program="env",
                                                     arguments=[]).text.splitlines())
    assert env["MINE"] == "v" and env["KEEP"] == "k" and "LD_PRELOAD" not in env
    assert env["TERM"] == "dumb"


def audited(tmp_path: Path, content: str = "redacted"):  # type: ignore[no-untyped-def]
    body = (f'<environment><pass name="TOKEN" secret="true"/></environment>'
            f'<secrets><from_file path="key.txt"/></secrets>'
            f'<audit format="jsonl" path="audit.jsonl" content="{content}"/>')
    (tmp_path / "key.txt").write_text("  file-secret\n")
    return open_prompt(tmp_path, runtime(body) + structured_tool() + '<tool name="sh" '
                       'type="shell" mode="chain" runtime="r"/>',
                       env=host_env(TOKEN="tok-XYZ"))


def test_secrets_are_redacted_in_output_errors_and_audit(tmp_path: Path) -> None:
    session = audited(tmp_path)
    outcome = call(session, "run", program="sh",
                   arguments=["-c", 'echo "$TOKEN"; echo file-secret >&2'])
    assert outcome.text == "[REDACTED]\n[REDACTED]\n"
    missing = call(session, "run", program="no-such-tok-XYZ", arguments=[])
    assert "tok-XYZ" not in missing.text and "[REDACTED]" in error(missing)[1]
    log = (tmp_path / "audit.jsonl").read_text()
    assert "tok-XYZ" not in log and "file-secret" not in log and "[REDACTED]" in log
    events = [json.loads(line)["event"] for line in log.splitlines()]
    assert events[:4] == ["resolved", "policy_decided", "plan_created", "started"]
    assert "finished" in events and verify(str(tmp_path / "audit.jsonl")).broken_line is None


def test_skipped_pipelines_are_never_audited(tmp_path: Path) -> None:
    session = audited(tmp_path)
    assert call(session, "sh", command="false && echo skipped || echo y").text == "y\n"
    log = (tmp_path / "audit.jsonl").read_text()
    commands = [json.loads(line).get("command") for line in log.splitlines()]
    assert ["echo", "skipped"] not in commands and ["echo", "y"] in commands


def test_metadata_audit_has_no_command(tmp_path: Path) -> None:
    session = audited(tmp_path, "metadata")
    call(session, "run", program="echo", arguments=["hi"])
    records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert records and all("command" not in r for r in records)
    assert all(len(r["command_sha256"]) == 64 for r in records if r["event"] != "output")


def test_tampered_audit_line_is_found(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "a.jsonl"
    log = AuditLog(str(path))
    for index in range(4):
        log.write({"event": "output", "bytes": index})
    assert main(["shell", "audit", "verify", str(path)]) == 0
    assert "4 records" in capsys.readouterr().out
    lines = path.read_text().splitlines()
    lines[2] = lines[2].replace('"bytes":2', '"bytes":7')
    path.write_text("\n".join(lines) + "\n")
    assert verify(str(path)).broken_line == 3
    assert main(["shell", "audit", "verify", str(path)]) == 1
    assert f"{path}:3: broken link" in capsys.readouterr().out
    del lines[2]
    path.write_text("\n".join(lines) + "\n")
    assert verify(str(path)).broken_line == 3
    assert main(["shell", "audit", "verify", str(tmp_path / "missing")]) == 2


def test_sequence_continues_across_writers(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    AuditLog(str(path)).write({"event": "a"})
    AuditLog(str(path)).write({"event": "b"})
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["sequence"] for r in records] == [1, 2]
    assert records[1]["previous_event_sha256"] == records[0]["event_sha256"]


def test_audit_failure_deny_start(tmp_path: Path) -> None:
    (tmp_path / "blocked").mkdir()
    body = '<audit format="jsonl" path="blocked" failure="deny_start"/>'
    session = open_prompt(tmp_path, runtime(body) + structured_tool())
    assert error(call(session, "run", program="echo", arguments=[]))[0] == "audit_unavailable"


def test_rotation_keeps_the_chain_across_files(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    log = AuditLog(str(path), rotate_bytes=600, keep=2)
    for index in range(12):
        log.write({"event": "output", "bytes": index})
    rotated = [tmp_path / "s.jsonl.1", tmp_path / "s.jsonl.2"]
    assert all(p.exists() for p in rotated) and not (tmp_path / "s.jsonl.3").exists()
    current = [json.loads(line) for line in path.read_text().splitlines()]
    previous = [json.loads(line) for line in rotated[0].read_text().splitlines()]
    assert current[0]["previous_event_sha256"] == previous[-1]["event_sha256"]
    assert current[-1]["sequence"] == 12
    assert verify(str(path)).broken_line is None
    assert verify(str(rotated[0])).broken_line is None
    # the oldest kept file's predecessor was dropped
    assert verify(str(rotated[1])).broken_line == 1
    assert verify(str(rotated[1]), continuation=True).broken_line is None


def test_session_audit_goes_to_the_host_path(tmp_path: Path) -> None:
    text = runtime('<audit format="session"/>') + structured_tool()
    session = open_prompt(tmp_path, text, audit_path=tmp_path / "session-audit.jsonl")
    call(session, "run", program="echo", arguments=["x"])
    assert verify(str(tmp_path / "session-audit.jsonl")).records >= 4


def test_deleting_the_first_record_is_detected(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    log = AuditLog(str(path))
    for index in range(3):
        log.write({"event": "output", "bytes": index})
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[1:]) + "\n")
    assert verify(str(path)).broken_line == 1
    assert verify(str(path), continuation=True).broken_line is None
