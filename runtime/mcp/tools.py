"""MCP tools of a prompt: connections, definitions and runners (``open_mcp_tools``).

For each ``<tool mcp_server=...>`` declaration: the server URI (with the
``client_id`` / ``client_secret`` query parameters its ``*_env`` attributes
name), one :class:`~runtime.mcp.connection.McpConnection` per distinct URI,
the catalogue (through the :class:`~runtime.mcp.catalogue.CatalogueCache`),
the selected tools' definitions (``name`` / ``include`` / ``includes``, the
declaration's ``strict``) and one runner per selected tool.

A server that cannot be reached at start raises :class:`McpUnavailable`
(``mcp.unreachable``, or ``mcp.invalid_server`` for a value that names no
transport) positioned at the ``<tool>`` element, after closing whatever was
opened. A selected tool the server lacks (after one refresh) is a warning
(``mcp.tool_not_found``) in :attr:`McpTools.diagnostics` and is left out.
At call time every problem is the tool output: ``tool.invalid_arguments``,
``mcp.tool_not_found`` (missing even after one refresh of the catalogue),
``mcp.tool_error`` (the tool's own error result), ``mcp.timeout``,
``mcp.call_failed`` (protocol error, lost connection).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from mcp.shared.exceptions import MCPError
from mcp_types import REQUEST_TIMEOUT

from chatcommon.diagnostics import Diagnostic, Severity
from chatmd.ir import McpTool
from chatmd.ir_diagnostics import diagnostic_at
from chatmd.tools.mcp import McpRemoteTool, remote_tool_definition, select_tools, server_uri
from chatmd.tools.mcp import McpUnavailable as CatalogueUnavailable
from runtime.builtin_tools import ToolEnv
from runtime.mcp.catalogue import SHARED_CACHE, CatalogueCache
from runtime.mcp.connection import McpConnection, describe, root_cause
from runtime.mcp.loop import LoopThread
from runtime.mcp.results import tool_output
from runtime.mcp.servers import BadServer, display, parse_server
from runtime.tools import Runner, ToolOutput

PHASE = "tools"
START_TIMEOUT = 30.0
CALL_TIMEOUT = 300.0


class McpUnavailable(CatalogueUnavailable):
    """A server could not be reached at start; ``diagnostic`` is positioned at its ``<tool>``."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def _diagnostic(tool: McpTool, code: str, message: str, *, hint: str | None = None,
                severity: Severity = Severity.ERROR) -> Diagnostic:
    return diagnostic_at(code, message, provenance=tool.provenance, fallback_file="<prompt>",
                         phase=PHASE, hint=hint, severity=severity)


def _timed_out(error: BaseException) -> bool:
    cause = root_cause(error)
    return isinstance(cause, TimeoutError) or \
        (isinstance(cause, MCPError) and cause.code == REQUEST_TIMEOUT)


