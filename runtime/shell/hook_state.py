"""Persisted state of stateful ChatML hooks (shell spec §8.11).

Hooks with lifecycle ``session`` (one state per runtime and script) or
``runtime`` (one per script) keep their state across calls; it is also
persisted, so that a session resumed from the same session folder continues
where it stopped. The file (default ``SESSION_DIR/.chatmd/shell-hook-state.json``)::

    {"version": 1,
     "states": [{"key": ["session", "RUNTIME", "SCRIPT"] | ["runtime", "SCRIPT"],
                 "script_id": "SCRIPT", "kind": "shell_reviewer",
                 "source_sha256": "<hex>", "manifest_sha256": "<hex>",
                 "state": <encoded value>}]}

It is replaced atomically (:func:`chatcommon.atomic.atomic_write_bytes`,
mode 0600) after every call that changed a state. A state is restored only
when its script id, kind, source SHA-256 and manifest digest all match the
running manifest; an unreadable or malformed file restores nothing.

State is *data only*: unit, booleans, integers, finite floats, strings,
arrays, tuples, records and variants, encoded as JSON with a tag for every
compound value (``{"a": [...]}`` array, ``{"t": [...]}`` tuple, ``{"r":
{...}}`` record, ``{"v": [TAG, [...]]}`` variant). A function, ref or task in
the state, a nesting deeper than the script's ``max_depth`` or an encoding
larger than its ``max_value`` is a hook error: the call's state is not committed.
"""

from __future__ import annotations

import json
import math
import os
import threading
from collections.abc import Mapping
from typing import Any

from chatcommon.atomic import atomic_write_bytes
from chatml.values import Variant

VERSION = 1
StateKey = tuple[str, ...]


class StateError(ValueError):
    """A state that cannot be persisted (not data, too deep or too large)."""


def encode_state(value: Any, max_depth: int) -> Any:
    """``value`` as tagged JSON data; raises :class:`StateError`."""
    return _encode(value, max_depth)


def _encode(value: Any, depth: int) -> Any:
    if depth < 0:
        raise StateError("hook state is nested too deeply")
    if value is None or type(value) in (bool, int, str):
        return value
    if type(value) is float:
        if not math.isfinite(value):
            raise StateError("hook state holds a non-finite float")
        return value
    if type(value) is list:
        return {"a": [_encode(item, depth - 1) for item in value]}
    if type(value) is tuple:
        return {"t": [_encode(item, depth - 1) for item in value]}
    if type(value) is dict:
        return {"r": {str(k): _encode(v, depth - 1) for k, v in value.items()}}
    if type(value) is Variant:
        return {"v": [value.tag, [_encode(arg, depth - 1) for arg in value.args]]}
    raise StateError(f"hook state must be data (no functions, refs or tasks), found "
                     f"{type(value).__name__}")


def decode_state(data: Any) -> Any:
    """The value :func:`encode_state` encoded; raises :class:`StateError` on a bad shape."""
    if data is None or type(data) in (bool, int, float, str):
        return data
    if type(data) is dict and len(data) == 1:
        ((tag, body),) = data.items()
        if tag == "a" and type(body) is list:
            return [decode_state(item) for item in body]
        if tag == "t" and type(body) is list:
            return tuple(decode_state(item) for item in body)
        if tag == "r" and type(body) is dict:
            return {key: decode_state(item) for key, item in body.items()}
        if (tag == "v" and type(body) is list and len(body) == 2 and type(body[0]) is str
                and type(body[1]) is list):
            return Variant(body[0], tuple(decode_state(arg) for arg in body[1]))
    raise StateError("malformed hook state")


def default_state_path(session_dir: str) -> str:
    return os.path.join(session_dir, ".chatmd", "shell-hook-state.json")


class HookStateStore:
    """The persisted states of one session's stateful hooks (None path: memory only)."""

    def __init__(self, path: str | None, manifest_sha256: str) -> None:
        self.path = path
        self.manifest_sha256 = manifest_sha256
        self._entries: dict[StateKey, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def restore(self, scripts: Mapping[str, tuple[str, str]]) -> dict[StateKey, Any]:
        """States saved for these scripts (id -> (kind, source SHA-256)) under this manifest."""
        restored: dict[StateKey, Any] = {}
        for entry in self._read():
            key = entry.get("key")
            script = scripts.get(str(entry.get("script_id")))
            if (not isinstance(key, list) or not all(isinstance(k, str) for k in key)
                    or script is None or entry.get("manifest_sha256") != self.manifest_sha256
                    or (entry.get("kind"), entry.get("source_sha256")) != script):
                continue
            try:
                restored[tuple(key)] = decode_state(entry.get("state"))
            except (StateError, RecursionError):
                continue
            self._entries[tuple(key)] = entry
        return restored

    def _read(self) -> list[dict[str, Any]]:
        if self.path is None:
            return []
        try:
            with open(self.path, encoding="utf-8") as handle:
                data = json.load(handle)
        except (OSError, ValueError, RecursionError):
            return []
        if not isinstance(data, dict) or data.get("version") != VERSION:
            return []
        states = data.get("states")
        return [e for e in states if isinstance(e, dict)] if isinstance(states, list) else []

    def save(self, key: StateKey, script_id: str, kind: str, source_sha256: str,
             encoded: Any) -> None:
        """Persist one state (only when it changed); raises OSError when it cannot be written."""
        entry = {"key": list(key), "script_id": script_id, "kind": kind,
                 "source_sha256": source_sha256, "manifest_sha256": self.manifest_sha256,
                 "state": encoded}
        with self._lock:
            if self._entries.get(key) == entry:
                return
            entries = {**self._entries, key: entry}
            if self.path is not None:
                data = {"version": VERSION,
                        "states": [entries[k] for k in sorted(entries)]}
                atomic_write_bytes(self.path, json.dumps(data, sort_keys=True).encode("utf-8"),
                                   mode=0o600)
            self._entries = entries
