"""Moderator-runtime checklist 44-57: internal events, drains, model recipes and jobs."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from chatml.values import Variant
from runtime.capabilities import Capabilities, ModelError, ModelOk, ModelRefused
from runtime.errors import AwaitingUiInput, HandlerFailed
from runtime.executor import ModelExecutor
from runtime.ids import EntryAllocator
from runtime.manager import ModeratorManager
from runtime.moderation import SessionStart, TurnStart
from runtime.session import Session
from tests.runtime.support import (
    LogSink,
    ScriptedModel,
    assistant,
    compile_script,
    entries,
    prompt_in,
    shown,
    user_item,
)

HISTORY = entries(user_item("hi"))

RECORDER = """
let initial_state = [""]
let on_event ctx st ev =
  match ev with
  | `Session_start -> Task.bind(Runtime.emit(`E("started")), fun u -> Task.pure(st))
  | `Again -> Task.bind(Runtime.emit(`Again), fun u -> Task.pure(Array.append(st, [ctx.phase])))
  | `Boom -> Task.fail("boom")
  | `E(name) -> Task.pure(Array.append(st, [ctx.phase ++ " " ++ name]))
  | _ -> Task.pure(st)
"""


def _manager(source: str = RECORDER, **options: Any) -> ModeratorManager:
    return ModeratorManager.create(compile_script(source), allocator=EntryAllocator("t"),
                                   **options)


def _drain(manager: ModeratorManager, **options: Any) -> list[Any]:
    return manager.drain_internal_events(session_id="s", history=HISTORY, **options)


def test_c44_emit_in_session_start_replays_in_the_startup_drain(tmp_path: Path) -> None:
    session = Session.open(prompt_in(tmp_path, script_source=RECORDER))
    assert session.manager is not None
    assert session.manager.current_state() == ["", "internal_event started"]
    assert session.manager.queued_events() == []


def test_c45_queued_events_replay_fifo() -> None:
    manager = _manager()
    manager.enqueue_internal_event(Variant("E", ("1",)))
    manager.enqueue_internal_event(Variant("E", ("2",)))
    outcomes = _drain(manager)
    assert len(outcomes) == 2
    assert manager.current_state() == ["", "internal_event 1", "internal_event 2"]


def test_c46_self_re_emitting_event_stops_after_100_replays() -> None:
    manager = _manager()
    manager.enqueue_internal_event(Variant("Again"))
    outcomes = _drain(manager)
    assert len(outcomes) == 100
    assert [shown(v) for v in manager.queued_events()] == ["`Again"]
    assert len(manager.current_state()) == 101


def test_c47_drain_with_zero_replays_nothing() -> None:
    manager = _manager()
    manager.enqueue_internal_event(Variant("E", ("1",)))
    assert _drain(manager, max_events=0) == []
    assert len(manager.queued_events()) == 1


def test_c48_failing_middle_event_is_dropped_and_the_rest_waits() -> None:
    manager = _manager()
    for value in (Variant("E", ("1",)), Variant("Boom"), Variant("E", ("3",))):
        manager.enqueue_internal_event(value)
    with pytest.raises(HandlerFailed, match="boom") as caught:
        _drain(manager)
    assert len(caught.value.committed) == 1  # type: ignore[attr-defined]
    assert manager.current_state() == ["", "internal_event 1"]
    assert [shown(v) for v in manager.queued_events()] == ["`E(3)"]


def test_c49_enqueue_accepted_while_approval_pending_but_drain_refused() -> None:
    manager = ModeratorManager.create(compile_script("""
