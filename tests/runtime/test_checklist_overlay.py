"""Moderator-runtime checklist 21-34 and 73: the overlay, its commits and its export."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatml.values import Variant
from runtime.errors import HandlerFailed, UnknownTarget
from runtime.ids import EntryAllocator, EntryId
from runtime.manager import ModeratorManager
from runtime.moderation import InternalEvent, TurnEnd, TurnStart
from runtime.overlay import INSERTED, REPLACEMENT
from runtime.prompt_checks import check_prompt_text
from runtime.session import Session
from tests.runtime.support import (
    ScriptedModel,
    assistant,
    compile_script,
    entries,
    prompt_in,
    shown,
    user_item,
)


def _manager(source: str) -> tuple[ModeratorManager, EntryAllocator]:
    allocator = EntryAllocator("t/stream", 10)
    return ModeratorManager.create(compile_script(source), allocator=allocator), allocator


def _on(phase_tag: str, body: str) -> str:
    return f"""
let initial_state = 0
let on_event ctx st ev =
  match ev with
  | `{phase_tag} -> {body}
  | _ -> Task.pure(st)
"""


HISTORY = entries(user_item("one"), assistant("two", "msg_two"), user_item("three"))


def test_c21_prepends_come_first_in_order_as_developer_messages() -> None:
    manager, _ = _manager(_on("Turn_start", """
    let* () = Turn.prepend_system("A") in
    let* () = Turn.prepend_system("B") in Task.pure(st)"""))
    manager.handle_event(TurnStart(), session_id="s", history=HISTORY)
    effective = manager.effective_history(HISTORY)
    assert [item["role"] for item in effective[:2]] == ["developer", "developer"]
    assert [item["content"][0]["text"] for item in effective[:2]] == ["A", "B"]
    assert effective[2:] == [entry.item for entry in HISTORY]


def test_c22_appended_item_stays_last_after_new_entries(tmp_path: Path) -> None:
    source = """
let initial_state = 0
let on_event ctx st ev =
  match ev with
  | `Turn_end ->
    if st == 0 then
      let* () = Turn.append_item(Item.user_text("x", "appended note")) in
      let* () = Runtime.request_turn() in
      Task.pure(1)
    else Task.pure(st)
  | _ -> Task.pure(st)
"""
    session = Session.open(prompt_in(tmp_path, script_source=source))
    model = ScriptedModel([[assistant("first")], [assistant("second")]])
    session.run(model)
    second_input = model.requests[1].input
    assert second_input[-1]["content"][0]["text"] == "appended note"
    assert second_input[-2]["content"][0]["text"] == "first"
    effective = session.effective_history()
    assert effective[-1]["content"][0]["text"] == "appended note"
    assert effective[-2]["content"][0]["text"] == "second"


def test_c23_replacement_keeps_id_and_position_canonical_unchanged() -> None:
    target = HISTORY[1].entry_id
    manager, _ = _manager(_on("Turn_start", f"""
    Task.bind(Turn.replace_item("{target}", Item.assistant_text("y", "replaced")),
              fun u -> Task.pure(st))"""))
    before = [dict(entry.item) for entry in HISTORY]
    manager.handle_event(TurnStart(), session_id="s", history=HISTORY)
    effective = manager.effective_entries(HISTORY)
    assert [e.entry_id for e in effective] == [e.entry_id for e in HISTORY]
    assert effective[1].item["content"][0]["text"] == "replaced"
    assert effective[1].provenance.kind == REPLACEMENT
    assert [entry.item for entry in HISTORY] == before


def test_c24_second_replacement_wins_with_one_record() -> None:
    target = HISTORY[0].entry_id
    manager, _ = _manager(_on("Turn_start", f"""
    let* () = Turn.replace_item("{target}", Item.user_text("a", "first")) in
    let* () = Turn.replace_message("{target}", Item.user_text("b", "second")) in
    Task.pure(st)"""))
    manager.handle_event(TurnStart(), session_id="s", history=HISTORY)
    assert len(manager.overlay.replacements) == 1
    assert manager.overlay.replacements[0].script_label == "b"
    assert manager.effective_history(HISTORY)[0]["content"][0]["text"] == "second"


def test_c25_deleted_entry_is_absent_from_effective_history_and_request(tmp_path: Path) -> None:
    source = """
