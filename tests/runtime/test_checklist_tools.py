"""Moderator-runtime checklist 8-20 and 75: tool moderation and tool execution order."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from runtime.capabilities import Capabilities
from runtime.errors import ConflictingToolModeration, UnexpectedToolModeration, UnknownToolError
from runtime.session import Session
from tests.runtime.support import (
    TRACER,
    LogSink,
    RecordingRunner,
    ScriptedModel,
    assistant,
    custom_call,
    function_call,
    prompt_in,
)

TOOLS = ('<tool name="search" command="grep -r"/>\n<tool name="lookup" command="grep -n"/>\n'
         '<tool name="delete_file" command="rm"/>\n<tool name="apply_patch"/>\n')


def _on_pre_tool(body: str) -> str:
    return f"""
let initial_state = 0
let on_event ctx st ev =
  match ev with
  | `Pre_tool_call(call) -> {body}
  | _ -> Task.pure(st)
"""


def _session(tmp_path: Path, source: str, **runners: RecordingRunner) -> Session:
    return Session.open(prompt_in(tmp_path, script_source=source, tools=TOOLS), runners=runners)


def test_c08_runner_waits_for_committed_pre_tool_call(tmp_path: Path) -> None:
    order: list[str] = []
    sink = LogSink()

    def on_log(level: str, message: str) -> None:
        order.append("log " + message)
        sink(level, message)

    def runner(payload: str) -> str:
        order.append("runner")
        return "ok"

    session = Session.open(prompt_in(tmp_path, script_source=TRACER, tools=TOOLS),
                           runners={"search": runner}, capabilities=Capabilities(on_log=on_log))
    session.run_turn(ScriptedModel([[function_call("search", "{}")]]))
    assert order.index("log pre_tool_call search") < order.index("runner")


def test_c09_pre_tool_call_sees_the_provisional_call_last(tmp_path: Path) -> None:
    source = _on_pre_tool("""
    (match Context.last_item(ctx) with
     | `Some(item) -> if Item.is_tool_call(item) then Task.pure(1) else Task.pure(2)
     | `None -> Task.pure(3))""")
    session = _session(tmp_path, source, search=RecordingRunner())
    session.run_turn(ScriptedModel([[assistant("first"), function_call("search", "{}")]]))
    assert session.manager is not None
    assert session.manager.current_state() == 1


def test_c10_no_action_runs_the_call_unchanged(tmp_path: Path) -> None:
    runner = RecordingRunner(lambda payload: "result")
    session = _session(tmp_path, _on_pre_tool("Task.pure(st)"), search=runner)
    session.run_turn(ScriptedModel([[function_call("search", '{"q": "x"}', "c1")]]))
    assert runner.payloads == ['{"q": "x"}']
    call, output = session.history[-2:]
    assert call.item["arguments"] == '{"q": "x"}'
    assert output.item == {"type": "function_call_output", "call_id": "c1", "output": "result"}


def test_c11_reject_skips_runner_and_synthesises_output(tmp_path: Path) -> None:
    runner = RecordingRunner()
    source = """
let initial_state = ""
let on_event ctx st ev =
  match ev with
  | `Pre_tool_call(call) -> Task.bind(Tool.reject("nope"), fun u -> Task.pure(st))
  | `Post_tool_response(result) -> Task.pure(result.call_id)
  | _ -> Task.pure(st)
"""
    session = _session(tmp_path, source, delete_file=runner)
    session.run_turn(ScriptedModel([[function_call("delete_file", '{"path": "/"}', "c1")]]))
    assert runner.payloads == []
    call, output = session.history[-2:]
    assert call.item["arguments"] == '{"path": "/"}'
    assert output.item["output"] == "nope"
    assert session.manager is not None
    assert session.manager.current_state() == "c1"  # post_tool_response still fired


def test_c11_guard_script_rejects_delete_file(tmp_path: Path) -> None:
    runner = RecordingRunner()
    session = Session.open(prompt_in(tmp_path, script="guard.chatml", tools=TOOLS),
                           runners={"search": runner, "delete_file": runner})
    session.run(ScriptedModel([[function_call("delete_file", "{}", "c1"),
                                function_call("search", '{"q": 1}', "c2")],
                               [assistant("ok")]]))
    assert runner.payloads == ['{"q": 1}']
    outputs = {e.item["call_id"]: e.item["output"] for e in session.history
               if e.item.get("type") == "function_call_output"}
    assert outputs == {"c1": "delete_file is disabled by the guard", "c2": "ok"}
    assert session.manager is not None
    assert session.manager.current_state() == {"rejected": 1, "allowed": 1}


def test_c12_rewrite_args_on_function_tool(tmp_path: Path) -> None:
    runner = RecordingRunner()
    source = _on_pre_tool(
        'Task.bind(Tool.rewrite_args(`Object([{ key = "a"; value = `Number(1.0) }])), '
        'fun u -> Task.pure(st))')
    session = _session(tmp_path, source, search=runner)
    session.run_turn(ScriptedModel([[function_call("search", '{"q": "x"}', "c7")]]))
    assert [json.loads(p) for p in runner.payloads] == [{"a": 1}]
    call = session.history[-2]
    assert json.loads(call.item["arguments"]) == {"a": 1}
    assert call.item["call_id"] == "c7"
    assert call.item["id"] == "fc_c7"


def test_c13_rewrite_args_with_a_string_on_a_custom_tool(tmp_path: Path) -> None:
    runner = RecordingRunner()
    source = _on_pre_tool('Task.bind(Tool.rewrite_args(`String("raw")), fun u -> Task.pure(st))')
    session = _session(tmp_path, source, apply_patch=runner)
    session.run_turn(ScriptedModel([[custom_call("apply_patch", "*** Begin Patch", "c1")]]))
    assert runner.payloads == ["raw"]
    assert session.history[-2].item["input"] == "raw"
    assert session.history[-1].item["type"] == "custom_tool_call_output"


def test_c14_redirect_runs_the_other_tool(tmp_path: Path) -> None:
    search, lookup = RecordingRunner(), RecordingRunner(lambda p: "looked up")
    source = _on_pre_tool(
        'Task.bind(Tool.redirect("lookup", `Object([{ key = "q"; value = `String("y") }])), '
        'fun u -> Task.pure(st))')
    session = _session(tmp_path, source, search=search, lookup=lookup)
    session.run_turn(ScriptedModel([[function_call("search", '{"q": "x"}', "c1")]]))
    assert search.payloads == []
    assert [json.loads(p) for p in lookup.payloads] == [{"q": "y"}]
    call, output = session.history[-2:]
    assert call.item["name"] == "lookup"
    assert call.item["call_id"] == "c1"
    assert output.item["output"] == "looked up"


def test_c15_two_tool_actions_fail_and_commit_nothing(tmp_path: Path) -> None:
    runner = RecordingRunner()
    source = _on_pre_tool("""
    let* () = Tool.approve() in
    let* () = Turn.prepend_system("should not stay") in
    let* () = Tool.reject("no") in
    Task.pure(st + 1)""")
    session = _session(tmp_path, source, search=runner)
    assert session.manager is not None
    with pytest.raises(ConflictingToolModeration) as caught:
        session.run_turn(ScriptedModel([[function_call("search", "{}")]]))
    assert "at most one tool moderation action" in caught.value.message
    assert session.manager.current_state() == 0
    assert session.manager.overlay.revision == 0
    assert runner.payloads == []


def test_c16_tool_moderation_outside_pre_tool_call_aborts_the_run(tmp_path: Path) -> None:
    source = """
let initial_state = 0
let on_event ctx st ev =
  match ev with
  | `Turn_start -> Task.bind(Tool.approve(), fun u -> Task.pure(st))
  | _ -> Task.pure(st)
"""
    session = _session(tmp_path, source)
    model = ScriptedModel()
    with pytest.raises(UnexpectedToolModeration, match="unexpected tool moderation"):
        session.run(model)
    assert model.requests == []


def test_c17_post_tool_order_post_then_appended_then_drain(tmp_path: Path) -> None:
    source = """
let initial_state = 0
let on_event ctx st ev =
  match ev with
  | `Post_tool_response(result) ->
    let* () = Log.info("post_tool_response") in
    let* () = Runtime.emit(`Drained) in
    Task.pure(st)
  | `Item_appended(item) ->
    if Item.is_tool_result(item) then
      Task.bind(Log.info("message_appended output"), fun u -> Task.pure(st))
    else Task.pure(st)
  | `Drained -> Task.bind(Log.info("drain"), fun u -> Task.pure(st))
  | _ -> Task.pure(st)
"""
    sink = LogSink()
    session = Session.open(prompt_in(tmp_path, script_source=source, tools=TOOLS),
                           runners={"search": RecordingRunner()},
                           capabilities=Capabilities(on_log=sink))
    session.run_turn(ScriptedModel([[function_call("search", "{}")]]))
    assert sink.messages == ["post_tool_response", "message_appended output", "drain"]


def test_c18_end_session_in_post_tool_response_stops(tmp_path: Path) -> None:
    source = """
let initial_state = 0
let on_event ctx st ev =
  match ev with
  | `Post_tool_response(result) -> Task.bind(Runtime.end_session("enough"), fun u -> Task.pure(st))
  | `Item_appended(item) -> if Item.is_tool_result(item) then Task.pure(99) else Task.pure(st)
  | _ -> Task.pure(st)
"""
    session = _session(tmp_path, source, search=RecordingRunner())
    model = ScriptedModel([[function_call("search", "{}")], [assistant("never")]])
    result = session.run(model)
    assert len(model.requests) == 1
    assert session.history[-1].item["type"] == "function_call_output"  # pair kept
    assert session.manager is not None
    assert session.manager.current_state() == 0  # no message_appended for the output
    assert result.ended_reason == "enough"


def test_c19_parallel_outputs_are_appended_in_call_order(tmp_path: Path) -> None:
    # Call 1 finishes only after call 2, and call 2 only after call 3: the calls run at
    # once and finish in reverse order (a sequential run would time out in call 1).
    done = {name: threading.Event() for name in ('"1"', '"2"', '"3"')}
    waits_for = {'"1"': '"2"', '"2"': '"3"'}
    finished: list[str] = []

    def runner(payload: str) -> str:
        before = waits_for.get(payload)
        if before is not None:
            assert done[before].wait(timeout=10), f"call {payload} ran before {before} finished"
        finished.append(payload)
        done[payload].set()
        return "out " + payload

    session = Session.open(prompt_in(tmp_path, tools=TOOLS), runners={"search": runner})
    session.run_turn(ScriptedModel([[function_call("search", '"1"', "a"),
                                     function_call("search", '"2"', "b"),
                                     function_call("search", '"3"', "c")]]))
    assert finished == ['"3"', '"2"', '"1"']
    outputs = [e.item["call_id"] for e in session.history if "output" in e.item]
    assert outputs == ["a", "b", "c"]


def test_c20_at_most_eight_tools_run_at_once(tmp_path: Path) -> None:
    lock = threading.Lock()
    running = [0]
    peak = [0]

    def runner(payload: str) -> str:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.05)
        with lock:
            running[0] -= 1
        return "ok"

    session = Session.open(prompt_in(tmp_path, tools=TOOLS), runners={"search": runner})
    calls = [function_call("search", f'"{i}"') for i in range(12)]
    session.run_turn(ScriptedModel([calls]))
    assert peak[0] == 8
    assert sum(1 for e in session.history if "output" in e.item) == 12


def test_c75_undeclared_tool_fails_the_run(tmp_path: Path) -> None:
    session = Session.open(prompt_in(tmp_path, tools=TOOLS))
    with pytest.raises(UnknownToolError, match="does not declare"):
        session.run_turn(ScriptedModel([[function_call("format_disk", "{}")]]))


def test_runner_exception_is_fatal_and_propagates(tmp_path: Path) -> None:
    def broken(payload: str) -> str:
        raise ValueError("disk on fire")

    session = Session.open(prompt_in(tmp_path, tools=TOOLS), runners={"search": broken})
    with pytest.raises(ValueError, match="disk on fire"):
        session.run_turn(ScriptedModel([[function_call("search", "{}")]]))