let initial_state = ""
let on_event ctx st ev =
  match ev with
  | `Turn_start -> Approval.ask_text("continue?")
  | _ -> Task.pure(st)
""", surface="ui_moderator"), allocator=EntryAllocator("t"))
    manager.handle_event(TurnStart(), session_id="s", history=HISTORY)
    assert manager.pending_ui_request() is not None
    manager.enqueue_internal_event(Variant("Queued"))
    with pytest.raises(AwaitingUiInput):
        _drain(manager)
    manager.resume_ui_request("  yes  ")
    assert manager.current_state() == "yes"
    assert _drain(manager) != []


def _spawner(executor: ModelExecutor, recipe: Any, sink: LogSink | None = None
             ) -> ModeratorManager:
    source = """
let initial_state = [""]
let on_event ctx st ev =
  match ev with
  | `Turn_start ->
    let* a = Model.spawn("agent_prompt_v1", `Null) in
    Task.pure(Array.append(st, [a]))
  | _ -> Task.pure(st)
"""
    caps = Capabilities().with_recipes(executor.recipe("agent_prompt_v1", recipe, "s"))
    return ModeratorManager.create(compile_script(source), caps, EntryAllocator("t"))


def test_c50_job_ids_count_from_one_per_executor() -> None:
    executor = ModelExecutor()
    manager = _spawner(executor, lambda payload: ModelOk({}))
    manager.handle_event(TurnStart(), session_id="s", history=HISTORY)
    manager.handle_event(TurnStart(), session_id="s", history=HISTORY)
    assert manager.current_state() == ["", "model-job-1", "model-job-2"]
    executor.wait_all()


def test_c51_spawn_cap_fails_the_second_spawn() -> None:
    executor = ModelExecutor(max_spawned_jobs=1)
    manager = _spawner(executor, lambda payload: ModelOk({}))
    manager.handle_event(TurnStart(), session_id="s", history=HISTORY)
    with pytest.raises(HandlerFailed, match="Model.spawn: exceeded maximum spawned job limit."):
        manager.handle_event(TurnStart(), session_id="s", history=HISTORY)
    executor.wait_all()


def test_c52_successful_job_is_queued_and_wakes_up_once() -> None:
    executor = ModelExecutor()
    result = {"recipe": "agent_prompt_v1", "final_text": "hi", "terminated_normally": True}
    manager = _spawner(executor, lambda payload: ModelOk(result))
    wakeups = []
    executor.register_session("s", manager, lambda: wakeups.append(1))
    manager.handle_event(TurnStart(), session_id="s", history=HISTORY)
    executor.await_job("model-job-1")
    (event,) = manager.queued_events()
    assert event.tag == "Model_job_succeeded"
    assert event.args[:2] == ("model-job-1", "agent_prompt_v1")
    assert "terminated_normally" in shown(event.args[2])
    assert wakeups == [1]


def test_c53_refusal_becomes_model_job_failed() -> None:
    executor = ModelExecutor()
    manager = _spawner(executor, lambda payload: ModelRefused("x"))
    executor.register_session("s", manager)
    manager.handle_event(TurnStart(), session_id="s", history=HISTORY)
    executor.await_job("model-job-1")
    assert [shown(v) for v in manager.queued_events()] == \
        ["`Model_job_failed(model-job-1, agent_prompt_v1, x)"]


def test_c54_job_finished_before_registration_is_delivered_at_registration() -> None:
    executor = ModelExecutor()
    manager = _spawner(executor, lambda payload: ModelError("late"))
    manager.handle_event(TurnStart(), session_id="s", history=HISTORY)
    executor.await_job("model-job-1")
    assert manager.queued_events() == []
    executor.register_session("s", manager)
    assert [shown(v) for v in manager.queued_events()] == \
        ["`Model_job_failed(model-job-1, agent_prompt_v1, late)"]


def test_c55_after_unregister_wakeup_completions_still_queue() -> None:
    executor = ModelExecutor()
    release = threading.Event()

    def recipe(payload: Any) -> ModelOk:
        release.wait(5)
        return ModelOk({"n": 1})

    manager = _spawner(executor, recipe)
    wakeups: list[int] = []
    executor.register_session("s", manager, lambda: wakeups.append(1))
    manager.handle_event(TurnStart(), session_id="s", history=HISTORY)
    executor.unregister_wakeup("s")
    release.set()
    executor.await_job("model-job-1")
    assert len(manager.queued_events()) == 1
    assert wakeups == []


def test_c56_unregistered_recipe_fails_the_handler() -> None:
    manager = _manager("""
let initial_state = 0
let on_event ctx st ev =
  match ev with
  | `Turn_start -> Task.bind(Model.call("nope", `Null), fun r -> Task.pure(1))
  | _ -> Task.pure(st)
""")
    with pytest.raises(HandlerFailed, match='Model recipe "nope" is not registered'):
        manager.handle_event(TurnStart(), session_id="s", history=HISTORY)
    assert manager.current_state() == 0


def test_c57_tool_call_is_not_configured_by_default() -> None:
    manager = _manager("""
let initial_state = 0
let on_event ctx st ev =
  match ev with
  | `Session_start -> Task.bind(Tool.call("echo", `Null), fun r -> Task.pure(1))
  | _ -> Task.pure(st)
""")
    with pytest.raises(HandlerFailed, match="Tool.call is not configured"):
        manager.handle_event(SessionStart(), session_id="s", history=HISTORY)
    assert manager.current_state() == 0
    assert manager.queued_events() == []


def test_model_call_recipe_result_reaches_the_script() -> None:
    seen = []

    def recipe(payload: Any) -> ModelOk:
        seen.append(payload)
        return ModelOk({"label": "spam"})

    source = """
let initial_state = ""
let on_event ctx st ev =
  match ev with
  | `Turn_start ->
    let* result = Model.call_text("classify", "buy now") in
    (match result with
     | `Ok(json) -> Task.pure(Json.stringify(json))
     | `Refused(m) -> Task.pure("refused " ++ m)
     | `Error(m) -> Task.pure("error " ++ m))
  | _ -> Task.pure(st)
"""
    from runtime.capabilities import ModelRecipe

    manager = ModeratorManager.create(
        compile_script(source), Capabilities().with_recipes(ModelRecipe("classify", recipe)),
        EntryAllocator("t"))
    manager.handle_event(TurnStart(), session_id="s", history=HISTORY)
    assert seen == ["buy now"]
    assert manager.current_state() == '{"label":"spam"}'


def test_summariser_script_spawns_and_reacts_to_completion(tmp_path: Path) -> None:
    calls = []

    def summarise(payload: Any) -> ModelOk:
        calls.append(payload)
        return ModelOk({"summary": "they said " + payload["text"]})

    session = Session.open(prompt_in(tmp_path, script="summariser.chatml"),
                           recipes={"summarise": summarise})
    model = ScriptedModel([[assistant("the first answer")], [assistant("second")]])
    session.run_turn(model)
    assert session.executor is not None
    session.executor.wait_all()
    assert session.manager is not None
    assert len(session.manager.queued_events()) == 1
    session.add_user_message("and now?")
    session.run_turn(model)  # turn_start drains the completion before the request
    assert calls == [{"text": "the first answer"}]
    first = model.requests[1].input[0]
    assert first["role"] == "developer"
    assert first["content"][0]["text"] == \
        "Summary of the conversation so far: they said the first answer"
    state = session.manager.current_state()
    assert state["summaries"] == 1
    session.close()


def test_summariser_script_reports_failed_jobs(tmp_path: Path) -> None:
    sink = LogSink()
    session = Session.open(prompt_in(tmp_path, script="summariser.chatml"),
                           recipes={"summarise": lambda payload: ModelError("offline")},
                           capabilities=Capabilities(on_log=sink))
    session.run_turn(ScriptedModel([[assistant("answer")]]))
    session.close()
    session.drain()
    assert sink.messages == ["summary job model-job-1 failed: offline"]
    assert session.manager is not None
    assert session.manager.current_state()["failures"] == 1
