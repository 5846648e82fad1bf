"""The inline agent result cache on disk: ``.chatmd/cache.bin`` (spec 8.7).

Results of ``<agent>`` elements are kept in a :class:`chatmd.request_context.AgentCache`
(key: source, ``local`` flag and the input parts as JSON) with wall-clock timestamps, a
TTL of one day and at most :data:`MAX_ENTRIES` entries (the least recently stored are
dropped). :func:`load_cache` reads the file at the start of a run (a missing, unreadable
or corrupt file gives an empty cache: it is only a cache); :func:`save_cache` writes it
atomically at the end. The format is zlib-compressed JSON
``{"version": 1, "entries": [[source, local, input_json, stored_at, result], ...]}``.
"""

from __future__ import annotations

import json
import os
import time
import zlib
from pathlib import Path
from typing import Any

from chatcommon.atomic import atomic_write_bytes
from chatmd.request_context import AGENT_CACHE_TTL_SECONDS, AgentCache

CACHE_FILE = "cache.bin"
MAX_ENTRIES = 1000
VERSION = 1


def _entries(cache: AgentCache) -> dict[tuple[str, bool, str], tuple[float, str]]:
    return cache._entries  # noqa: SLF001 - the cache is a plain store; persistence is ours


def load_cache(path: str | os.PathLike[str]) -> AgentCache:
    cache = AgentCache(clock=time.time)
    try:
        data = json.loads(zlib.decompress(Path(path).read_bytes()))
    except (OSError, zlib.error, ValueError):
        return cache
    if not isinstance(data, dict) or data.get("version") != VERSION:
        return cache
    now = time.time()
    store = _entries(cache)
    for entry in data.get("entries", []):
        if not _valid(entry):
            continue
        source, local, key_input, stored_at, result = entry
        if now - stored_at <= AGENT_CACHE_TTL_SECONDS:
            store[(source, local, key_input)] = (float(stored_at), result)
    return cache


def _valid(entry: Any) -> bool:
    return (isinstance(entry, list) and len(entry) == 5 and isinstance(entry[0], str)
            and isinstance(entry[1], bool) and isinstance(entry[2], str)
            and isinstance(entry[3], int | float) and isinstance(entry[4], str))


def save_cache(path: str | os.PathLike[str], cache: AgentCache) -> None:
    now = time.time()
    live = [(key, value) for key, value in _entries(cache).items()
            if now - value[0] <= AGENT_CACHE_TTL_SECONDS]
    live.sort(key=lambda pair: pair[1][0])
    entries = [[key[0], key[1], key[2], stored_at, result]
               for key, (stored_at, result) in live[-MAX_ENTRIES:]]
    payload = json.dumps({"version": VERSION, "entries": entries}, ensure_ascii=False)
    atomic_write_bytes(path, zlib.compress(payload.encode("utf-8")))


__all__ = ["CACHE_FILE", "MAX_ENTRIES", "load_cache", "save_cache"]
