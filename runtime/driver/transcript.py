"""Transcript write-back, item by item (spec 8.6): each completed item becomes its element.

A :class:`TranscriptAppender` renders one item at a time with the shared
:class:`chatmd.transcript_writer.TranscriptWriter` (so the layouts are exactly the writer's:
``show_tool_call`` inline RAW, otherwise ``.chatmd/<seq>.tool-call.<id>.json`` payload
files referenced by ``<doc src local/>``), writes the payload files first (atomically), then
appends the element through the transcript's write-ahead log
(:class:`runtime.driver.append_log.AppendLog`; :meth:`TranscriptAppender.checkpoint` at the
end of each turn makes the appends durable). Messages and
reasoning are deduplicated by item id (the stream writes them when they complete, the
session appends them again afterwards). User messages are skipped unless written with
:meth:`TranscriptAppender.user_message`, which replaces a trailing empty placeholder.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from chatmd.transcript_writer import (
    PAYLOAD_FOLDER,
    USER_PLACEHOLDER,
    TranscriptWriter,
    next_payload_seq,
    payload_src_for,
    write_payloads,
)
from runtime.driver.append import tail
from runtime.driver.append_log import AppendLog, recover

_PLACEHOLDER_TAILS = (USER_PLACEHOLDER + "\n", USER_PLACEHOLDER)


class TranscriptAppender:
    """Appends items to one transcript file as they complete."""

    def __init__(self, path: str | os.PathLike[str], *, show_tool_call: bool,
                 payload_dir: str | os.PathLike[str] | None = None,
                 on_written: Callable[[Mapping[str, Any]], None] | None = None) -> None:
        self.path = Path(path)
        recover(self.path)
        self.log = AppendLog(self.path)
        self.payload_dir = Path(payload_dir) if payload_dir is not None else \
            self.path.parent / PAYLOAD_FOLDER
        self.writer = TranscriptWriter(
            show_tool_call=show_tool_call, seq_start=next_payload_seq(self.payload_dir),
            payload_src=payload_src_for(self.payload_dir, self.path.parent))
        self.written_ids: set[str] = set()
        self.on_written = on_written
        self.items_written = 0

    def _separator(self) -> bytes:
        last = tail(self.path, 1)
        return b"\n" if last and last != b"\n" else b""

    def append(self, item: Mapping[str, Any]) -> bool:
        """Write ``item`` unless it is a user message or was written already; True if written."""
        kind = item.get("type", "message")
        if kind == "message" and item.get("role") == "user":
            return False
        item_id = item.get("id")
        dedupe = kind in ("message", "reasoning") and isinstance(item_id, str)
        if dedupe and item_id in self.written_ids:
            return False
        rendered = self.writer.render([item])
        write_payloads(self.payload_dir, rendered.payloads)
        self.log.append(self._separator() + rendered.text.encode("utf-8"))
        if dedupe:
            self.written_ids.add(str(item_id))
        self.items_written += 1
        if self.on_written is not None:
            self.on_written(item)
        return True

    def user_message(self, item: Mapping[str, Any]) -> None:
        """Write a user message typed by the host's user, replacing a trailing placeholder."""
        text = self.writer.render([item]).text.encode("utf-8")
        end = tail(self.path, len(USER_PLACEHOLDER) + 2).decode("utf-8", "replace")
        size = self.log.size()
        for suffix in _PLACEHOLDER_TAILS:
            if end.endswith(suffix):
                self.log.append(text, replace_from=size - len(suffix.encode()))
                return
        self.log.append(self._separator() + text)

    def truncate(self, size: int) -> None:
        """Drop everything after the first ``size`` bytes (a host's retry)."""
        self.log.append(b"", replace_from=size)

    def size(self) -> int:
        return self.log.size()

    def checkpoint(self) -> None:
        """Make the appends so far durable (end of a turn)."""
        self.log.checkpoint()

    def close(self) -> None:
        self.log.close()

    def placeholder(self) -> None:
        """The empty ``<user>`` block left for the next human input (after a normal finish)."""
        self.log.append(self._separator() + (USER_PLACEHOLDER + "\n").encode("utf-8"))


__all__ = ["TranscriptAppender"]
