"""MCP-backed tools through the official ``mcp`` SDK (moderator-runtime spec 8.7, 8.8).

* :mod:`runtime.mcp.tools` -- :func:`open_mcp_tools`, :class:`McpTools`, :class:`McpUnavailable`;
* :mod:`runtime.mcp.connection` -- one client session (stdio or streamable HTTP);
* :mod:`runtime.mcp.loop` -- the event-loop thread the synchronous runners call into;
* :mod:`runtime.mcp.catalogue` -- the 5-minute, 32-server catalogue cache;
* :mod:`runtime.mcp.servers` -- ``mcp_server`` values; :mod:`runtime.mcp.results` -- outputs.
"""

from __future__ import annotations

from runtime.mcp.catalogue import SHARED_CACHE, CatalogueCache
from runtime.mcp.tools import McpTools, McpUnavailable, open_mcp_tools

__all__ = ["SHARED_CACHE", "CatalogueCache", "McpTools", "McpUnavailable", "open_mcp_tools"]
