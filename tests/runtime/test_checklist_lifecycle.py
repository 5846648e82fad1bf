"""Moderator-runtime checklist 1-7 and 78: lifecycle, phases and ``ctx``."""

from __future__ import annotations

import threading
from pathlib import Path

from chatmd.request import compile_request
from chatmd.request_context import ConversionContext
from runtime.capabilities import Capabilities
from runtime.ids import EntryAllocator
from runtime.manager import ModeratorManager
from runtime.moderation import TurnStart
from runtime.session import Session
from tests.runtime.support import (
    TRACER,
    LogSink,
    ScriptedModel,
    assistant,
    compile_script,
    entries,
    function_call,
    prompt_in,
    user_item,
)


def _traced(tmp_path: Path, **options: object) -> tuple[Session, LogSink]:
    sink = LogSink()
    session = Session.open(prompt_in(tmp_path, script_source=TRACER),
                           capabilities=Capabilities(on_log=sink), **options)  # type: ignore[arg-type]
    return session, sink


def test_c01_prompt_without_script_dispatches_nothing(tmp_path: Path) -> None:
    prompt = prompt_in(tmp_path)
    session = Session.open(prompt)
    model = ScriptedModel([[assistant("hi")]])
    session.run(model)
    assert session.manager is None
    expected = compile_request(prompt, ConversionContext.local(tmp_path)).request
    assert expected is not None
    assert model.requests[0].input == expected["input"]
    assert model.requests[0].tools == expected["tools"]


def test_c02_fresh_session_starts_once_then_drains_before_first_turn(tmp_path: Path) -> None:
    source = """
let initial_state = 0
let on_event ctx st ev =
  match ev with
  | `Session_start -> let* () = Log.info("session_start") in
                      let* () = Runtime.emit(`Startup) in Task.pure(st)
  | `Startup -> let* () = Log.info("drained Startup") in Task.pure(st)
  | _ -> let* () = Log.info(ctx.phase) in Task.pure(st)
"""
    sink = LogSink()
    session = Session.open(prompt_in(tmp_path, script_source=source),
                           capabilities=Capabilities(on_log=sink))
    session.run_turn(ScriptedModel([[assistant("hi")]]))
    assert sink.messages[:3] == ["session_start", "drained Startup", "turn_start"]
    assert sink.messages.count("session_start") == 1


def test_c03_stored_snapshot_resumes_instead_of_starting(tmp_path: Path) -> None:
    session, sink = _traced(tmp_path)
    session.run(ScriptedModel([[assistant("hi")]]))
    session.save(tmp_path / "s.json")
    resumed_sink = LogSink()
    resumed = Session.restore(prompt_in(tmp_path, script_source=TRACER), tmp_path / "s.json",
                              capabilities=Capabilities(on_log=resumed_sink))
    assert resumed_sink.phases() == ["session_resume"]
    assert "session_start" not in resumed_sink.phases()
    assert resumed.history == session.history


def test_c04_tool_follow_up_gives_two_turn_starts_and_two_turn_ends(tmp_path: Path) -> None:
    session, sink = _traced(tmp_path, runners={"search": lambda payload: "found"})
    model = ScriptedModel([[function_call("search", "{}")], [assistant("done")]])
    result = session.run(model)
    assert result.requests_sent == 2
    assert sink.phases().count("turn_start") == 2
    assert sink.phases().count("turn_end") == 2


def test_c05_item_appended_handler_sees_phase_message_appended(tmp_path: Path) -> None:
    source = """
let initial_state = ""
let on_event ctx st ev =
  match ev with
  | `Item_appended(item) -> Task.pure(ctx.phase)
  | _ -> Task.pure(st)
"""
    session = Session.open(prompt_in(tmp_path, script_source=source))
    session.run_turn(ScriptedModel([[assistant("hi")]]))
    assert session.manager is not None
    assert session.manager.current_state() == "message_appended"


def test_c06_assistant_message_appended_once_with_its_entry_id(tmp_path: Path) -> None:
    session, sink = _traced(tmp_path)
    prompt_ids = [entry.entry_id for entry in session.history]
    session.run_turn(ScriptedModel([[assistant("hi")]]))
    appended = [m for m in sink.messages if m.startswith("message_appended")]
    answer = session.history[-1]
    assert appended == [f"message_appended {answer.entry_id}"]
    assert all(entry_id not in " ".join(appended) for entry_id in prompt_ids)