let initial_state = 0
let on_event ctx st ev =
  match ev with
  | `Turn_start ->
    (match Context.last_user_item(ctx) with
     | `Some(item) -> Task.bind(Turn.delete_item(Item.id(item)), fun u -> Task.pure(st))
     | `None -> Task.pure(st))
  | _ -> Task.pure(st)
"""
    session = Session.open(prompt_in(tmp_path, script_source=source))
    model = ScriptedModel([[assistant("hi")]])
    session.run_turn(model)
    texts = [item["content"][0]["text"] for item in model.requests[0].input]
    assert texts == ["You are helpful."]
    assert session.history[1].item["content"][0]["text"] == "Hello"  # canonical unchanged


def test_c26_unknown_target_fails_and_changes_nothing() -> None:
    manager, allocator = _manager(_on("Turn_start", """
    let* () = Turn.prepend_system("first") in
    let* () = Turn.delete_item("bogus") in Task.pure(st + 1)"""))
    with pytest.raises(UnknownTarget, match='unknown canonical moderation target "bogus"'):
        manager.handle_event(TurnStart(), session_id="s", history=HISTORY)
    assert manager.current_state() == 0
    assert manager.overlay.revision == 0
    assert manager.overlay.prepended == ()
    assert allocator.next_sequence == 10


def test_c27_append_then_fail_leaves_overlay_unchanged() -> None:
    manager, allocator = _manager(_on("Turn_start", """
    let* () = Turn.append_item(Item.user_text("x", "note")) in Task.fail("boom")"""))
    with pytest.raises(HandlerFailed, match="boom"):
        manager.handle_event(TurnStart(), session_id="s", history=HISTORY)
    assert manager.overlay.appended == ()
    assert manager.overlay.revision == 0
    assert allocator.next_sequence == 10


def test_c28_emit_then_fail_leaves_queue_unchanged() -> None:
    manager, _ = _manager(_on("Turn_start", """
    let* () = Runtime.emit(`Lost) in Task.fail("boom")"""))
    manager.enqueue_internal_event(Variant("Earlier"))
    with pytest.raises(HandlerFailed):
        manager.handle_event(TurnStart(), session_id="s", history=HISTORY)
    assert [shown(v) for v in manager.queued_events()] == ["`Earlier"]


def test_c29_catch_discards_only_the_protected_emits() -> None:
    manager, _ = _manager(_on("Turn_start", """
    let* () = Runtime.emit("before") in
    let* () = Task.catch(
      Task.bind(Runtime.emit("inside"), fun u -> Task.fail("no")),
      fun message -> Runtime.emit("handler " ++ message)) in
    Task.pure(st)"""))
    manager.handle_event(TurnStart(), session_id="s", history=HISTORY)
    assert manager.queued_events() == ["before", "handler no"]


def test_c30_overlay_committed_at_turn_start_is_in_that_request(tmp_path: Path) -> None:
    source = _on("Turn_start", 'Task.bind(Turn.prepend_system("now"), fun u -> Task.pure(st))')
    session = Session.open(prompt_in(tmp_path, script_source=source))
    model = ScriptedModel([[assistant("hi")]])
    session.run_turn(model)
    first = model.requests[0].input[0]
    assert first["role"] == "developer"
    assert first["content"][0]["text"] == "now"


def test_c31_prepend_and_replace_make_one_change_record() -> None:
    target = HISTORY[2].entry_id
    manager, _ = _manager(_on("Turn_start", f"""
    let* () = Turn.prepend_system("p") in
    let* () = Turn.replace_item("{target}", Item.user_text("r", "q")) in Task.pure(st)"""))
    subscription = manager.subscribe()
    outcome = manager.handle_event(TurnStart(), session_id="s", history=HISTORY)
    changes = subscription.drain_changes()
    assert manager.overlay_revision == 1
    assert changes == [outcome.change]
    change = changes[0]
    assert [op.kind for op in change.operations] == ["inserted", "replaced"]
    assert change.visible_history_changed is True
    assert change.revision == 1
    assert change.script_id == "main"
    assert change.phase == "turn_start"
    assert target in change.affected_entry_ids


def test_c32_halt_only_commit_is_not_a_visible_change(tmp_path: Path) -> None:
    source = _on("Turn_start", 'Task.bind(Turn.halt("paused"), fun u -> Task.pure(st))')
    session = Session.open(prompt_in(tmp_path, script_source=source))
    assert session.manager is not None
    subscription = session.manager.subscribe()
    model = ScriptedModel([[assistant("hi")]])
    session.run(model)
    (change,) = subscription.drain_changes()
    assert change.visible_history_changed is False
    assert session.manager.overlay.halted_reason == "paused"
    assert len(model.requests) == 1 and not session.ended  # the driver kept running


def test_c33_commit_without_overlay_ops_has_no_change() -> None:
    manager, _ = _manager(_on("Turn_start", "Task.pure(st + 1)"))
    subscription = manager.subscribe()
    outcome = manager.handle_event(TurnStart(), session_id="s", history=HISTORY)
    assert outcome.change is None
    assert manager.overlay_revision == 0
    assert subscription.drain_changes() == []


def test_c34_two_inserts_take_two_consecutive_ids() -> None:
    manager, allocator = _manager(_on("Turn_start", """
    let* () = Turn.prepend_system("a") in
    let* () = Turn.append_notice("b") in Task.pure(st)"""))
    outcome = manager.handle_event(TurnStart(), session_id="s", history=HISTORY)
    assert allocator.next_sequence == 12
    ids = [EntryId.parse(i) for i in outcome.change.allocated_inserted_ids]
    assert [i.sequence for i in ids] == [10, 11]
    assert manager.overlay.appended[0].script_label == "system:b"
    assert all(e.provenance.kind == INSERTED for e in manager.effective_entries(HISTORY)
               if e.entry_id in outcome.change.allocated_inserted_ids)


def test_c34_inserted_entries_are_targets_too() -> None:
    manager, _ = _manager("""
