"""Moderator snapshots: what survives a restart, as versioned JSON (moderator-runtime spec 6;
seed 3.6; DECISIONS 16).

A :class:`ModeratorSnapshot` holds exactly the script id, the MD5 source
hash, the committed state, the queued internal events (FIFO), the halted flag
and the overlay. State and queue are kept *encoded* as data-value nodes
(:mod:`chatml.snapshot`), so a snapshot is plain data: comparable, and
closures, refs, builtins, modules and tasks can never be in one -- encoding
rejects them with the path (``current_state: root.cache[2]: closures are not
serializable in ChatML snapshots``).

Layout (spec 6.1)::

    {"format": "ochat-moderator-snapshot", "version": 1,
     "script_id", "script_source_hash", "current_state": <DV>,
     "queued_internal_events": [<DV>...], "halted": false, "overlay": {...}}

:func:`save_snapshot` writes atomically; :func:`load_snapshot` /
:meth:`ModeratorSnapshot.from_json` check everything and raise
:class:`~runtime.errors.SnapshotDecodeError` naming what is wrong.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

import attrs

from chatcommon.atomic import atomic_write_text
from chatcommon.numbers import NumberTooLong, int_or_raise
from chatml import snapshot as data_values
from chatml.values import Value
from runtime.errors import SnapshotDecodeError, SnapshotError
from runtime.overlay import Overlay, OverlayDecodeError, overlay_from_json, overlay_to_json

FORMAT = "ochat-moderator-snapshot"
VERSION = 1
FIELDS = ("format", "version", "script_id", "script_source_hash", "current_state",
          "queued_internal_events", "halted", "overlay")


@attrs.frozen
class ModeratorSnapshot:
    """The persisted part of one moderated session; state and queue as data-value nodes."""

    script_id: str
    script_source_hash: str
    current_state: Any
    queued_internal_events: tuple[Any, ...]
    halted: bool
    overlay: Overlay

    @classmethod
    def capture(cls, script_id: str, source_hash: str, state: Value, queue: Sequence[Value],
                halted: bool, overlay: Overlay) -> ModeratorSnapshot:
        """Encode live values; :class:`SnapshotError` names the first non-data value's path."""
        try:
            encoded_state = data_values.encode(state)
        except data_values.SnapshotError as error:
            raise SnapshotError(f"cannot snapshot moderator '{script_id}': current_state: "
                                f"{error.message}") from None
        encoded_queue = []
        for index, value in enumerate(queue):
            try:
                encoded_queue.append(data_values.encode(value))
            except data_values.SnapshotError as error:
                raise SnapshotError(f"cannot snapshot moderator '{script_id}': "
                                    f"queued_internal_events[{index}]: {error.message}") from None
        return cls(script_id, source_hash, encoded_state, tuple(encoded_queue), halted, overlay)

    def state_value(self) -> Value:
        return data_values.decode(self.current_state)

    def queue_values(self) -> list[Value]:
        return [data_values.decode(node) for node in self.queued_internal_events]

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "script_id": self.script_id,
            "script_source_hash": self.script_source_hash,
            "current_state": self.current_state,
            "queued_internal_events": list(self.queued_internal_events),
            "halted": self.halted,
            "overlay": overlay_to_json(self.overlay),
        }

    @classmethod
    def from_json(cls, data: Any) -> ModeratorSnapshot:
        """Check and read a snapshot object; state and queue nodes are decoded as a check."""
        if not isinstance(data, dict):
            raise SnapshotDecodeError("moderator snapshot: expected a JSON object")
        if data.get("format") != FORMAT:
            raise SnapshotDecodeError(f'moderator snapshot: expected "format": "{FORMAT}"')
        if data.get("version") != VERSION:
            raise SnapshotDecodeError(f"moderator snapshot: unsupported version "
                                      f"{data.get('version')!r} (this build reads {VERSION})")
        missing = [name for name in FIELDS if name not in data]
        if missing:
            raise SnapshotDecodeError("moderator snapshot: missing " + ", ".join(missing))
        unknown = sorted(set(data) - set(FIELDS))
        if unknown:
            raise SnapshotDecodeError("moderator snapshot: unknown field(s) " + ", ".join(unknown))
        for name in ("script_id", "script_source_hash"):
            if not isinstance(data[name], str):
                raise SnapshotDecodeError(f"moderator snapshot: {name} must be a string")
        if not isinstance(data["halted"], bool):
            raise SnapshotDecodeError("moderator snapshot: halted must be true or false")
        if not isinstance(data["queued_internal_events"], list):
            raise SnapshotDecodeError("moderator snapshot: queued_internal_events must be a list")
        try:
            overlay = overlay_from_json(data["overlay"])
        except OverlayDecodeError as error:
            raise SnapshotDecodeError(f"moderator snapshot: {error}") from None
        snapshot = cls(data["script_id"], data["script_source_hash"], data["current_state"],
                       tuple(data["queued_internal_events"]), data["halted"], overlay)
        try:
            snapshot.state_value()
        except data_values.SnapshotError as error:
            raise SnapshotDecodeError(f"moderator snapshot: current_state: {error.message}"
                                      ) from None
        for index, node in enumerate(snapshot.queued_internal_events):
            try:
                data_values.decode(node)
            except data_values.SnapshotError as error:
                raise SnapshotDecodeError(f"moderator snapshot: queued_internal_events[{index}]: "
                                          f"{error.message}") from None
        return snapshot


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise SnapshotDecodeError(f"snapshot JSON: duplicate key {key!r}")
        result[key] = value
    return result


def dumps_json(data: Any) -> str:
    """Strict JSON text (NaN never appears: data values spell it ``"nan"``)."""
    return json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def loads_json(text: str, what: str) -> Any:
    """Parse JSON text, refusing duplicate keys and NaN; :class:`SnapshotDecodeError` otherwise."""
    def refuse(constant: str) -> Any:
        raise SnapshotDecodeError(f"{what}: {constant} is not JSON")

    try:
        return json.loads(text, object_pairs_hook=_unique_keys, parse_constant=refuse,
                          parse_int=int_or_raise)
    except json.JSONDecodeError as error:
        raise SnapshotDecodeError(f"{what}: not valid JSON: {error.msg} at line {error.lineno}, "
                                  f"column {error.colno}") from None
    except NumberTooLong as error:
        raise SnapshotDecodeError(f"{what}: {error}") from None
    except RecursionError:
        raise SnapshotDecodeError(f"{what}: JSON nested too deeply") from None


def save_snapshot(path: str | os.PathLike[str], snapshot: ModeratorSnapshot) -> None:
    """Write ``snapshot`` to ``path`` atomically."""
    atomic_write_text(path, dumps_json(snapshot.to_json()) + "\n")


def load_snapshot(path: str | os.PathLike[str]) -> ModeratorSnapshot:
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as error:
        raise SnapshotDecodeError(f"cannot read the moderator snapshot {os.fspath(path)}: "
                                  f"{error}") from None
    return ModeratorSnapshot.from_json(loads_json(text, os.fspath(path)))


__all__ = ["FORMAT", "VERSION", "ModeratorSnapshot", "dumps_json", "load_snapshot", "loads_json",
           "save_snapshot"]
