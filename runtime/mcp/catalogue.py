"""The MCP tool-catalogue cache (moderator-runtime spec 8.7).

Catalogues are cached per server URI for :data:`TTL_SECONDS` (5 minutes), at
most :data:`MAX_SERVERS` (32) servers, least recently used first out. A
``tools/list_changed`` notification evicts the server's entry; a tool missing
from a cached catalogue triggers one refresh before the call fails (the
caller's policy, :mod:`runtime.mcp.tools`). Thread-safe: runners on several
worker threads and the event-loop thread share one cache.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence

from chatmd.tools.mcp import McpRemoteTool

TTL_SECONDS = 300.0
MAX_SERVERS = 32

Catalogue = tuple[McpRemoteTool, ...]


class CatalogueCache:
    """A TTL-LRU map ``server URI -> catalogue``."""

    def __init__(self, *, ttl: float = TTL_SECONDS, max_servers: int = MAX_SERVERS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self.max_servers = max_servers
        self._clock = clock
        self._entries: OrderedDict[str, tuple[float, Catalogue]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, uri: str) -> Catalogue | None:
        """The cached catalogue of ``uri``, or None when absent or older than the TTL."""
        with self._lock:
            entry = self._entries.get(uri)
            if entry is None:
                return None
            stored, catalogue = entry
            if self._clock() - stored > self.ttl:
                del self._entries[uri]
                return None
            self._entries.move_to_end(uri)
            return catalogue

    def put(self, uri: str, tools: Sequence[McpRemoteTool]) -> Catalogue:
        catalogue = tuple(tools)
        with self._lock:
            self._entries[uri] = (self._clock(), catalogue)
            self._entries.move_to_end(uri)
            while len(self._entries) > self.max_servers:
                self._entries.popitem(last=False)
        return catalogue

    def evict(self, uri: str) -> None:
        with self._lock:
            self._entries.pop(uri, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)


#: The process-wide cache (nested agents share it with their parent run).
SHARED_CACHE = CatalogueCache()
