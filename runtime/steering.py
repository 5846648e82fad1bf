"""Deferred steering and safe-point input (moderator-runtime spec 7; seed 3.5.1a; DECISIONS 14).

A host that receives user text while a turn is in flight does not inject it
into that turn. :class:`SteeringQueue` holds it until the next safe point:

* *transient notes* (file-backed hosts): stripped, whitespace-only ignored,
  joined by newlines and sent once, at the end of the next request, as one
  developer message -- never in canonical history, never persisted or
  exported;
* *canonical entries* (actor-style hosts): user entries allocated at submit
  time, appended to canonical history after the current tool outputs, each
  with a ``message_appended``, and treated as a tool follow-up.

The queue is thread-safe: a UI thread adds while the turn driver consumes.
"""

from __future__ import annotations

import threading

from runtime.ids import Entry

_WHITESPACE = " \t\n\r\x0b\x0c"


class SteeringQueue:
    """The host's deferred steering; the turn driver consumes it at safe points."""

    def __init__(self) -> None:
        self._notes: list[str] = []
        self._entries: list[Entry] = []
        self._lock = threading.Lock()

    def add_note(self, text: str) -> bool:
        """Queue a transient note; False (ignored) when it is only whitespace."""
        stripped = text.strip(_WHITESPACE)
        if not stripped:
            return False
        with self._lock:
            self._notes.append(stripped)
        return True

    def add_entry(self, entry: Entry) -> None:
        """Queue a canonical entry (its id allocated by the host at submit time)."""
        with self._lock:
            self._entries.append(entry)

    def consume_transient_text(self) -> str | None:
        """Every queued note, joined by newlines (None when there is none); clears them."""
        with self._lock:
            notes, self._notes = self._notes, []
        return "\n".join(notes) if notes else None

    def consume_entries(self) -> list[Entry]:
        with self._lock:
            entries, self._entries = self._entries, []
        return entries

    @property
    def has_notes(self) -> bool:
        with self._lock:
            return bool(self._notes)


__all__ = ["SteeringQueue"]