def test_c07_ctx_items_carry_canonical_entry_ids_and_no_overlay_entries(tmp_path: Path) -> None:
    source = """
let initial_state = [""]
let on_event ctx st ev =
  match ev with
  | `Session_start -> Task.bind(Turn.prepend_system("note"), fun u -> Task.pure(st))
  | `Turn_start -> Task.pure(Array.map(ctx.items, fun item -> Item.id(item)))
  | _ -> Task.pure(st)
"""
    session = Session.open(prompt_in(tmp_path, script_source=source))
    session.run_turn(ScriptedModel([[assistant("hi")]]))
    assert session.manager is not None
    seen = session.manager.current_state()
    canonical = [entry.entry_id for entry in session.history[:2]]
    assert seen == canonical
    inserted = session.manager.overlay.prepended[0].entry_id
    assert inserted not in seen


def test_c78_concurrent_handle_event_calls_run_one_after_the_other() -> None:
    artifact = compile_script("""
let initial_state = { count = 0 }
let on_event ctx st ev = Task.pure({ count = st.count + 1 })
""")
    manager = ModeratorManager.create(artifact, allocator=EntryAllocator("t"))
    history = entries(user_item("hi"))
    errors: list[BaseException] = []

    def dispatch() -> None:
        try:
            for _ in range(50):
                manager.handle_event(TurnStart(), session_id="s", history=history)
        except BaseException as error:  # noqa: BLE001 -- reported below
            errors.append(error)

    threads = [threading.Thread(target=dispatch) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert manager.current_state() == {"count": 100}


PAYLOADS = """
let initial_state = 0
let on_event ctx st ev =
  let* () =
    match ev with
    | `Pre_tool_call(call) -> Log.info("pre " ++ call.id ++ " " ++ call.name ++ " " ++ Json.stringify(call.args))
    | `Post_tool_response(r) -> Log.info("post " ++ r.call_id ++ " " ++ r.name ++ " " ++ Json.stringify(r.result))
    | `Turn_start ->
      Log.info("tools " ++ Json.stringify(`Array(Array.map(ctx.available_tools, fun t ->
        `Object([{ key = "name"; value = `String(t.name) },
                 { key = "description"; value = `String(t.description) },
                 { key = "schema"; value = t.input_schema }])))) ++ " meta " ++ Json.stringify(ctx.session_meta) ++ " session " ++ ctx.session_id)
    | _ -> Task.pure(())
  in
  Task.pure(st)
"""


def test_phase_payloads_reach_the_script(tmp_path: Path) -> None:
    from runtime.tools import HostTool

    sink = LogSink()
    runners = {"search": lambda payload: "not json at all",
               "look": lambda payload: [{"type": "input_text", "text": "seen"},
                                        {"type": "input_image", "image_url": "data:x",
                                         "detail": "low"}]}
    session = Session.open(
        prompt_in(tmp_path, script_source=PAYLOADS, tools='<tool name="search" command="grep"/>'),
        runners=runners, capabilities=Capabilities(on_log=sink),
        host_tools=[HostTool("look", runners["look"], "Looks.",
                             {"type": "object", "properties": {}})])
    session.run_turn(ScriptedModel([[function_call("search", "{broken", "c1"),
                                     function_call("look", '{"n": 1}', "c2")]]))
    tools_line = sink.messages[0]
    assert tools_line.startswith('tools [{"name":"search","description":"Runs the fixed')
    assert '{"name":"look","description":"Looks.","schema":{"type":"object","properties":{}}}' \
        in tools_line
    assert tools_line.endswith(" meta null session demo")
    assert sink.messages[1:] == [
        'pre c1 search "{broken"',
        'pre c2 look {"n":1.0}',
        'post c1 search "not json at all"',
        'post c2 look {"kind":"content","parts":[{"type":"text","text":"seen"},'
        '{"type":"image","image_url":"data:x","detail":"low"}]}',
    ]


def test_each_manager_gets_fresh_globals_from_one_artifact() -> None:
    artifact = compile_script("""
let calls = ref(0)
let initial_state = 0
let on_event ctx st ev = (calls := !calls + 1; Task.pure(!calls))
""")
    first = ModeratorManager.create(artifact, allocator=EntryAllocator("a"))
    second = ModeratorManager.create(artifact, allocator=EntryAllocator("b"))
    history = entries(user_item("hi"))
    for _ in range(3):
        first.handle_event(TurnStart(), session_id="a", history=history)
    second.handle_event(TurnStart(), session_id="b", history=history)
    assert (first.current_state(), second.current_state()) == (3, 1)
