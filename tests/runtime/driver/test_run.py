"""``chatmdc run`` end to end: the real CLI, the real openai client, the loopback server."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.runtime.driver import loopback as lb
from tests.runtime.driver.support import events, names, parses, run_inprocess, write

PROMPT = '<config model="gpt-test"/>\n<system>Be brief.</system>\n<user>Hello</user>\n'
Capsys = pytest.CaptureFixture[str]


def run(capsys: Capsys, server: lb.LoopbackServer, *args: str):  # type: ignore[no-untyped-def]
    return run_inprocess(capsys, ["run", *args, "--base-url", server.base_url])


def test_a_plain_answer_is_streamed_and_appended(tmp_path: Path, capsys: Capsys) -> None:
    prompt = write(tmp_path / "p.chatmd", PROMPT)
    with lb.LoopbackServer([lb.text("Hi there, friend.")]) as server:
        ran = run(capsys, server, str(prompt), "--events", "ev.jsonl")
    assert ran.code == 0, ran.err
    assert ran.out == "Hi there, friend.\n"
    text = prompt.read_text()
    assert text.startswith(PROMPT)
    assert text.endswith("RAW|Hi there, friend.|RAW</assistant>\n<user>\n\n</user>\n")
    items = parses(prompt).items
    assert items[-2].kind == "assistant"
    body = server.requests[0]
    assert body["model"] == "gpt-test" and body["stream"] is True
    assert [m["role"] for m in body["input"]] == ["system", "user"]
    log = events(tmp_path / "ev.jsonl")
    assert names(log) == ["run_started", "request_sent", "item_appended", "run_finished"]
    assert log[-1]["status"] == "finished" and log[-1]["exit_code"] == 0
    assert log[2]["type"] == "message" and log[2]["role"] == "assistant"


def test_rerunning_continues_the_conversation(tmp_path: Path, capsys: Capsys) -> None:
    prompt = write(tmp_path / "p.chatmd", PROMPT)
    with lb.LoopbackServer([lb.text("first answer"), lb.text("second answer")]) as server:
        assert run(capsys, server, str(prompt)).code == 0
        nothing = run(capsys, server, str(prompt))
        assert nothing.code == 2 and "nothing to send" in nothing.err
        prompt.write_text(prompt.read_text().replace("<user>\n\n</user>",
                                                     "<user>And then?</user>"))
        assert run(capsys, server, str(prompt)).code == 0
    second = server.requests[1]["input"]
    assert [item.get("role") for item in second] == ["system", "user", "assistant", "user"]
    assert second[2]["content"][0]["text"] == "first answer"
    assert second[3]["content"][0]["text"] == "And then?"
    text = prompt.read_text()
    assert text.count("<assistant") == 2 and text.endswith("<user>\n\n</user>\n")
    parses(prompt)


def test_output_is_created_as_a_copy_and_prompt_left_alone(tmp_path: Path,
                                                           capsys: Capsys) -> None:
    prompt = write(tmp_path / "p.chatmd", PROMPT)
    with lb.LoopbackServer([lb.text("copied")]) as server:
        ran = run(capsys, server, str(prompt), "--output", "out.chatmd")
    assert ran.code == 0, ran.err
    assert prompt.read_text() == PROMPT
    assert (tmp_path / "out.chatmd").read_text().startswith(PROMPT)
    assert "RAW|copied|RAW" in (tmp_path / "out.chatmd").read_text()


def test_prompt_errors_exit_1_and_send_nothing(tmp_path: Path, capsys: Capsys) -> None:
    prompt = write(tmp_path / "p.chatmd", "<user>unclosed\n")
    with lb.LoopbackServer([lb.text("never")]) as server:
        ran = run(capsys, server, str(prompt))
    assert ran.code == 1 and server.requests == []
    assert "error[" in ran.err and "p.chatmd:" in ran.err


def test_json_format_reports_prompt_errors_as_json(tmp_path: Path, capsys: Capsys) -> None:
    prompt = write(tmp_path / "p.chatmd", "<user>unclosed\n")
    with lb.LoopbackServer([]) as server:
        ran = run(capsys, server, str(prompt), "--format", "json")
    assert ran.code == 1
    import json

    result = json.loads(ran.out)
    assert result["status"] == "failed" and result["diagnostics"][0]["code"].startswith("chatmd.")


def test_missing_key_exits_2_before_sending(tmp_path: Path, capsys: Capsys,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    prompt = write(tmp_path / "p.chatmd", PROMPT)
    with lb.LoopbackServer([lb.text("never")]) as server:
        ran = run(capsys, server, str(prompt))
    assert ran.code == 2 and server.requests == []
    assert "OPENAI_API_KEY" in ran.err
    assert prompt.read_text() == PROMPT


def test_unreadable_prompt_and_bad_flags_exit_2(tmp_path: Path, capsys: Capsys) -> None:
    with lb.LoopbackServer([]) as server:
        assert run(capsys, server, "missing.chatmd").code == 2
        assert run(capsys, server, "missing.chatmd", "--max-turns", "0").code == 2
        prompt = write(tmp_path / "p.chatmd", PROMPT)
        assert run(capsys, server, str(prompt), "--workspace", "nowhere").code == 2
    assert server.requests == []


def test_429_then_200_finishes_and_logs_the_retry(tmp_path: Path, capsys: Capsys) -> None:
    prompt = write(tmp_path / "p.chatmd", PROMPT)
    replies = [lb.status(429, "rate limited", **{"retry-after-ms": "5"}), lb.text("made it")]
    with lb.LoopbackServer(replies) as server:
        ran = run(capsys, server, str(prompt), "--events", "ev.jsonl")
    assert ran.code == 0, ran.err
    log = events(tmp_path / "ev.jsonl")
    retry = [event for event in log if event["event"] == "retry"]
    assert len(retry) == 1 and retry[0]["attempt"] == 2
    assert "RAW|made it|RAW" in prompt.read_text()


def test_400_exits_4_naming_status_and_server_text(tmp_path: Path, capsys: Capsys) -> None:
    prompt = write(tmp_path / "p.chatmd", PROMPT)
    with lb.LoopbackServer([lb.status(400, "Unsupported parameter: temperature")]) as server:
        ran = run(capsys, server, str(prompt), "--events", "ev.jsonl")
    assert ran.code == 4
    assert "HTTP 400" in ran.err and "Unsupported parameter: temperature" in ran.err
    assert prompt.read_text() == PROMPT  # nothing completed, no placeholder
    error = [event for event in events(tmp_path / "ev.jsonl") if event["event"] == "error"]
    assert error[0]["kind"] == "model_api" and error[0]["status"] == 400


def test_retries_exhausted_exit_4(tmp_path: Path, capsys: Capsys) -> None:
    prompt = write(tmp_path / "p.chatmd", PROMPT)
    replies = [lb.status(500, "boom", **{"retry-after-ms": "1"})] * 2
    with lb.LoopbackServer(replies) as server:
        ran = run(capsys, server, str(prompt), "--max-retries", "1")
    assert ran.code == 4 and "HTTP 500: boom" in ran.err and len(server.requests) == 2


def test_dropped_connection_keeps_completed_items(tmp_path: Path, capsys: Capsys) -> None:
    prompt = write(tmp_path / "p.chatmd", PROMPT)
    reply = lb.stream(lb.reasoning_item("plan"), lb.message_item("part one"),
                      lb.message_item("never finished"), drop_after=9)
    with lb.LoopbackServer([reply]) as server:
        ran = run(capsys, server, str(prompt))
    assert ran.code == 4 and "mid-stream" in ran.err
    text = prompt.read_text()
    assert "<reasoning" in text and "RAW|part one|RAW" in text
    assert "never finished" not in text and "<user>\n\n</user>" not in text
    parses(prompt)


def test_no_stream_sends_blocking_requests(tmp_path: Path, capsys: Capsys) -> None:
    prompt = write(tmp_path / "p.chatmd", PROMPT)
    with lb.LoopbackServer([lb.blocking(lb.message_item("blocking answer"))]) as server:
        ran = run(capsys, server, str(prompt), "--no-stream")
    assert ran.code == 0, ran.err
    assert "stream" not in server.requests[0] or server.requests[0]["stream"] is False
    assert ran.out == "blocking answer\n"
    assert "RAW|blocking answer|RAW" in prompt.read_text()


def test_json_format_prints_one_result(tmp_path: Path, capsys: Capsys) -> None:
    prompt = write(tmp_path / "p.chatmd", PROMPT)
    with lb.LoopbackServer([lb.text("quiet")]) as server:
        ran = run(capsys, server, str(prompt), "--format", "json", "--model", "other-model")
    import json

    result = json.loads(ran.out)
    assert result["status"] == "finished" and result["answer"] == "quiet"
    assert result["requests"] == 1 and result["exit_code"] == 0
    assert server.requests[0]["model"] == "other-model"


def test_a_call_left_without_output_by_a_killed_run_is_cancelled(tmp_path: Path,
                                                                 capsys: Capsys) -> None:
    prompt = write(tmp_path / "p.chatmd", PROMPT + '<tool_call function_name="sh" '
                   'tool_call_id="c1" id="fc_1">\nRAW|{}|RAW</tool_call>\n')
    with lb.LoopbackServer([lb.text("carrying on")]) as server:
        ran = run(capsys, server, str(prompt))
    assert ran.code == 0, ran.err
    sent = server.requests[0]["input"]
    assert sent[-1]["type"] == "function_call_output" and "cancelled" in sent[-1]["output"]
    assert "<tool_response" in prompt.read_text()
    parses(prompt)
