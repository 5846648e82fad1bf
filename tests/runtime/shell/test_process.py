"""Real pipelines, stdin, timeouts that kill whole process groups, output caps (spec §8.2, §8.9)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from runtime.shell.executor import ShellSession
from tests.runtime.shell.support import (
    call,
    chain_tool,
    error,
    open_prompt,
    runtime,
    structured_tool,
)


def session_with(tmp_path: Path, limits: str = '<limits wall_time="1s" idle_time="1s"/>',
                 attrs: str = "") -> ShellSession:
    text = runtime(limits=limits, attrs=attrs) + chain_tool(stdin="optional") + structured_tool(
        result="structured")
    return open_prompt(tmp_path, text)


def dead(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as handle:
            return any(line.startswith("State:") and "Z" in line for line in handle)
    except FileNotFoundError:
        return True


def test_sequences_and_conditionals(tmp_path: Path) -> None:
    session = session_with(tmp_path)
    assert call(session, "sh", command="false && echo x || echo y").text == "y\n"
    assert call(session, "sh", command="true && echo a ; echo b").text == "b\n"
    assert call(session, "sh", command="true || echo no").text == ""


def test_pipeline_connects_stages_and_feeds_stdin_to_the_first(tmp_path: Path) -> None:
    session = session_with(tmp_path)
    outcome = call(session, "sh", command="cat | tr a-z A-Z | wc -c", stdin="hello\n")
    assert outcome.text.strip() == "6"
    # later pipelines get empty stdin
    assert call(session, "sh", command="true; cat", stdin="ignored").text == ""


def test_pipefail(tmp_path: Path) -> None:
    plain = session_with(tmp_path)
    failing = session_with(tmp_path, attrs='pipefail="true"')
    text = json.dumps({"program": "sh", "arguments": ["-c", "exit 0"]})
    assert plain.call("run", text).result is not None
    assert plain.call("sh", '{"command": "false | true"}').result.status == ("exited", 0)  # type: ignore[union-attr]
    assert failing.call("sh", '{"command": "false | true"}').result.status == ("exited", 1)  # type: ignore[union-attr]


def test_stderr_of_every_stage_is_collected_in_order(tmp_path: Path) -> None:
    session = session_with(tmp_path)
    outcome = call(session, "sh", command="sh -c 'sleep 0.05; echo first >&2' | "
                                          "sh -c 'echo second >&2'")
    assert outcome.result is not None
    assert outcome.result.stderr == "first\nsecond\n"


def test_wall_timeout_kills_a_term_ignoring_process_and_its_children(tmp_path: Path) -> None:
    session = session_with(tmp_path, '<limits wall_time="0.5s" idle_time="none"/>')
    script = ('trap "" TERM; (trap "" TERM; sleep 30) & echo $! > child.pid; '
              'echo $$ > parent.pid; sleep 30')
    outcome = call(session, "run", program="sh", arguments=["-c", script])
    assert error(outcome)[0] == "timed_out"
    for name in ("child.pid", "parent.pid"):
        pid = int((tmp_path / name).read_text())
        for _ in range(100):
            if dead(pid):
                break
            time.sleep(0.01)
        assert dead(pid), f"{name} survived"


def test_idle_timeout_kills_a_silent_process(tmp_path: Path) -> None:
    session = session_with(tmp_path, '<limits wall_time="1s" idle_time="0.3s"/>')
    outcome = call(session, "run", program="sh", arguments=["-c", "echo hi; sleep 5"])
    assert error(outcome)[0] == "idle_timed_out"


def test_output_caps_truncate_and_keep_draining(tmp_path: Path) -> None:
    session = session_with(tmp_path, '<limits wall_time="1s" stdout="100B" stderr="10B" '
                                     'total_output="1MiB"/>')
    outcome = call(session, "run", program="sh",
                   arguments=["-c", "head -c 200000 /dev/zero | tr '\\0' a; echo err-long >&2"])
    assert outcome.result is not None
    data = json.loads(outcome.text)
    assert data["stdout"] == "a" * 100 and data["stdout_truncated"] is True
    assert data["stderr"] == "err-long\n"[:10] and data["stderr_truncated"] is False
    assert data["status"] == {"exited": 0}


def test_total_output_aborts_the_request(tmp_path: Path) -> None:
    session = session_with(tmp_path, '<limits wall_time="1s" stdout="100B" total_output="64KiB"/>')
    outcome = call(session, "run", program="sh", arguments=["-c", "yes flood"])
    assert error(outcome)[0] == "output_limit_exceeded"


def test_terminal_sequences_and_control_bytes_are_removed(tmp_path: Path) -> None:
    session = session_with(tmp_path)
    outcome = call(session, "run", program="printf",
                   arguments=["\\033[31mred\\033[0m\\007\\tok\\001\\n\\377"])
    assert outcome.result is not None
    assert outcome.result.stdout == "red\tok\n\ufffd"


def test_spawn_error_for_a_missing_interpreter_is_a_tool_error(tmp_path: Path) -> None:
    script = tmp_path / "bad.sh"
    script.write_text("#!/nonexistent/interpreter\n")
    script.chmod(0o755)
    session = session_with(tmp_path)
    assert error(call(session, "run", program=str(script), arguments=[]))[0] == "spawn_error"


def test_resource_limits_apply_in_the_child(tmp_path: Path) -> None:
    session = session_with(tmp_path, '<limits wall_time="1s" file_size="1KiB" open_files="20"/>')
    outcome = call(session, "run", program="sh",
                   arguments=["-c", "ulimit -n; head -c 5000 /dev/zero > big; echo $?"])
    assert outcome.result is not None
    lines = outcome.result.stdout.split()
    assert lines[0] == "20" and lines[-1] != "0"
    assert os.path.getsize(tmp_path / "big") <= 1024


def test_background_children_left_behind_are_killed_when_the_stages_exit(tmp_path: Path) -> None:
    session = session_with(tmp_path, '<limits wall_time="1s" idle_time="none"/>')
    outcome = call(session, "run", program="sh",
                   arguments=["-c", "sleep 30 & echo $! > bg.pid; echo done"])
    assert outcome.result is not None and outcome.result.stdout == "done\n"
    pid = int((tmp_path / "bg.pid").read_text())
    for _ in range(100):
        if dead(pid):
            break
        time.sleep(0.01)
    assert dead(pid)
