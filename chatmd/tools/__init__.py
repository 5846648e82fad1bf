"""Tool definitions sent to the model, and tool construction from a prompt (spec §6).

Public API (importable from ``chatmd.tools``; each name is loaded on first
use, so ``chatmdc check`` pays only for :func:`check_tools`):

* :func:`build_tools` (``prompt, host -> ToolSet``): every declaration's
  definitions in declaration order, with positioned diagnostics;
* :func:`check_tools` (``prompt -> list[Diagnostic]``): the host-independent
  checks (unknown built-ins, duplicate names) for ``chatmdc check``;
* :class:`ToolHost`, :class:`PathVariables`: what construction needs from the
  host; :class:`McpCatalogue` and friends: the pluggable MCP catalogue;
* the per-kind builders live in the submodules (``builtins``, ``apply_patch``,
  ``read_file``, ``agent``, ``mcp``, ``command``).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "ToolSet": "chatmd.tools.construct",
    "build_tools": "chatmd.tools.construct",
    "check_tools": "chatmd.tools.check",
    "static_model_names": "chatmd.tools.check",
    "PathVariables": "chatmd.tools.host",
    "ShellToolDefiner": "chatmd.tools.host",
    "ToolHost": "chatmd.tools.host",
    "McpCatalogue": "chatmd.tools.mcp",
    "McpRemoteTool": "chatmd.tools.mcp",
    "McpUnavailable": "chatmd.tools.mcp",
    "NoMcpCatalogue": "chatmd.tools.mcp",
    "StaticMcpCatalogue": "chatmd.tools.mcp",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'chatmd.tools' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