class McpTools:
    """The MCP tools of one run: ``definitions``, ``runners`` by name, ``close()``.

    Also an :class:`chatmd.tools.mcp.McpCatalogue` (``list_tools(uri)``), so a
    host can hand it to request conversion and get the definitions in
    declaration order with the frontend's own checks.
    """

    def __init__(self, *, cache: CatalogueCache = SHARED_CACHE,
                 start_timeout: float = START_TIMEOUT, call_timeout: float = CALL_TIMEOUT) -> None:
        self.cache = cache
        self.start_timeout = start_timeout
        self.call_timeout = call_timeout
        self.definitions: list[dict[str, Any]] = []
        self.runners: dict[str, Runner] = {}
        self.diagnostics: list[Diagnostic] = []
        self._connections: dict[str, McpConnection] = {}
        self._loop: LoopThread | None = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ set-up

    def add(self, tool: McpTool, env: ToolEnv, environ: Mapping[str, str] | None = None) -> None:
        """Connect to ``tool``'s server (once per URI) and add its selected tools."""
        uri = server_uri(tool.mcp_server, tool.client_id_env, tool.client_secret_env, environ)
        connection = self._connect(tool, uri, env)
        catalogue = self.catalogue(uri, connection)
        selected, missing = select_tools(catalogue, tool.names)
        if missing:
            catalogue = self.refresh(uri, connection)
            selected, missing = select_tools(catalogue, tool.names)
        for name in missing:
            self.diagnostics.append(_diagnostic(
                tool, "mcp.tool_not_found", f"MCP server {display(uri)} has no tool \"{name}\"; "
                "it is left out", severity=Severity.WARNING,
                hint="available: " + (", ".join(t.name for t in catalogue) or "none")))
        for remote in selected:
            self.definitions.append(remote_tool_definition(remote, strict=tool.strict))
            self.runners[remote.name] = self._runner(uri, remote.name)

    def _connect(self, tool: McpTool, uri: str, env: ToolEnv) -> McpConnection:
        known = self._connections.get(uri)
        if known is not None:
            return known
        try:
            target = parse_server(uri, env.workspace)
        except BadServer as error:
            raise McpUnavailable(_diagnostic(tool, "mcp.invalid_server",
                                             f"mcp_server=\"{tool.mcp_server}\": {error}")) from None
        if self._loop is None:
            self._loop = LoopThread()
        connection = McpConnection(target, self._loop, call_timeout=self.call_timeout,
                                   on_list_changed=lambda: self.cache.evict(uri))
        try:
            connection.open(self.start_timeout)
            self.cache.evict(uri)  # a fresh session: list its tools anew
        except Exception as error:
            diagnostic = self._unreachable(tool, uri, error, connection)
            connection.close()
            raise McpUnavailable(diagnostic) from None
        self._connections[uri] = connection
        return connection

    def _unreachable(self, tool: McpTool, uri: str, error: BaseException,
                     connection: McpConnection) -> Diagnostic:
        stderr = connection.stderr_tail()
        reason = describe(error) if not isinstance(error, TimeoutError) else \
            f"no answer within {self.start_timeout:g} s"
        message = f"MCP server {display(uri)} cannot be reached: {reason}"
        if stderr:
            message += "\nits standard error ends with:\n" + stderr
        return _diagnostic(tool, "mcp.unreachable", message,
                           hint="check that the command runs (stdio:) or that the server "
                           "listens at the URL; nothing was sent to the model")

    # ------------------------------------------------------------------ catalogues

    def catalogue(self, uri: str, connection: McpConnection) -> tuple[McpRemoteTool, ...]:
        cached = self.cache.get(uri)
        return cached if cached is not None else self.refresh(uri, connection)

    def refresh(self, uri: str, connection: McpConnection) -> tuple[McpRemoteTool, ...]:
        return self.cache.put(uri, connection.list_tools())

    def list_tools(self, server: str) -> Sequence[McpRemoteTool]:
        """The :class:`~chatmd.tools.mcp.McpCatalogue` view of the servers opened here."""
        connection = self._connections.get(server)
        if connection is None:
            raise CatalogueUnavailable(f"{display(server)} was not opened by this host")
        try:
            return self.catalogue(server, connection)
        except Exception as error:
            raise CatalogueUnavailable(describe(error)) from None

    # ------------------------------------------------------------------ calls

    def _runner(self, uri: str, name: str) -> Runner:
        return lambda payload: self.call(uri, name, payload)

    def call(self, uri: str, name: str, payload: str) -> ToolOutput:
        """Run the remote tool ``name``; every failure is an output string."""
        try:
            arguments = json.loads(payload) if payload.strip() else {}
        except json.JSONDecodeError as error:
            return f"tool.invalid_arguments: the arguments of {name} are not valid JSON: {error}"
        if not isinstance(arguments, dict):
            return f"tool.invalid_arguments: the arguments of {name} must be a JSON object"
        connection = self._connections.get(uri)
        if connection is None:
            return f"mcp.call_failed: the session with {display(uri)} is closed"
        try:
            if not self._offers(uri, connection, name):
                return (f"mcp.tool_not_found: MCP server {display(uri)} no longer offers the "
                        f"tool \"{name}\"")
            return tool_output(connection.call_tool(name, arguments))
        except Exception as error:
            if _timed_out(error):
                return f"mcp.timeout: {name} on {display(uri)} gave no answer within " \
                    f"{self.call_timeout:g} s"
            return f"mcp.call_failed: {name} on {display(uri)} failed: {describe(error)}"

    def _offers(self, uri: str, connection: McpConnection, name: str) -> bool:
        """Whether the catalogue has ``name``; a missing tool triggers one refresh first."""
        if any(tool.name == name for tool in self.catalogue(uri, connection)):
            return True
        return any(tool.name == name for tool in self.refresh(uri, connection))

    # ------------------------------------------------------------------ shutdown

    def close(self) -> None:
        """Close every session (stdio servers are stopped) and the event-loop thread."""
        with self._lock:
            connections = list(self._connections.values())
            self._connections.clear()
            for connection in connections:
                connection.close()
            if self._loop is not None:
                self._loop.stop()
                self._loop = None

    def __enter__(self) -> McpTools:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_mcp_tools(tools: Sequence[McpTool], env: ToolEnv, *,
                   environ: Mapping[str, str] | None = None,
                   cache: CatalogueCache = SHARED_CACHE, start_timeout: float = START_TIMEOUT,
                   call_timeout: float = CALL_TIMEOUT) -> McpTools:
    """Connect to the servers of ``tools`` and build their definitions and runners.

    Raises :class:`McpUnavailable` when a server cannot be reached (every
    connection opened so far is closed first).
    """
    opened = McpTools(cache=cache, start_timeout=start_timeout, call_timeout=call_timeout)
    try:
        for tool in tools:
            opened.add(tool, env, environ)
    except BaseException:
        opened.close()
        raise
    return opened
