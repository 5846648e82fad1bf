"""The values a handler receives: the ``ctx`` record and the event (stdlib spec 9.2, 9.3;
moderator-runtime spec 1.3, 1.4).

:class:`ScriptInputs` converts host data to ChatML values for one session.
Canonical entries never change, so each entry's ``{id; value}`` record is
converted once and cached by entry id (and item identity); ``ctx.items``
itself is a fresh array per event. A handler that mutates a pre-existing
array in place (``Array.set`` on a json array it got from ``ctx``) could
change a cached record, so the manager calls :meth:`ScriptInputs.forget`
whenever a run journalled an in-place mutation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import is_
from typing import Any

from chatml.json_values import NULL, from_host, parse_text
from chatml.values import Value, Variant
from runtime.ids import Entry, Item
from runtime.moderation import (
    HostEvent,
    InternalEvent,
    ItemAppended,
    PostToolResponse,
    PreToolCall,
)


def json_value(data: Any) -> Value:
    """Host JSON as a ChatML ``json`` value (a host value with no JSON form becomes its text)."""
    try:
        return from_host(data)
    except ValueError:
        return Variant("String", (str(data),))


def parse_or_string(text: str) -> Value:
    """``text`` parsed as JSON, or ```String(text)`` when it does not parse."""
    try:
        return parse_text(text)
    except ValueError:
        return Variant("String", (text,))


def tool_descriptions(tools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``{name, description, input_schema}`` of each request tool (spec 1.3), as host data."""
    described: list[dict[str, Any]] = []
    for tool in tools:
        kind = tool.get("type")
        if kind in ("file_search", "web_search", "web_search_preview"):
            name = "web_search" if kind != "file_search" else "file_search"
            described.append({"name": name, "description": "", "input_schema": dict(tool)})
            continue
        schema = tool.get("format") if kind == "custom" else tool.get("parameters")
        description = tool.get("description")
        described.append({"name": str(tool.get("name", "")),
                          "description": description if isinstance(description, str) else "",
                          "input_schema": schema})
    return described


def tool_result_value(output: Any) -> Value:
    """A tool output as ``tool_result.result``: parsed text, or the multi-part form."""
    if isinstance(output, str):
        return parse_or_string(output)
    if not isinstance(output, list):
        return json_value(output)
    parts: list[dict[str, Any]] = []
    for part in output:
        if not isinstance(part, Mapping):
            continue
        kind = part.get("type")
        if kind in ("input_text", "output_text", "text"):
            parts.append({"type": "text", "text": part.get("text", "")})
        elif kind in ("input_image", "image"):
            parts.append({"type": "image", "image_url": part.get("image_url"),
                          "detail": part.get("detail")})
    return json_value({"kind": "content", "parts": parts})


class ScriptInputs:
    """Builds ``ctx`` records and event values for one session, caching converted entries."""

    def __init__(self) -> None:
        self._records: dict[str, tuple[Item, dict[str, Value]]] = {}
        self._tools_key: list[Any] | None = None
        self._tools: list[Value] = []
        self._last_entries: list[Entry] = []
        self._last_records: list[dict[str, Value]] = []

    def forget(self) -> None:
        """Drop every cached conversion (after a run mutated ChatML arrays in place)."""
        self._records.clear()
        self._tools_key = None
        self._last_entries = []
        self._last_records = []

    def record(self, entry: Entry) -> dict[str, Value]:
        """The ``{id; value}`` record of ``entry`` (cached)."""
        cached = self._records.get(entry.entry_id)
        if cached is not None and cached[0] is entry.item:
            return cached[1]
        record = {"id": entry.entry_id, "value": json_value(entry.item)}
        self._records[entry.entry_id] = (entry.item, record)
        return record

    def items(self, history: Sequence[Entry]) -> list[dict[str, Value]]:
        """``ctx.items``: a fresh array of the cached records of ``history``.

        Histories mostly grow at the end, so when the previous history is a
        prefix of this one (the very same entry objects, compared by identity
        at C speed: an equal-looking entry may hold ``1`` where the old one
        held ``True``) only the new tail is looked up.
        """
        entries = list(history)
        last = self._last_entries
        known = len(last)
        if known and len(entries) >= known and all(map(is_, entries, last)):
            records = self._last_records + [self.record(entry) for entry in entries[known:]]
        else:
            records = [self.record(entry) for entry in entries]
            if len(self._records) > 2 * len(entries) + 64:
                keep = {entry.entry_id for entry in entries}
                self._records = {k: v for k, v in self._records.items() if k in keep}
        self._last_entries = entries
        self._last_records = records
        return list(records)

    def tools(self, tools: Sequence[Mapping[str, Any]]) -> list[Value]:
        key = list(tools)
        if key != self._tools_key:
            self._tools = [{"name": d["name"], "description": d["description"],
                            "input_schema": json_value(d["input_schema"])}
                           for d in tool_descriptions(key)]
            self._tools_key = key
        return list(self._tools)

    def context(self, *, session_id: str, now_ms: int, phase: str, history: Sequence[Entry],
                tools: Sequence[Mapping[str, Any]], session_meta: Any = None) -> dict[str, Value]:
        return {
            "session_id": session_id,
            "now_ms": now_ms,
            "phase": phase,
            "items": self.items(history),
            "available_tools": self.tools(tools),
            "session_meta": NULL if session_meta is None else json_value(session_meta),
        }

    def event(self, event: HostEvent) -> Value:
        """The value ``on_event`` receives for ``event``."""
        if isinstance(event, InternalEvent):
            return event.value
        if isinstance(event, ItemAppended):
            return Variant("Item_appended", (self.record(event.entry),))
        if isinstance(event, PreToolCall):
            call = {"id": event.call_id, "name": event.name, "args": parse_or_string(event.args)}
            return Variant("Pre_tool_call", (call,))
        if isinstance(event, PostToolResponse):
            result = {"call_id": event.call_id, "name": event.name,
                      "result": tool_result_value(event.output)}
            return Variant("Post_tool_response", (result,))
        return Variant(_tag_of(event.phase), ())


def _tag_of(phase: str) -> str:
    """``session_start`` -> ``Session_start`` (the constructor of an argument-less event)."""
    return phase[:1].upper() + phase[1:]


__all__ = ["ScriptInputs", "json_value", "parse_or_string", "tool_descriptions",
           "tool_result_value"]
