"""The driver's event log (``--events FILE``): one JSON object per line, flushed as it happens.

Every line is ``{"event": NAME, "time": UNIX_SECONDS, ...fields}``. Names and their fields:

* ``run_started``: ``prompt``, ``transcript``, ``model``
* ``request_sent``: ``request`` (1-based count per session), ``model``, ``input_items``, ``tools``,
  ``agent_depth`` (0 for the prompt itself, 1+ inside nested agents)
* ``retry``: ``attempt`` (HTTP attempt number, 2 or more), ``url``
* ``item_appended``: ``type``, ``id``, ``role``, ``name``, ``call_id`` (those the item has)
* ``tool_started``: ``name``, ``arguments`` (a short preview)
* ``tool_finished``: ``name``, ``ok``, ``duration_ms``, ``error`` (when not ok)
* ``moderation``: ``request`` (the runtime request's kind, or ``pre_tool_call``), ``detail``;
  for ``pre_tool_call`` also ``outcome`` (``approved``, ``rejected``, ``rewritten``),
  ``name``, ``call_id`` (``detail``: the rejection text)
* ``error``: ``kind`` (``model_api``, ``prompt``, ``interrupted``, ``internal``), ``message``,
  ``status`` (HTTP status, when there is one)
* ``run_finished``: ``status`` (``finished``, ``ended``, ``turn_limit``, ``failed``,
  ``interrupted``), ``exit_code``, ``requests``
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Mapping
from typing import IO, Any


class EventLog:
    """Writes events to a file (or nowhere); thread-safe (tools finish on pool threads)."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self._handle: IO[str] | None = (open(path, "a", encoding="utf-8")  # noqa: SIM115
                                        if path is not None else None)
        self._lock = threading.Lock()
        self.counts: dict[str, int] = {}

    def emit(self, event: str, /, **fields: Any) -> None:
        with self._lock:
            self.counts[event] = self.counts.get(event, 0) + 1
            if self._handle is None:
                return
            record = {"event": event, "time": round(time.time(), 6)}
            record.update({key: value for key, value in fields.items() if value is not None})
            self._handle.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
            self._handle.flush()

    def item(self, item: Mapping[str, Any]) -> None:
        self.emit("item_appended", type=item.get("type", "message"), id=item.get("id"),
                  role=item.get("role"), name=item.get("name"), call_id=item.get("call_id"))

    def close(self) -> None:
        with self._lock:
            if self._handle is not None:
                self._handle.close()
                self._handle = None


__all__ = ["EventLog"]
