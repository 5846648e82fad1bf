"""What tool construction needs from its host: path variables, MCP catalogue, shell definer.

Tool construction (:mod:`chatmd.tools.construct`) is otherwise pure: read_file
roots are resolved with :class:`PathVariables`, MCP selections against an
:class:`~chatmd.tools.mcp.McpCatalogue`, and long-form shell tools (whose
definitions belong to the shell runtime compiler) through a
:class:`ShellToolDefiner` when the host has one.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Protocol

import attrs

from chatmd.ir import ShellTool
from chatmd.tools.mcp import McpCatalogue, NoMcpCatalogue
from chatmd.tools.schema import JsonObject


@attrs.frozen
class PathVariables:
    """Host values of the ``${...}`` path variables used by read_file roots.

    ``source_dir`` is not here: it is the folder of each declaring file.
    """

    tool_dir: str
    workspace: str
    prompt_dir: str
    session_dir: str
    cache_dir: str
    home: str

    @classmethod
    def for_host(cls, prompt_dir: str | os.PathLike[str], *,
                 cwd: str | os.PathLike[str] | None = None) -> PathVariables:
        """A standalone host: workspace and tool dir are the working directory."""
        here = os.path.abspath(cwd if cwd is not None else os.getcwd())
        home = os.path.expanduser("~")
        return cls(tool_dir=here, workspace=here, prompt_dir=os.path.abspath(prompt_dir),
                   session_dir=os.path.join(here, ".chatmd"),
                   cache_dir=os.path.join(home, ".cache", "chatmd"), home=home)


class ShellToolDefiner(Protocol):
    def definition(self, tool: ShellTool) -> JsonObject:
        """The model-visible definition of a long-form shell tool.

        Raise :class:`chatcommon.diagnostics.DiagnosticError` when the declaration
        (or its runtime) is invalid.
        """
        ...


@attrs.frozen
class ToolHost:
    """The host facts tool construction depends on."""

    paths: PathVariables
    mcp_catalogue: McpCatalogue = attrs.field(factory=NoMcpCatalogue)
    environ: Mapping[str, str] | None = None
    shell_definer: ShellToolDefiner | None = None

    @classmethod
    def standalone(cls, prompt_dir: str | os.PathLike[str]) -> ToolHost:
        """Working directory as workspace and tool dir, no MCP, no shell compiler."""
        return cls(paths=PathVariables.for_host(prompt_dir))
