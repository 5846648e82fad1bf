"""Unit and property tests: entry ids, the allocator, overlay projection, session files."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runtime.errors import SnapshotDecodeError, SnapshotMismatch
from runtime.ids import EntryAllocator, EntryId, InvalidEntryId
from runtime.moderation import AppendItem, DeleteItem, Halt, PrependSystem, ReplaceItem
from runtime.overlay import (
    CANONICAL,
    Overlay,
    apply_ops,
    overlay_from_json,
    overlay_to_json,
    project,
)
from runtime.prompt_checks import load_prompt
from runtime.session import Session
from runtime.store import load_record
from tests.runtime.support import ScriptedModel, assistant, entries, prompt_in, user_item


@given(st.text(st.characters(blacklist_categories=("Cs",)), min_size=1), st.integers(0, 10**12))
@settings(max_examples=200, deadline=None)
def test_entry_ids_round_trip(namespace: str, sequence: int) -> None:
    text = str(EntryId(namespace, sequence))
    assert EntryId.parse(text) == EntryId(namespace, sequence)


@pytest.mark.parametrize("text", ["", "3:abc", "0::1", "4:abc:1", "3:abc:01", "x:abc:1",
                                  "3:abc:-1", "13:abc.md/stream:7x"])
def test_malformed_entry_ids_are_refused(text: str) -> None:
    with pytest.raises(InvalidEntryId):
        EntryId.parse(text)


def test_entry_id_uses_the_byte_length_of_the_namespace() -> None:
    assert str(EntryId("abc.md/stream", 7)) == "13:abc.md/stream:7"
    assert str(EntryId("é", 0)) == "2:é:0"


def test_allocator_reserves_atomically_across_threads() -> None:
    allocator = EntryAllocator("n")
    taken: list[str] = []
    lock = threading.Lock()

    def work() -> None:
        for _ in range(200):
            batch = allocator.reserve(3)
            with lock:
                taken.extend(batch)
            assert [EntryId.parse(i).sequence for i in batch] == \
                list(range(EntryId.parse(batch[0]).sequence,
                           EntryId.parse(batch[0]).sequence + 3))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(taken)) == 2400 and allocator.next_sequence == 2400
    with pytest.raises(ValueError):
        allocator.reserve(-1)
    assert allocator.next_sequence == 2400


HISTORY = entries(*[user_item(str(i)) for i in range(6)])
ITEM = {"type": "message", "role": "user", "content": "x"}


def _op(draw_kind: int, target: int, text: str) -> object:
    target_id = HISTORY[target].entry_id
    return [PrependSystem(text), AppendItem(ITEM, text), ReplaceItem(target_id, ITEM, text),
            DeleteItem(target_id), Halt(text)][draw_kind]


OPS = st.lists(st.builds(_op, st.integers(0, 4), st.integers(0, 5), st.text(max_size=3)),
               max_size=12)


@given(st.lists(OPS, max_size=4))
@settings(max_examples=150, deadline=None)
def test_projection_invariants(batches: list[list[object]]) -> None:
    allocator = EntryAllocator("o")
    overlay = Overlay()
    for ops in batches:
        before = overlay
        overlay, change = apply_ops(overlay, ops, allocator, script_id="m", source_hash="h",
                                    phase="p")
        assert (change is None) == (not ops)
        assert overlay.revision == before.revision + (1 if ops else 0)
        assert overlay.next_change_id == before.next_change_id + len(ops)
    projected = project(HISTORY, overlay)
    deleted = {t.target_id for t in overlay.tombstones}
    replaced = {r.target_id: r for r in overlay.replacements}
    canonical = [e for e in projected if e.entry_id in {h.entry_id for h in HISTORY}]
    assert [e.entry_id for e in canonical] == \
        [h.entry_id for h in HISTORY if h.entry_id not in deleted]
    for entry in canonical:
        assert (entry.provenance.kind == CANONICAL) == (entry.entry_id not in replaced)
    prepended = [e.entry_id for e in projected[:len(overlay.prepended)]]
    assert prepended == [p.entry_id for p in overlay.prepended]
    appended = [e.entry_id for e in projected[len(projected) - len(overlay.appended):]]
    assert appended == [a.entry_id for a in overlay.appended]
    assert len({r.target_id for r in overlay.replacements}) == len(overlay.replacements)
    assert len({t.target_id for t in overlay.tombstones}) == len(overlay.tombstones)
    assert overlay_from_json(json.loads(json.dumps(overlay_to_json(overlay)))) == overlay


def test_session_record_refuses_a_changed_script(tmp_path: Path) -> None:
    session = Session.open(prompt_in(tmp_path, script="guard.chatml"))
    session.run(ScriptedModel([[assistant("hi")]]))
    session.save(tmp_path / "s.json")
    (tmp_path / "guard.chatml").write_text(
        (tmp_path / "guard.chatml").read_text() + "\nlet extra = 1\n")
    with pytest.raises(SnapshotMismatch, match="source hash"):
        Session.restore(load_prompt(tmp_path / "chat.chatmd"), tmp_path / "s.json")


def test_session_record_corruption_is_reported(tmp_path: Path) -> None:
    session = Session.open(prompt_in(tmp_path))
    session.run(ScriptedModel([[assistant("hi")]]))
    session.save(tmp_path / "s.json")
    data = json.loads((tmp_path / "s.json").read_text())
    data["entries"][1]["entry_id"] = data["entries"][0]["entry_id"]
    (tmp_path / "bad.json").write_text(json.dumps(data))
    with pytest.raises(SnapshotDecodeError, match=r"entries\[1\]: duplicate entry id"):
        load_record(tmp_path / "bad.json")
    (tmp_path / "cut.json").write_text((tmp_path / "s.json").read_text()[:40])
    with pytest.raises(SnapshotDecodeError, match="not valid JSON"):
        load_record(tmp_path / "cut.json")
    with pytest.raises(SnapshotDecodeError, match="cannot read"):
        load_record(tmp_path / "missing.json")


def test_saved_session_without_moderator_resumes_plainly(tmp_path: Path) -> None:
    session = Session.open(prompt_in(tmp_path))
    session.run(ScriptedModel([[assistant("hi")]]))
    session.save(tmp_path / "s.json")
    restored = Session.restore(load_prompt(tmp_path / "chat.chatmd"), tmp_path / "s.json")
    assert restored.history == session.history
    assert restored.allocator.next_sequence == session.allocator.next_sequence
