"""MCP-backed tools: the catalogue interface and the definitions built from it (spec §6).

An ``<tool mcp_server="..."/>`` declaration selects tools from a remote MCP
server's catalogue. Contacting servers is the host's business: tool
construction asks an :class:`McpCatalogue` for the server's tools. The
command-line compiler uses :class:`NoMcpCatalogue` (no network), so MCP tools
are reported as unresolved (a warning) and left out of the request.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, Protocol
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import attrs

from chatmd.tools.schema import JsonObject, function_tool


@attrs.frozen
class McpRemoteTool:
    """One tool of a server's catalogue, as the server describes it."""

    name: str
    description: str | None = None
    input_schema: Mapping[str, Any] = attrs.field(factory=dict)


class McpUnavailable(Exception):
    """The catalogue of a server could not be obtained (message says why)."""


class McpCatalogue(Protocol):
    def list_tools(self, server: str) -> Sequence[McpRemoteTool]:
        """The tools of ``server`` (``stdio:<command>`` or an HTTP(S) URL).

        Raise :class:`McpUnavailable` when the server cannot be reached.
        """
        ...


class NoMcpCatalogue:
    """The default catalogue: never contacts a server."""

    def list_tools(self, server: str) -> Sequence[McpRemoteTool]:
        raise McpUnavailable("MCP servers are not contacted by this host")


@attrs.frozen
class StaticMcpCatalogue:
    """A fixed catalogue (``server URI -> tools``), for embedding and tests."""

    servers: Mapping[str, Sequence[McpRemoteTool]]

    def list_tools(self, server: str) -> Sequence[McpRemoteTool]:
        try:
            return self.servers[server]
        except KeyError:
            raise McpUnavailable(f"no catalogue is configured for {server}") from None


def server_uri(server: str, client_id_env: str | None, client_secret_env: str | None,
               environ: Mapping[str, str] | None = None) -> str:
    """``server`` with ``client_id`` / ``client_secret`` query parameters added.

    A parameter is added when its ``*_env`` names a set, non-empty environment
    variable, and only to HTTP(S) URLs (a ``stdio:`` command line has no query).
    """
    env = os.environ if environ is None else environ
    extra = []
    for key, variable in (("client_id", client_id_env), ("client_secret", client_secret_env)):
        value = env.get(variable) if variable else None
        if value:
            extra.append((key, value))
    parts = urlsplit(server)
    if not extra or parts.scheme.lower() not in ("http", "https"):
        return server
    query = parse_qsl(parts.query, keep_blank_values=True) + extra
    return urlunsplit(parts._replace(query=urlencode(query)))


def remote_tool_definition(tool: McpRemoteTool, *, strict: bool) -> JsonObject:
    """A function definition for one remote tool: its name, description and input schema."""
    schema = dict(tool.input_schema) if tool.input_schema else {"type": "object", "properties": {}}
    return function_tool(tool.name, tool.description, schema, strict=strict)


def select_tools(catalogue: Sequence[McpRemoteTool], names: Sequence[str] | None
                 ) -> tuple[list[McpRemoteTool], list[str]]:
    """The selected remote tools (selection order) and the selected names not in the catalogue.

    ``names`` None selects the whole catalogue in the server's order.
    """
    if names is None:
        return list(catalogue), []
    by_name = {tool.name: tool for tool in catalogue}
    found, missing = [], []
    for name in names:
        tool = by_name.get(name)
        if tool is None:
            missing.append(name)
        else:
            found.append(tool)
    return found, missing
