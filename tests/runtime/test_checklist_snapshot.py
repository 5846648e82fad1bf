"""Moderator-runtime checklist 58-65: snapshots, restore validation, the artifact cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatml.values import Ref, Variant
from runtime.errors import SessionEnded, SnapshotDecodeError, SnapshotError, SnapshotMismatch
from runtime.ids import EntryAllocator
from runtime.manager import ModeratorManager
from runtime.moderation import SessionResume, TurnEnd, TurnStart
from runtime.registry import ModeratorRegistry
from runtime.snapshot import ModeratorSnapshot, load_snapshot, save_snapshot
from tests.runtime.support import compile_script, entries, prompt_in, shown, user_item

HISTORY = entries(user_item("hi"), namespace="t/stream")

SCRIPT = """
type state = { count : int; notes : string array }
let initial_state = { count = 0; notes = ["a"] }
let on_event ctx st ev =
  match ev with
  | `Turn_start ->
    let* () = Turn.prepend_system("be brief") in
    let* () = Turn.replace_item(Item.id(Array.get(ctx.items, 0)), Item.user_text("r", "hidden")) in
    let* () = Runtime.emit(`Later({ n = 1.5; tags = ["x"] })) in
    Task.pure({ count = st.count + 1; notes = Array.append(st.notes, ["b"]) })
  | `Turn_end -> Task.bind(Runtime.end_session("bye"), fun u -> Task.pure(st))
  | _ -> Task.pure(st)
"""


def _manager(source: str = SCRIPT, **options: object) -> ModeratorManager:
    return ModeratorManager.create(compile_script(source), allocator=EntryAllocator("t/stream", 1),
                                   **options)  # type: ignore[arg-type]


def test_c58_snapshot_holds_everything_and_round_trips(tmp_path: Path) -> None:
    manager = _manager()
    manager.handle_event(TurnStart(), session_id="s", history=HISTORY)
    snapshot = manager.snapshot()
    data = snapshot.to_json()
    assert data["format"] == "ochat-moderator-snapshot" and data["version"] == 1
    assert data["script_id"] == "main"
    assert data["script_source_hash"] == manager.artifact.source_hash
    assert len(data["script_source_hash"]) == 32  # MD5 hex
    assert data["current_state"]["record"][0] == ["count", {"int": 1}]
    assert data["queued_internal_events"][0]["variant"]["tag"] == "Later"
    assert data["halted"] is False
    assert data["overlay"]["revision"] == 1 and len(data["overlay"]["prepended"]) == 1
    save_snapshot(tmp_path / "m.json", snapshot)
    assert load_snapshot(tmp_path / "m.json") == snapshot
    assert json.loads((tmp_path / "m.json").read_text()) == data
    restored = _manager(snapshot=snapshot)
    assert restored.snapshot() == snapshot
    assert shown(restored.current_state()) == "{ count = 1; notes = [|a, b|] }"
    assert restored.effective_history(HISTORY) == manager.effective_history(HISTORY)


def test_c59_restore_with_another_source_hash_names_both_hashes() -> None:
    snapshot = _manager().snapshot()
    changed = compile_script(SCRIPT + "\nlet unused = 1\n")
    with pytest.raises(SnapshotMismatch) as caught:
        ModeratorManager.create(changed, snapshot=snapshot)
    assert snapshot.script_source_hash in caught.value.message
    assert changed.source_hash in caught.value.message


def test_c60_restore_with_another_script_id_fails() -> None:
    snapshot = _manager().snapshot()
    other = compile_script(SCRIPT, script_id="other")
    with pytest.raises(SnapshotMismatch, match="'main'.*'other'"):
        ModeratorManager.create(other, snapshot=snapshot)


def test_c61_snapshot_of_a_closure_in_state_names_the_path() -> None:
    manager = _manager("""
let initial_state = { cache = [fun x -> x + 1] }
let on_event ctx st ev = Task.pure(st)
""")
    with pytest.raises(SnapshotError) as caught:
        manager.snapshot()
    assert "current_state: root.cache[0]: closures are not serializable" in caught.value.message


def test_c61_hashtbl_in_queue_is_refused() -> None:
    manager = _manager()
    manager.enqueue_internal_event(Variant("Table", (Ref([]),)))
    with pytest.raises(SnapshotError, match=r"queued_internal_events\[0\]: root<Table>\[0\]: refs"):
        manager.snapshot()


def test_c62_restored_halted_session_refuses_events() -> None:
    manager = _manager()
    manager.handle_event(TurnEnd(), session_id="s", history=HISTORY)
    restored = _manager(snapshot=manager.snapshot())
    with pytest.raises(SessionEnded):
        restored.handle_event(SessionResume(), session_id="s", history=HISTORY)


def test_c63_restore_replays_no_change_and_keeps_the_revision() -> None:
    manager = _manager()
    manager.handle_event(TurnStart(), session_id="s", history=HISTORY)
    restored = _manager(snapshot=manager.snapshot())
    subscription = restored.subscribe()
    assert subscription.drain_changes() == []
    assert restored.overlay_revision == manager.overlay_revision == 1


def test_c64_snapshot_while_approval_pending_fails() -> None:
    manager = ModeratorManager.create(compile_script("""
let initial_state = ""
let on_event ctx st ev = Approval.ask_choice("pick", ["a", "b"])
""", surface="ui_moderator"))
    manager.handle_event(TurnStart(), session_id="s", history=HISTORY)
    with pytest.raises(SnapshotError, match="approval is suspended"):
        manager.snapshot()


def test_c65_compiling_the_same_script_twice_gives_one_artifact(tmp_path: Path) -> None:
    registry = ModeratorRegistry()
    prompt = prompt_in(tmp_path, script="guard.chatml")
    first = registry.compile(prompt.moderator)
    second = registry.compile(prompt_in(tmp_path, script="guard.chatml").moderator)
    assert first is second
    assert registry.compilations == 1
    assert len(registry) == 1


def test_restored_allocator_never_reuses_inserted_ids() -> None:
    manager = _manager()
    manager.handle_event(TurnStart(), session_id="s", history=HISTORY)
    inserted = manager.overlay.prepended[0].entry_id
    fresh = EntryAllocator("t/stream", 0)
    ModeratorManager.create(manager.artifact, allocator=fresh, snapshot=manager.snapshot())
    assert fresh.allocate() != inserted
    assert fresh.next_sequence > int(inserted.rsplit(":", 1)[1])


@pytest.mark.parametrize(("mutate", "fragment"), [
    (lambda d: d.pop("halted"), "missing halted"),
    (lambda d: d.update(version=2), "unsupported version 2"),
    (lambda d: d.update(current_state={"closure": 1}), "current_state: root: expected a snapshot"),
    (lambda d: d["overlay"].update(prepended=[{"entry_id": "x"}]), "overlay.prepended[0]"),
    (lambda d: d.update(extra=1), "unknown field(s) extra"),
])
def test_corrupt_snapshots_are_refused_with_a_reason(mutate: object, fragment: str) -> None:
    manager = _manager()
    manager.handle_event(TurnStart(), session_id="s", history=HISTORY)
    data = manager.snapshot().to_json()
    mutate(data)  # type: ignore[operator]
    with pytest.raises(SnapshotDecodeError) as caught:
        ModeratorSnapshot.from_json(data)
    assert fragment in caught.value.message


def test_snapshot_file_with_duplicate_keys_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text('{"format": "ochat-moderator-snapshot", "format": "x"}')
    with pytest.raises(SnapshotDecodeError, match="duplicate key 'format'"):
        load_snapshot(path)
