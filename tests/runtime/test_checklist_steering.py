"""Moderator-runtime checklist 66-72: deferred steering and transcript write-back."""

from __future__ import annotations

from pathlib import Path

from runtime.capabilities import Capabilities
from runtime.prompt_checks import load_prompt
from runtime.session import Session
from tests.runtime.support import (
    TRACER,
    LogSink,
    RecordingRunner,
    ScriptedModel,
    assistant,
    function_call,
    prompt_in,
    write_prompt,
)


def test_c66_transient_steering_goes_to_the_next_request_only(tmp_path: Path) -> None:
    session = Session.open(prompt_in(tmp_path, script_source=TRACER))
    model = ScriptedModel([[assistant("one")], [assistant("two")], [assistant("three")]])
    session.run_turn(model)
    assert session.steer("  please be brief ")
    assert session.steer("and polite")
    before = session.history
    session.run_turn(model)
    last = model.requests[1].input[-1]
    assert last == {"type": "message", "role": "developer",
                    "content": [{"type": "input_text", "text": "please be brief\nand polite"}]}
    assert [e for e in session.history[:len(before)]] == before
    assert all("please be brief" not in str(e.item) for e in session.history)
    session.run_turn(model)
    assert all("please be brief" not in str(item) for item in model.requests[2].input)
    assert "please be brief" not in session.export_chatmd()


def test_c67_whitespace_only_steering_is_ignored(tmp_path: Path) -> None:
    session = Session.open(prompt_in(tmp_path))
    assert not session.steer(" \n\t ")
    model = ScriptedModel()
    session.run_turn(model)
    assert all(item.get("role") != "developer" for item in model.requests[0].input)


def test_c68_no_steering_text_when_turn_start_ends_the_session(tmp_path: Path) -> None:
    source = """
let initial_state = 0
let on_event ctx st ev =
  match ev with
  | `Turn_start -> Task.bind(Runtime.end_session("quota"), fun u -> Task.pure(st))
  | _ -> Task.pure(st)
"""
    session = Session.open(prompt_in(tmp_path, script_source=source))
    session.steer("note")
    model = ScriptedModel()
    result = session.run_turn(model)
    assert result.request is None and model.requests == []
    assert session.ended_reason == "quota"


def test_c69_canonical_steering_entry_follows_the_tool_outputs(tmp_path: Path) -> None:
    sink = LogSink()
    session = Session.open(prompt_in(tmp_path, script_source=TRACER),
                           runners={"search": RecordingRunner()},
                           capabilities=Capabilities(on_log=sink))
    entry = session.defer_user_message("also check the tests")

    responses = [[function_call("search", "{}", "c1")], [assistant("ok")]]
    recorded = ScriptedModel(responses)
    session.run(recorded)
    kinds = [e.item.get("type") for e in session.history[2:5]]
    assert kinds == ["function_call", "function_call_output", "message"]
    assert session.history[4] == entry
    assert f"message_appended {entry.entry_id}" in sink.messages
    assert recorded.requests[1].input[-1] == entry.item  # same id, in the next request
    assert session.history.count(entry) == 1


def test_c69_deferred_entry_alone_is_a_follow_up(tmp_path: Path) -> None:
    session = Session.open(prompt_in(tmp_path))
    model = ScriptedModel([[assistant("first")]])
    session.defer_user_message("one more thing")
    result = session.run(model)
    assert result.requests_sent == 2
    assert model.requests[1].input[-1]["content"][0]["text"] == "one more thing"


def test_c70_transcript_ends_with_empty_user_block_unless_ended(tmp_path: Path) -> None:
    path = write_prompt(tmp_path)
    session = Session.open(load_prompt(path))
    session.run(ScriptedModel([[assistant("hello there")]]))
    session.write_transcript(path, payload_dir=tmp_path / ".chatmd")
    assert path.read_text().endswith("<user>\n\n</user>\n")
    reloaded = load_prompt(path)
    assert reloaded.messages[-2].role == "assistant"

    ended_dir = tmp_path / "ended"
    ended_dir.mkdir()
    source = """
let initial_state = 0
let on_event ctx st ev =
  match ev with
  | `Turn_end -> Task.bind(Runtime.end_session("done"), fun u -> Task.pure(st))
  | _ -> Task.pure(st)
"""
    ended_path = write_prompt(ended_dir, script_source=source)
    ended = Session.open(load_prompt(ended_path))
    ended.run(ScriptedModel([[assistant("bye")]]))
    ended.write_transcript(ended_path, payload_dir=ended_dir / ".chatmd")
    text = ended_path.read_text()
    assert text.rstrip().endswith("</assistant>")
    assert "<user>\n\n</user>" not in text


def test_c71_tool_payloads_go_to_files_by_default(tmp_path: Path) -> None:
    path = write_prompt(tmp_path)
    session = Session.open(load_prompt(path), runners={"search": lambda p: "found it"})
    session.run(ScriptedModel([[function_call("search", '{"q": 1}', "c1")], [assistant("ok")]]))
    session.write_transcript(path, payload_dir=tmp_path / ".chatmd")
    files = sorted(p.name for p in (tmp_path / ".chatmd").iterdir())
    assert files == ["0.tool-call-result.c1.json", "0.tool-call.c1.json"]
    assert (tmp_path / ".chatmd" / "0.tool-call-result.c1.json").read_text() == "found it"
    text = path.read_text()
    assert '<doc src="./.chatmd/0.tool-call.c1.json" local/>' in text


def test_c72_show_tool_call_inlines_payloads(tmp_path: Path) -> None:
    path = write_prompt(tmp_path)
    session = Session.open(load_prompt(path), runners={"search": lambda p: "found it"})
    session.run(ScriptedModel([[function_call("search", '{"q": 1}', "c1")], [assistant("ok")]]))
    session.write_transcript(path, show_tool_call=True, payload_dir=tmp_path / ".chatmd")
    text = path.read_text()
    assert 'RAW|{"q": 1}|RAW' in text and "RAW|found it|RAW" in text
    assert not (tmp_path / ".chatmd").exists()


def test_c79_history_compaction_blanks_older_reads_of_a_path_in_the_request(
        tmp_path: Path) -> None:
    from runtime.request_compaction import STALE_PLACEHOLDER
    from runtime.tools import HostTool

    reads = iter(["version 1", "version 2"])
    session = Session.open(prompt_in(tmp_path), history_compaction=True,
                           host_tools=[HostTool("read_file", lambda payload: next(reads))])
    model = ScriptedModel([[function_call("read_file", '{"path": "a.txt"}', "r1")],
                           [function_call("read_file", '{"file": "a.txt"}', "r2")],
                           [assistant("done")]])
    session.run(model)
    outputs = [i["output"] for i in model.requests[2].input if "output" in i]
    assert outputs == [STALE_PLACEHOLDER, "version 2"]
    calls = [i["call_id"] for i in model.requests[2].input if i.get("type") == "function_call"]
    assert calls == ["r1", "r2"]
    canonical = [e.item["output"] for e in session.history if "output" in e.item]
    assert canonical == ["version 1", "version 2"]
