"""``chatmdc run`` with tools, agents and moderators (spec 8.3, 8.6, 8.8, 8.10)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from chatmd.request_context import AgentRunError
from runtime.driver.agents import check_stack
from runtime.driver.client import ClientSettings
from runtime.driver.context import MAX_AGENT_DEPTH, DriverContext
from tests.runtime.driver import loopback as lb
from tests.runtime.driver.support import events, parses, run_inprocess, write
from tests.runtime.support import SCRIPTS

Capsys = pytest.CaptureFixture[str]
SUB = '<config model="sub-model"/>\n<system>You summarise.</system>\n'


def run(capsys: Capsys, server: lb.LoopbackServer, *args: str):  # type: ignore[no-untyped-def]
    return run_inprocess(capsys, ["run", *args, "--base-url", server.base_url])


def tool_prompt(folder: Path, *, show: bool) -> Path:
    write(folder / "sub.chatmd", SUB)
    flag = ' show_tool_call="true"' if show else ""
    return write(folder / "p.chatmd",
                 f'<config model="m"{flag}/>\n<tool name="helper" agent="sub.chatmd" local/>\n'
                 '<tool name="sh" command="ls"/>\n<user>Summarise please</user>\n')


def agent_and_shell_calls() -> list[lb.Reply]:
    return [lb.calls(lb.call_item("helper", '{"input": "the text"}', "call_a"),
                     lb.call_item("sh", '{"arguments": ["-l"]}', "call_s")),
            lb.blocking(lb.message_item("a short summary")),
            lb.text("Here it is.")]


def test_shell_tool_needing_approval_is_refused_without_a_reviewer(tmp_path: Path,
                                                                   capsys: Capsys) -> None:
    prompt = tool_prompt(tmp_path, show=False)
    with lb.LoopbackServer(agent_and_shell_calls()) as server:  # --approvals ask, no terminal
        ran = run(capsys, server, str(prompt))
    assert ran.code == 0, ran.err
    output = json.loads(str(outputs_of(server.requests[2])["call_s"]))
    assert output["error"]["code"] == "denied"


def outputs_of(request: dict[str, object]) -> dict[str, object]:
    return {item["call_id"]: item["output"] for item in request["input"]  # type: ignore[index,union-attr]
            if item.get("type") == "function_call_output"}  # type: ignore[union-attr]


def test_agent_tool_runs_nested_and_shell_tool_runs(tmp_path: Path, capsys: Capsys) -> None:
    prompt = tool_prompt(tmp_path, show=False)
    with lb.LoopbackServer(agent_and_shell_calls()) as server:
        ran = run(capsys, server, str(prompt), "--events", "ev.jsonl", "--approvals", "allow")
    assert ran.code == 0, ran.err
    nested = server.requests[1]
    assert nested["model"] == "sub-model" and "stream" not in nested
    assert nested["input"][-1]["content"][0]["text"] == "the text"
    outputs = outputs_of(server.requests[2])
    assert outputs["call_a"] == "a short summary"
    assert "sub.chatmd" in str(outputs["call_s"])  # `ls -l` ran, in the prompt's folder
    assert "tool helper" in ran.err and "ok" in ran.err
    assert "tool sh" in ran.err
    data = tmp_path / ".chatmd"
    assert (data / "0.tool-call.call_a.json").read_text() == '{"input": "the text"}'
    assert (data / "0.tool-call-result.call_a.json").read_text() == "a short summary"
    text = prompt.read_text()
    assert '<doc src="./.chatmd/1.tool-call-result.call_s.json" local/>' in text
    items = parses(prompt).items
    assert [item.kind for item in items[-6:]] == ["tool_call", "tool_call", "tool_response",
                                                  "tool_response", "assistant", "user"]
    finished = [e for e in events(tmp_path / "ev.jsonl") if e["event"] == "tool_finished"]
    assert {(e["name"], e["ok"]) for e in finished} == {("helper", True), ("sh", True)}


def test_show_tool_call_keeps_payloads_inline(tmp_path: Path, capsys: Capsys) -> None:
    prompt = tool_prompt(tmp_path, show=True)
    with lb.LoopbackServer(agent_and_shell_calls()) as server:
        assert run(capsys, server, str(prompt)).code == 0
    text = prompt.read_text()
    assert "<doc" not in text and "RAW|a short summary|RAW" in text
    assert not any((tmp_path / ".chatmd").glob("*.json"))
    # the re-read transcript gives the model the same items back
    with lb.LoopbackServer([lb.text("again")]) as server:
        prompt.write_text(text.replace("<user>\n\n</user>", "<user>more</user>"))
        assert run(capsys, server, str(prompt)).code == 0
    assert outputs_of(server.requests[0])["call_a"] == "a short summary"


def test_agent_cycle_is_a_tool_error(tmp_path: Path, capsys: Capsys) -> None:
    prompt = write(tmp_path / "loop.chatmd",
                   '<config model="m"/>\n<tool name="again" agent="loop.chatmd" local/>\n'
                   "<user>go</user>\n")
    replies = [lb.calls(lb.call_item("again", '{"input": "x"}', "c1")),
               lb.blocking(lb.call_item("again", '{"input": "y"}', "c2")),
               lb.blocking(lb.message_item("inner done")),
               lb.text("outer done")]
    with lb.LoopbackServer(replies) as server:
        ran = run(capsys, server, str(prompt))
    assert ran.code == 0, ran.err
    inner_outputs = outputs_of(server.requests[2])
    assert "agent cycle" in str(inner_outputs["c2"])
    assert str(prompt.resolve()) in str(inner_outputs["c2"])
    assert outputs_of(server.requests[3])["c1"] == "inner done"


def test_bad_agent_arguments_are_a_tool_error(tmp_path: Path, capsys: Capsys) -> None:
    prompt = tool_prompt(tmp_path, show=True)
    replies = [lb.calls(lb.call_item("helper", '{"text": 1}', "c1")), lb.text("ok")]
    with lb.LoopbackServer(replies) as server:
        assert run(capsys, server, str(prompt)).code == 0
    assert 'expected the arguments {"input"' in str(outputs_of(server.requests[1])["c1"])


def test_depth_limit_and_cycles_are_clear_errors(tmp_path: Path) -> None:
    ctx = DriverContext(client=None, client_settings=ClientSettings(), workspace=tmp_path)
    for index in range(MAX_AGENT_DEPTH):
        check_stack(ctx, f"a{index}")
        ctx = ctx.nested(f"a{index}")
    with pytest.raises(AgentRunError, match="nested more than 8 deep: a0 -> a1"):
        check_stack(ctx, "deeper")
    with pytest.raises(AgentRunError, match="agent cycle: a0 -> .* -> a3"):
        check_stack(ctx, "a3")


def test_inline_agent_result_is_cached_across_runs(tmp_path: Path, capsys: Capsys) -> None:
    write(tmp_path / "sub.chatmd", SUB)
    text = ('<config model="m"/>\n<user>Context: <agent src="sub.chatmd" local>'
            "summarise the logs</agent></user>\n")
    prompt = write(tmp_path / "p.chatmd", text)
    replies = [lb.blocking(lb.message_item("LOGS OK")), lb.text("noted")]
    with lb.LoopbackServer(replies) as server:
        assert run(capsys, server, str(prompt)).code == 0
    assert server.requests[0]["model"] == "sub-model"
    assert server.requests[1]["input"][0]["content"][1]["text"] == "LOGS OK"
    cache = tmp_path / ".chatmd" / "cache.bin"
    assert cache.is_file()
    prompt.write_text(prompt.read_text().replace("<user>\n\n</user>", "<user>more</user>"))
    with lb.LoopbackServer([lb.text("still noted")]) as server:
        assert run(capsys, server, str(prompt)).code == 0
    assert len(server.requests) == 1 and server.requests[0]["model"] == "m"


def test_failing_inline_agent_is_a_prompt_error(tmp_path: Path, capsys: Capsys) -> None:
    prompt = write(tmp_path / "p.chatmd", '<config model="m"/>\n<user>'
                   '<agent src="nowhere.chatmd" local>x</agent></user>\n')
    with lb.LoopbackServer([]) as server:
        ran = run(capsys, server, str(prompt))
    assert ran.code == 1 and "chatmd.agent_failed" in ran.err and server.requests == []


def moderated(folder: Path, script: str, tools: str) -> Path:
    if (SCRIPTS / script).exists():
        shutil.copy(SCRIPTS / script, folder / script)
    return write(folder / "p.chatmd",
                 f'<config model="m" id="demo"/>\n{tools}'
                 f'<script language="chatml" kind="moderator" id="main" src="{script}"/>\n'
                 "<user>Clean up</user>\n")


def test_moderator_rejects_a_tool(tmp_path: Path, capsys: Capsys) -> None:
    write(tmp_path / "sub.chatmd", SUB)
    prompt = moderated(tmp_path, "guard.chatml",
                       '<tool name="delete_file" agent="sub.chatmd" local/>\n')
    replies = [lb.calls(lb.call_item("delete_file", '{"input": "/"}', "c1")),
               lb.text("I could not delete it.")]
    with lb.LoopbackServer(replies) as server:
        ran = run(capsys, server, str(prompt), "--events", "ev.jsonl")
    assert ran.code == 0, ran.err
    assert len(server.requests) == 2  # the agent never ran: no nested request
    moderation = [e for e in events(tmp_path / "ev.jsonl") if e["event"] == "moderation"]
    assert moderation[0]["outcome"] == "rejected" and moderation[0]["call_id"] == "c1"
    assert "disabled by the guard" in moderation[0]["detail"]
    assert "delete_file is disabled by the guard" in str(outputs_of(server.requests[1])["c1"])
    assert "tool delete_file" not in ran.err
    parses(prompt)


END_AT_TURN_END = """
type state = { n : int }
let initial_state = { n = 0 }
let on_event ctx st ev =
  match ev with
  | `Turn_end ->
    let* () = Runtime.end_session("the moderator is done") in
    Task.pure({ n = st.n + 1 })
  | _ -> Task.pure(st)
"""


def test_moderator_ends_the_session(tmp_path: Path, capsys: Capsys) -> None:
    write(tmp_path / "ender.chatml", END_AT_TURN_END)
    prompt = moderated(tmp_path, "ender.chatml", "")
    with lb.LoopbackServer([lb.text("bye")]) as server:
        ran = run(capsys, server, str(prompt), "--events", "ev.jsonl")
    assert ran.code == 0, ran.err
    assert "the moderator is done" in ran.err
    text = prompt.read_text()
    assert "RAW|bye|RAW" in text and not text.endswith("<user>\n\n</user>\n")
    log = events(tmp_path / "ev.jsonl")
    assert log[-1]["status"] == "ended"
    assert any(e["event"] == "moderation" for e in log)


def test_turn_limit_exits_5_and_rerun_continues(tmp_path: Path, capsys: Capsys) -> None:
    prompt = tool_prompt(tmp_path, show=False)
    replies = [lb.calls(lb.call_item("sh", "{}", "c1"))]
    with lb.LoopbackServer(replies) as server:
        ran = run(capsys, server, str(prompt), "--max-turns", "1")
    assert ran.code == 5 and "--max-turns" in ran.err
    text = prompt.read_text()
    assert text.rstrip().endswith("</tool_response>")
    with lb.LoopbackServer([lb.text("finally")]) as server:
        assert run(capsys, server, str(prompt)).code == 0
    assert "c1" in outputs_of(server.requests[0])
    parses(prompt)


def test_session_sidecar_restores_and_refuses_a_changed_script(tmp_path: Path,
                                                               capsys: Capsys) -> None:
    prompt = moderated(tmp_path, "guard.chatml", "")
    with lb.LoopbackServer([lb.text("one")]) as server:
        assert run(capsys, server, str(prompt), "--session", "s.json").code == 0
    saved = json.loads((tmp_path / "s.json").read_text())
    assert saved  # a session record was written
    prompt.write_text(prompt.read_text().replace("<user>\n\n</user>", "<user>two?</user>"))
    with lb.LoopbackServer([lb.text("two")]) as server:
        ran = run(capsys, server, str(prompt), "--session", "s.json")
        assert ran.code == 0, ran.err
    assert [i.get("role") for i in server.requests[0]["input"]] == ["user", "assistant", "user"]
    script = tmp_path / "guard.chatml"
    script.write_text(script.read_text() + "\n(* changed *)\n")
    prompt.write_text(prompt.read_text().replace("<user>\n\n</user>", "<user>three?</user>"))
    with lb.LoopbackServer([lb.text("three")]) as server:
        ran = run(capsys, server, str(prompt), "--session", "s.json")
    assert ran.code == 2 and server.requests == []
    hashes = [word.rstrip(",;") for word in ran.err.split() if len(word.rstrip(",;")) == 32]
    assert len(set(hashes)) == 2 and "source hash" in ran.err


def test_a_tool_starts_while_the_response_is_still_streaming(tmp_path: Path,
                                                             capsys: Capsys) -> None:
    """Spec 8.3: a call runs as soon as its arguments complete, not after the stream."""
    prompt = tool_prompt(tmp_path, show=False)
    first = lb.stream(lb.call_item("helper", '{"input": "early"}', "c1"),
                      lb.message_item("still talking"), pause_after=6, pause=1.5)
    replies = [first, lb.blocking(lb.message_item("nested")), lb.text("done")]
    with lb.LoopbackServer(replies) as server:
        ran = run(capsys, server, str(prompt))
    assert ran.code == 0, ran.err
    assert server.requests[1]["model"] == "sub-model"
    assert server.received_at[1] < server.finished_at[0]  # nested request during the stream
    text = prompt.read_text()
    assert text.index("<tool_call") < text.index("still talking") < text.index("<tool_response")
