"""The real moderator scripts of tests/runtime/scripts end to end, and UI approvals."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatml.values import Variant
from runtime.errors import AwaitingUiInput, ModerationError, SnapshotError
from runtime.ids import EntryAllocator
from runtime.manager import ModeratorManager
from runtime.moderation import TurnEnd, TurnStart
from runtime.operations import AskChoice, AskText
from runtime.session import Session
from tests.runtime.support import (
    ScriptedModel,
    assistant,
    compile_script,
    entries,
    function_call,
    prompt_in,
    shown,
    user_item,
)


def test_redactor_replaces_secret_items_in_the_effective_history_only(tmp_path: Path) -> None:
    session = Session.open(prompt_in(tmp_path, script="redactor.chatml"),
                           runners={"search": lambda payload: "password: SECRET-42"})
    model = ScriptedModel([[function_call("search", "{}", "c1")],
                           [assistant("the SECRET is out")], [assistant("next")]])
    session.run(model)
    output = next(e for e in session.history if e.item.get("type") == "function_call_output")
    assert output.item["output"] == "password: SECRET-42"  # canonical history keeps it
    follow_up = model.requests[1].input
    redacted_output = next(i for i in follow_up if i.get("type") == "function_call_output")
    assert redacted_output == {"type": "function_call_output", "call_id": "c1",
                               "output": "[redacted]"}
    effective = session.effective_entries()
    answer = session.history[-1]
    replaced = next(e for e in effective if e.entry_id == answer.entry_id)
    assert replaced.item["content"][0]["text"] == "[redacted]"
    assert replaced.provenance.kind == "replacement"
    assert session.manager is not None
    assert session.manager.current_state() == {"redacted": 2}
    session.add_user_message("what now?")
    session.run_turn(model)
    assert "SECRET" not in str(model.requests[2].input)


UI_SCRIPT = """
let initial_state = ""
let on_event ctx st ev =
  match ev with
  | `Turn_start ->
    let* () = Turn.prepend_system("before") in
    let* () = Runtime.emit(`Queued("buffered")) in
    let* answer = Approval.ask_text("continue?") in
    let* () = Ui.notify("answered " ++ answer) in
    Task.pure(answer)
  | `Turn_end -> Approval.ask_choice("pick", ["a", "b"])
  | _ -> Task.pure(st)
"""


def _ui_manager() -> ModeratorManager:
    return ModeratorManager.create(compile_script(UI_SCRIPT, surface="ui_moderator"),
                                   allocator=EntryAllocator("t"))


def test_approval_suspends_then_commits_on_resume() -> None:
    manager = _ui_manager()
    history = entries(user_item("hi"))
    manager.handle_event(TurnStart(), session_id="s", history=history)
    assert manager.pending_ui_request() == AskText("continue?")
    assert manager.current_state() == "" and manager.queued_events() == []
    with pytest.raises(AwaitingUiInput, match="waiting for UI input"):
        manager.handle_event(TurnEnd(), session_id="s", history=history)
    with pytest.raises(SnapshotError):
        manager.snapshot()
    manager.enqueue_internal_event(Variant("Host"))
    with pytest.raises(ModerationError, match="requires a non-empty response"):
        manager.resume_ui_request("   ")
    (outcome,) = manager.resume_ui_request("  approved  ")
    assert manager.current_state() == "approved"
    assert outcome.ui_notifications == ("answered approved",)
    assert outcome.change is not None and outcome.change.revision == 1
    assert [shown(v) for v in manager.queued_events()] == ["`Host", "`Queued(buffered)"]
    with pytest.raises(ModerationError, match="not waiting for UI input"):
        manager.resume_ui_request("again")


def test_approval_choice_must_match() -> None:
    manager = _ui_manager()
    manager.handle_event(TurnEnd(), session_id="s", history=[])
    assert manager.pending_ui_request() == AskChoice("pick", ("a", "b"))
    with pytest.raises(ModerationError, match="must match one of the declared choices"):
        manager.resume_ui_request("c")
    manager.resume_ui_request(" b ")
    assert manager.current_state() == "b"


def test_nested_approval_fails_and_commits_nothing() -> None:
    manager = ModeratorManager.create(compile_script("""
let initial_state = ""
let on_event ctx st ev =
  let* a = Approval.ask_text("one?") in
  let* b = Approval.ask_text("two?") in
  Task.pure(a ++ b)
""", surface="ui_moderator"))
    manager.handle_event(TurnStart(), session_id="s", history=[])
    with pytest.raises(ModerationError, match="Nested UI approval is not allowed."):
        manager.resume_ui_request("yes")
    assert manager.pending_ui_request() is None
    assert manager.current_state() == ""


def test_ui_modules_do_not_exist_on_the_moderator_surface() -> None:
    with pytest.raises(ModerationError, match="Unknown variable 'Ui'"):
        compile_script("let initial_state = 0\n"
                       "let on_event ctx st ev = Task.bind(Ui.notify(\"x\"), fun u -> Task.pure(st))\n")


def test_a_turn_refuses_to_run_a_tool_while_an_approval_is_pending() -> None:
    from runtime.ids import Entry
    from runtime.turns import TurnDriver

    manager = ModeratorManager.create(compile_script("""
let initial_state = ""
let on_event ctx st ev =
  match ev with
  | `Pre_tool_call(call) -> Approval.ask_choice("run " ++ call.name ++ "?", ["yes", "no"])
  | _ -> Task.pure(st)
""", surface="ui_moderator"), allocator=EntryAllocator("t"))
    driver = TurnDriver(manager, "s")
    call = Entry("1:t:9", function_call("search", "{}"))
    with pytest.raises(AwaitingUiInput, match="asked for UI input during pre_tool_call"):
        driver.moderate_tool_call(entries(user_item("hi")), [], call)
    assert manager.pending_ui_request() == AskChoice("run search?", ("yes", "no"))
