"""The overlay: moderator edits kept on top of canonical history, and its projection
(moderator-runtime spec 2.1-2.4).

* :class:`Overlay` -- immutable: prepended and appended inserted entries,
  replacements and tombstones (at most one per target), the halt reason, the
  revision and the next change id. :func:`apply_ops` returns the next overlay
  and the :class:`OverlayChange` record of one commit.
* :func:`project` -- the *effective entries*: prepends, then canonical
  entries minus tombstoned ones with replacements substituted, then appends.
  Tombstones and replacements of inserted entries apply to them too. Pure,
  recomputed on demand; canonical history is never touched.
* :func:`overlay_to_json` / :func:`overlay_from_json` -- the snapshot layout
  of spec 6.1.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from runtime.ids import Entry, EntryAllocator, Item
from runtime.items import developer_message, item_problem
from runtime.moderation import (
    AppendItem,
    DeleteItem,
    Halt,
    OverlayOp,
    PrependSystem,
    ReplaceItem,
)


@attrs.frozen
class Inserted:
    """A prepended or appended entry; ``script_label`` is the id the script gave (appends)."""

    entry_id: str
    change_id: int
    item: Item
    script_label: str | None


@attrs.frozen
class Replacement:
    target_id: str
    change_id: int
    item: Item
    script_label: str | None


@attrs.frozen
class Tombstone:
    target_id: str
    change_id: int


@attrs.frozen
class Overlay:
    """The durable edit list of one moderated session (spec 2.1)."""

    revision: int = 0
    next_change_id: int = 0
    prepended: tuple[Inserted, ...] = ()
    appended: tuple[Inserted, ...] = ()
    replacements: tuple[Replacement, ...] = ()
    tombstones: tuple[Tombstone, ...] = ()
    halted_reason: str | None = None

    @property
    def is_empty(self) -> bool:
        return not (self.prepended or self.appended or self.replacements or self.tombstones)

    def inserted_ids(self) -> set[str]:
        return {entry.entry_id for entry in (*self.prepended, *self.appended)}


CANONICAL = "canonical"
INSERTED = "inserted"
REPLACEMENT = "replacement"


@attrs.frozen
class Provenance:
    """Where an effective entry comes from: ``canonical``, ``inserted`` or ``replacement``."""

    kind: str
    change_id: int | None = None
    target_id: str | None = None


_CANONICAL = Provenance(CANONICAL)


@attrs.frozen
class EffectiveEntry:
    """One entry of the effective history."""

    entry_id: str
    item: Item
    provenance: Provenance


@attrs.frozen
class ChangeOperation:
    """One op of a commit: ``inserted``/``replaced``/``deleted``/``halted`` with its change id."""

    kind: str
    change_id: int
    entry_id: str | None = None
    position: str | None = None
    """``prepended`` or ``appended`` for an insert."""


@attrs.frozen
class OverlayChange:
    """The record of one commit with overlay ops (spec 2.4)."""

    revision: int
    operations: tuple[ChangeOperation, ...]
    affected_entry_ids: tuple[str, ...]
    allocated_inserted_ids: tuple[str, ...]
    script_id: str
    script_source_hash: str
    phase: str
    visible_history_changed: bool


def count_inserts(ops: Iterable[OverlayOp]) -> int:
    return sum(1 for op in ops if isinstance(op, PrependSystem | AppendItem))


def apply_ops(overlay: Overlay, ops: Sequence[OverlayOp], allocator: EntryAllocator, *,
              script_id: str, source_hash: str, phase: str
              ) -> tuple[Overlay, OverlayChange | None]:
    """The overlay after ``ops`` (already validated) and the change record (None for no ops).

    Ids of all insertions are reserved from ``allocator`` at once, so it
    advances by exactly the number of inserts.
    """
    if not ops:
        return overlay, None
    fresh_ids = iter(allocator.reserve(count_inserts(ops)))
    prepended = list(overlay.prepended)
    appended = list(overlay.appended)
    replacements = list(overlay.replacements)
    tombstones = list(overlay.tombstones)
    halted_reason = overlay.halted_reason
    change_id = overlay.next_change_id
    operations: list[ChangeOperation] = []
    affected: list[str] = []
    allocated: list[str] = []
    visible = False
    for op in ops:
        if isinstance(op, PrependSystem | AppendItem):
            entry_id = next(fresh_ids)
            if isinstance(op, PrependSystem):
                prepended.append(Inserted(entry_id, change_id, developer_message(op.text), None))
                position = "prepended"
            else:
                appended.append(Inserted(entry_id, change_id, op.item, op.label))
                position = "appended"
            operations.append(ChangeOperation("inserted", change_id, entry_id, position))
            allocated.append(entry_id)
            affected.append(entry_id)
            visible = True
        elif isinstance(op, ReplaceItem):
            replacements = [r for r in replacements if r.target_id != op.target_id]
            replacements.append(Replacement(op.target_id, change_id, op.item, op.label))
            operations.append(ChangeOperation("replaced", change_id, op.target_id))
            affected.append(op.target_id)
            visible = True
        elif isinstance(op, DeleteItem):
            tombstones = [t for t in tombstones if t.target_id != op.target_id]
            tombstones.append(Tombstone(op.target_id, change_id))
            operations.append(ChangeOperation("deleted", change_id, op.target_id))
            affected.append(op.target_id)
            visible = True
        elif isinstance(op, Halt):
            halted_reason = op.reason
            operations.append(ChangeOperation("halted", change_id))
        change_id += 1
    revision = overlay.revision + 1
    updated = Overlay(revision, change_id, tuple(prepended), tuple(appended),
                      tuple(replacements), tuple(tombstones), halted_reason)
    change = OverlayChange(revision, tuple(operations), tuple(dict.fromkeys(affected)),
                           tuple(allocated), script_id, source_hash, phase, visible)
    return updated, change


def project(history: Sequence[Entry], overlay: Overlay) -> list[EffectiveEntry]:
    """The effective entries of ``history`` under ``overlay`` (spec 2.3)."""
    if overlay.is_empty:
        return [EffectiveEntry(entry.entry_id, entry.item, _CANONICAL) for entry in history]
    replaced = {r.target_id: r for r in overlay.replacements}
    deleted = {t.target_id for t in overlay.tombstones}
    result: list[EffectiveEntry] = []

    def add(entry_id: str, item: Item, provenance: Provenance) -> None:
        if entry_id in deleted:
            return
        replacement = replaced.get(entry_id)
        if replacement is not None:
            result.append(EffectiveEntry(entry_id, replacement.item,
                                         Provenance(REPLACEMENT, replacement.change_id, entry_id)))
        else:
            result.append(EffectiveEntry(entry_id, item, provenance))

    for inserted in overlay.prepended:
        add(inserted.entry_id, inserted.item, Provenance(INSERTED, inserted.change_id))
    for entry in history:
        add(entry.entry_id, entry.item, _CANONICAL)
    for inserted in overlay.appended:
        add(inserted.entry_id, inserted.item, Provenance(INSERTED, inserted.change_id))
    return result


def effective_items(history: Sequence[Entry], overlay: Overlay) -> list[Item]:
    """The items of :func:`project` (what a request sends)."""
    if overlay.is_empty:
        return [entry.item for entry in history]
    return [entry.item for entry in project(history, overlay)]


# --------------------------------------------------------------------------- snapshot JSON


def overlay_to_json(overlay: Overlay) -> dict[str, Any]:
    def inserted(entry: Inserted) -> dict[str, Any]:
        return {"entry_id": entry.entry_id, "change_id": entry.change_id,
                "item": dict(entry.item), "script_label": entry.script_label}

    return {
        "revision": overlay.revision,
        "next_change_id": overlay.next_change_id,
        "prepended": [inserted(entry) for entry in overlay.prepended],
        "appended": [inserted(entry) for entry in overlay.appended],
        "replacements": [{"target_id": r.target_id, "change_id": r.change_id,
                          "item": dict(r.item), "script_label": r.script_label}
                         for r in overlay.replacements],
        "tombstones": [{"target_id": t.target_id, "change_id": t.change_id}
                       for t in overlay.tombstones],
        "halted_reason": overlay.halted_reason,
    }


class OverlayDecodeError(ValueError):
    """Overlay JSON that does not have the snapshot layout; the message names the path."""


def _get(data: Any, key: str, kinds: type | tuple[type, ...], path: str,
         optional: bool = False) -> Any:
    if not isinstance(data, dict):
        raise OverlayDecodeError(f"{path}: expected an object")
    if key not in data:
        raise OverlayDecodeError(f"{path}: missing field {key!r}")
    value = data[key]
    if optional and value is None:
        return None
    if not isinstance(value, kinds) or (isinstance(value, bool) and kinds is int):
        raise OverlayDecodeError(f"{path}.{key}: unexpected value {value!r}")
    return value


def _item(data: Any, path: str) -> Item:
    item = _get(data, "item", dict, path)
    problem = item_problem(item)
    if problem is not None:
        raise OverlayDecodeError(f"{path}.item: not a Responses item: {problem}")
    return item


def _list(data: Any, key: str, path: str) -> list[Any]:
    return _get(data, key, list, path)


def overlay_from_json(data: Any, path: str = "overlay") -> Overlay:
    """The overlay of :func:`overlay_to_json`; :class:`OverlayDecodeError` names what is wrong."""
    def inserted(entry: Any, where: str) -> Inserted:
        return Inserted(_get(entry, "entry_id", str, where), _get(entry, "change_id", int, where),
                        _item(entry, where), _get(entry, "script_label", str, where, True))

    prepended = tuple(inserted(e, f"{path}.prepended[{i}]")
                      for i, e in enumerate(_list(data, "prepended", path)))
    appended = tuple(inserted(e, f"{path}.appended[{i}]")
                     for i, e in enumerate(_list(data, "appended", path)))
    replacements = tuple(
        Replacement(_get(r, "target_id", str, f"{path}.replacements[{i}]"),
                    _get(r, "change_id", int, f"{path}.replacements[{i}]"),
                    _item(r, f"{path}.replacements[{i}]"),
                    _get(r, "script_label", str, f"{path}.replacements[{i}]", True))
        for i, r in enumerate(_list(data, "replacements", path)))
    tombstones = tuple(
        Tombstone(_get(t, "target_id", str, f"{path}.tombstones[{i}]"),
                  _get(t, "change_id", int, f"{path}.tombstones[{i}]"))
        for i, t in enumerate(_list(data, "tombstones", path)))
    return Overlay(_get(data, "revision", int, path), _get(data, "next_change_id", int, path),
                   prepended, appended, replacements, tombstones,
                   _get(data, "halted_reason", str, path, True))


__all__ = [
    "CANONICAL", "INSERTED", "REPLACEMENT", "ChangeOperation", "EffectiveEntry", "Inserted",
    "Overlay", "OverlayChange", "OverlayDecodeError", "Provenance", "Replacement", "Tombstone",
    "apply_ops", "count_inserts", "effective_items", "overlay_from_json", "overlay_to_json",
    "project",
]
