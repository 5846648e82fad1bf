"""``mcp_server`` values: ``stdio:COMMAND ARGS`` or an ``http(s)://`` URL, parsed into SDK targets.

* ``stdio:python3 server.py --flag`` — the command line is split like a POSIX
  shell would (``shlex``, no expansion) and run with the workspace as its
  working directory; the SDK kills its process group when the session closes.
* ``http://...`` / ``https://...`` — the streamable HTTP transport.

``client_id_env`` / ``client_secret_env`` add ``client_id`` / ``client_secret``
query parameters to HTTP URLs (:func:`chatmd.tools.mcp.server_uri`); the
:func:`display` form, used in every message, never shows the query.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from mcp.client.stdio import StdioServerParameters

Target = StdioServerParameters | str


class BadServer(ValueError):
    """An ``mcp_server`` value that names no transport (the message says what was expected)."""


def parse_server(uri: str, workspace: Path) -> Target:
    """The SDK target for ``uri`` (``stdio:`` parameters or the URL itself)."""
    if uri.startswith("stdio:"):
        try:
            words = shlex.split(uri[len("stdio:"):])
        except ValueError as error:
            raise BadServer(f"the stdio command line does not parse: {error}") from None
        if not words:
            raise BadServer("`stdio:` must be followed by a command line")
        return StdioServerParameters(command=words[0], args=words[1:], cwd=str(workspace))
    parts = urlsplit(uri)
    if parts.scheme.lower() in ("http", "https") and parts.netloc:
        return uri
    raise BadServer("expected `stdio:COMMAND ARGS` or an http:// or https:// URL")


def display(uri: str) -> str:
    """``uri`` without query or user info (credentials stay out of messages)."""
    if uri.startswith("stdio:"):
        return uri
    parts = urlsplit(uri)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
