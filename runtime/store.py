"""Session records: canonical history, the allocator's position and the moderator snapshot,
as one versioned JSON file written atomically (moderator-runtime spec 6.5; DECISIONS 16).

::

    {"format": "ochat-session", "version": 1, "session_id": "...",
     "namespace": "<session id>/stream", "next_sequence": 12,
     "entries": [{"entry_id": "...", "item": {...}}, ...],
     "moderator": <moderator snapshot> | null, "ended_reason": null}

:func:`save_record` writes through :mod:`chatcommon.atomic` (a crash leaves the
old file or the new one); :func:`load_record` checks the whole file and
raises :class:`~runtime.errors.SnapshotDecodeError` naming what is wrong.
"""

from __future__ import annotations

import os
from typing import Any

import attrs

from chatcommon.atomic import atomic_write_text
from runtime.errors import SnapshotDecodeError
from runtime.ids import Entry, EntryId, InvalidEntryId
from runtime.items import item_problem
from runtime.snapshot import ModeratorSnapshot, dumps_json, loads_json

FORMAT = "ochat-session"
VERSION = 1
FIELDS = ("format", "version", "session_id", "namespace", "next_sequence", "entries",
          "moderator", "ended_reason")


@attrs.frozen
class SessionRecord:
    """Everything a session needs to resume."""

    session_id: str
    namespace: str
    next_sequence: int
    entries: tuple[Entry, ...]
    moderator: ModeratorSnapshot | None
    ended_reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "session_id": self.session_id,
            "namespace": self.namespace,
            "next_sequence": self.next_sequence,
            "entries": [entry.to_json() for entry in self.entries],
            "moderator": None if self.moderator is None else self.moderator.to_json(),
            "ended_reason": self.ended_reason,
        }

    @classmethod
    def from_json(cls, data: Any, what: str = "session") -> SessionRecord:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise SnapshotDecodeError(f'{what}: expected an object with "format": "{FORMAT}"')
        if data.get("version") != VERSION:
            raise SnapshotDecodeError(f"{what}: unsupported version {data.get('version')!r} "
                                      f"(this build reads {VERSION})")
        missing = [name for name in FIELDS if name not in data]
        if missing:
            raise SnapshotDecodeError(f"{what}: missing " + ", ".join(missing))
        for name in ("session_id", "namespace"):
            if not isinstance(data[name], str) or not data[name]:
                raise SnapshotDecodeError(f"{what}: {name} must be a non-empty string")
        next_sequence = data["next_sequence"]
        if type(next_sequence) is not int or next_sequence < 0:
            raise SnapshotDecodeError(f"{what}: next_sequence must be a non-negative integer")
        if not isinstance(data["entries"], list):
            raise SnapshotDecodeError(f"{what}: entries must be a list")
        entries = []
        seen: set[str] = set()
        for index, raw in enumerate(data["entries"]):
            where = f"{what}: entries[{index}]"
            if not isinstance(raw, dict) or set(raw) != {"entry_id", "item"}:
                raise SnapshotDecodeError(f"{where}: expected {{\"entry_id\", \"item\"}}")
            entry_id = raw["entry_id"]
            try:
                parsed = EntryId.parse(entry_id) if isinstance(entry_id, str) else None
            except InvalidEntryId as error:
                raise SnapshotDecodeError(f"{where}: {error}") from None
            if parsed is None:
                raise SnapshotDecodeError(f"{where}: entry_id must be a string")
            if entry_id in seen:
                raise SnapshotDecodeError(f"{where}: duplicate entry id {entry_id}")
            if parsed.namespace == data["namespace"] and parsed.sequence >= next_sequence:
                raise SnapshotDecodeError(f"{where}: entry id {entry_id} is not below "
                                          f"next_sequence {next_sequence}")
            problem = item_problem(raw["item"])
            if problem is not None:
                raise SnapshotDecodeError(f"{where}: not a Responses item: {problem}")
            seen.add(entry_id)
            entries.append(Entry(entry_id, raw["item"]))
        moderator = (None if data["moderator"] is None
                     else ModeratorSnapshot.from_json(data["moderator"]))
        ended = data["ended_reason"]
        if ended is not None and not isinstance(ended, str):
            raise SnapshotDecodeError(f"{what}: ended_reason must be a string or null")
        return cls(data["session_id"], data["namespace"], next_sequence, tuple(entries),
                   moderator, ended)


def save_record(path: str | os.PathLike[str], record: SessionRecord) -> None:
    """Write ``record`` to ``path`` atomically."""
    atomic_write_text(path, dumps_json(record.to_json()) + "\n")


def load_record(path: str | os.PathLike[str]) -> SessionRecord:
    name = os.fspath(path)
    try:
        with open(name, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as error:
        raise SnapshotDecodeError(f"cannot read the session file {name}: {error}") from None
    return SessionRecord.from_json(loads_json(text, name), name)


__all__ = ["FORMAT", "VERSION", "SessionRecord", "load_record", "save_record"]
