"""History compaction of a request's input (moderator-runtime spec 8.2, checklist 79).

When a session asks for it, :func:`compact_file_reads` keeps the content of
only the newest ``read_file`` output per path: every older output of a
``read_file`` (or ``get_contents``) call for the same path (its ``path`` or
``file`` argument) is replaced by :data:`STALE_PLACEHOLDER`. Calls stay
intact, and only the request changes -- never canonical history.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

STALE_PLACEHOLDER = "(stale) file content removed — see newer read_file output later"
READ_TOOLS = ("read_file", "get_contents")


def _path_of(arguments: Any) -> str | None:
    try:
        parsed = json.loads(arguments) if isinstance(arguments, str) else None
    except ValueError:
        return None
    if not isinstance(parsed, dict):
        return None
    for key in ("path", "file"):
        if isinstance(parsed.get(key), str):
            return parsed[key]
    return None


def compact_file_reads(items: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """``items`` with every superseded ``read_file`` output replaced by the placeholder."""
    path_of_call: dict[str, str] = {}
    for item in items:
        if item.get("type") == "function_call" and item.get("name") in READ_TOOLS:
            path = _path_of(item.get("arguments"))
            if path is not None and isinstance(item.get("call_id"), str):
                path_of_call[item["call_id"]] = path
    newest: dict[str, int] = {}
    for index, item in enumerate(items):
        path = path_of_call.get(str(item.get("call_id"))) \
            if item.get("type") == "function_call_output" else None
        if path is not None:
            newest[path] = index
    result: list[Mapping[str, Any]] = []
    for index, item in enumerate(items):
        path = path_of_call.get(str(item.get("call_id"))) \
            if item.get("type") == "function_call_output" else None
        if path is not None and newest[path] != index:
            stale = dict(item)
            stale["output"] = STALE_PLACEHOLDER
            result.append(stale)
        else:
            result.append(item)
    return result


__all__ = ["READ_TOOLS", "STALE_PLACEHOLDER", "compact_file_reads"]