let initial_state = 0
let on_event ctx st ev =
  match ev with
  | `Turn_start -> Task.bind(Turn.append_item(Item.user_text("x", "note")), fun u -> Task.pure(st))
  | `Delete(id) -> Task.bind(Turn.delete_item(id), fun u -> Task.pure(st))
  | _ -> Task.pure(st)
""")
    outcome = manager.handle_event(TurnStart(), session_id="s", history=HISTORY)
    inserted = outcome.change.allocated_inserted_ids[0]
    manager.handle_event(InternalEvent(Variant("Delete", (inserted,))), session_id="s",
                         history=HISTORY)
    assert [e.entry_id for e in manager.effective_entries(HISTORY)] == \
        [e.entry_id for e in HISTORY]


def test_c73_export_materialises_the_overlay_in_order(tmp_path: Path) -> None:
    source = """
let initial_state = 0
let on_event ctx st ev =
  match ev with
  | `Turn_end ->
    (match Context.last_user_item(ctx) with
     | `Some(user) ->
       (match Context.last_assistant_item(ctx) with
        | `Some(answer) ->
          let* () = Turn.prepend_system("be brief") in
          let* () = Turn.append_item(Item.user_text("a", "appended")) in
          let* () = Turn.replace_item(Item.id(answer), Item.assistant_text("r", "[redacted]")) in
          let* () = Turn.delete_item(Item.id(user)) in
          let* () = Turn.halt("done for today") in
          Task.pure(st)
        | `None -> Task.pure(st))
     | `None -> Task.pure(st))
  | _ -> Task.pure(st)
"""
    session = Session.open(prompt_in(tmp_path, script_source=source))
    session.run_turn(ScriptedModel([[assistant("the answer")]]))
    text = session.export_chatmd()
    answer_id = session.history[-1].entry_id
    user_id = session.history[1].entry_id
    markers = [f'ochat-history-id="{session.history[0].entry_id}"', "be brief", "appended",
               f'id="moderation-replacement-{answer_id}"', "[redacted]",
               f'id="moderation-deletion-{user_id}"', 'id="moderation-halt"',
               "Session ended by moderator: done for today"]
    positions = [text.index(marker) for marker in markers]
    assert positions == sorted(positions)
    assert "the answer" in text  # canonical history is exported unchanged
    checked = check_prompt_text(text)
    assert not checked.has_errors, [str(d) for d in checked.diagnostics]
    assert [m.history_id for m in checked.prompt.items][:3] == \
        [e.entry_id for e in session.history]


def test_turn_end_overlay_ops_are_visible_in_the_next_request(tmp_path: Path) -> None:
    source = _on("Turn_end", 'Task.bind(Turn.prepend_system("later"), fun u -> Task.pure(st))')
    session = Session.open(prompt_in(tmp_path, script_source=source))
    model = ScriptedModel([[assistant("one")], [assistant("two")]])
    session.run_turn(model)
    assert all(item["role"] != "developer" for item in model.requests[0].input)
    session.add_user_message("again")
    session.run_turn(model)
    assert model.requests[1].input[0]["content"][0]["text"] == "later"


def test_invalid_item_payload_fails_the_handler() -> None:
    manager, _ = _manager(_on("Turn_end", """
    Task.bind(Turn.append_item(Item.create("x", `Object([{ key = "type"; value = `String("bogus") }]))),
              fun u -> Task.pure(st + 1))"""))
    with pytest.raises(HandlerFailed, match="not a Responses item: unknown item type 'bogus'"):
        manager.handle_event(TurnEnd(), session_id="s", history=HISTORY)
    assert manager.current_state() == 0
