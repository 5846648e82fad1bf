"""Interrupting ``chatmdc run`` (a real process, SIGINT): exit 130, completed items kept."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from tests.runtime.driver import loopback as lb
from tests.runtime.driver.support import CHATMDC, events, parses, write
from tests.support import REPO_ROOT

PROMPT = '<config model="m"/>\n<user>Tell me two things</user>\n'


def wait_for(predicate, seconds: float = 20.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


def test_sigint_mid_stream_exits_130_keeping_completed_items(tmp_path: Path) -> None:
    prompt = write(tmp_path / "p.chatmd", PROMPT)
    reply = lb.stream(lb.message_item("the first thing"), lb.message_item("the second"),
                      pause_after=7, pause=30.0)
    env = dict(os.environ, OPENAI_API_KEY="k", PYTHONPATH=str(REPO_ROOT))
    with lb.LoopbackServer([reply]) as server:
        process = subprocess.Popen(
            [*CHATMDC, "run", str(prompt), "--base-url", server.base_url, "--events",
             "ev.jsonl"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        try:
            assert wait_for(lambda: "the first thing" in prompt.read_text())
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=20)
        finally:
            if process.poll() is None:
                process.kill()
    assert process.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err
    text = prompt.read_text()
    assert "RAW|the first thing|RAW" in text and "the second" not in text
    assert not text.endswith("<user>\n\n</user>\n")
    parses(prompt)
    assert events(tmp_path / "ev.jsonl")[-1]["status"] == "interrupted"


def test_sigint_during_a_slow_tool_cancels_it_promptly(tmp_path: Path) -> None:
    """The agent tool's nested request hangs: Ctrl-C ends the run now (not when the tool
    would finish), and the call gets a cancelled output so the file can be continued."""
    write(tmp_path / "sub.chatmd", '<config model="sub"/>\n<system>Slow.</system>\n')
    prompt = write(tmp_path / "p.chatmd", '<config model="m"/>\n'
                   '<tool name="helper" agent="sub.chatmd" local/>\n<user>go</user>\n')
    replies = [lb.calls(lb.call_item("helper", '{"input": "x"}', "c1")),
               lb.Reply(body={"never": "used"}, delay=60.0)]
    env = dict(os.environ, OPENAI_API_KEY="k", PYTHONPATH=str(REPO_ROOT))
    with lb.LoopbackServer(replies) as server:
        process = subprocess.Popen(
            [*CHATMDC, "run", str(prompt), "--base-url", server.base_url], cwd=tmp_path,
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert wait_for(lambda: len(server.requests) == 2)
            started = time.monotonic()
            process.send_signal(signal.SIGINT)
            _, err = process.communicate(timeout=30)
            waited = time.monotonic() - started
        finally:
            if process.poll() is None:
                process.kill()
    assert process.returncode == 130, err
    assert waited < 30  # bounded: far below the 60 s the tool would take
    text = prompt.read_text()
    assert '<tool_call function_name="helper"' in text and "<tool_response" in text
    outputs = list((tmp_path / ".chatmd").glob("*.tool-call-result.*.json"))
    assert len(outputs) == 1 and "cancelled" in outputs[0].read_text()
    parses(prompt)


def test_sigkill_mid_turn_leaves_a_transcript_that_parses(tmp_path: Path) -> None:
    prompt = write(tmp_path / "p.chatmd", PROMPT)
    reply = lb.stream(lb.reasoning_item("plan"), lb.message_item("kept"),
                      lb.message_item("lost"), pause_after=9, pause=30.0)
    env = dict(os.environ, OPENAI_API_KEY="k", PYTHONPATH=str(REPO_ROOT))
    with lb.LoopbackServer([reply]) as server:
        process = subprocess.Popen(
            [*CHATMDC, "run", str(prompt), "--base-url", server.base_url], cwd=tmp_path,
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            assert wait_for(lambda: "RAW|kept|RAW" in prompt.read_text())
            process.kill()
            process.wait(timeout=20)
        finally:
            if process.poll() is None:
                process.kill()
    text = prompt.read_text()
    assert "<reasoning" in text and "lost" not in text
    parses(prompt)
    # the next run continues from what was kept
    prompt.write_text(text + "<user>and?</user>\n")
    with lb.LoopbackServer([lb.text("continued")]) as server:
        done = subprocess.run([*CHATMDC, "run", str(prompt), "--base-url", server.base_url],
                              cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    sent = server.requests[0]["input"]
    assert [item.get("type") for item in sent][-3:] == ["reasoning", "message", "message"]
    assert sent[-2]["content"][0]["text"] == "kept"
