"""Tool construction: a prompt's tool declarations to model-visible definitions (spec §6).

Definitions come out in declaration order (DECISIONS 12); one declaration may
yield several (an MCP server's catalogue) or none (an unresolved one).

Diagnostics, each at the ``<tool>`` (or ``<read>``) element concerned:

* ``agent.unknown_builtin`` — ``<tool name="..."/>`` names no built-in;
* ``agent.duplicate_tool_name`` — two definitions share a model-visible name
  (reported at the later declaration, with the first as related location);
* ``read_file.root_unavailable`` / ``read_file.unknown_variable`` — a read_file root
  is not an existing folder, or uses a variable the host does not supply;
* warnings ``chatmd.mcp_unresolved`` / ``chatmd.mcp_tool_not_found`` — an MCP
  catalogue could not be obtained, or lacks a selected tool (left out);
* warning ``chatmd.shell_tool_unavailable`` — a long-form shell tool that the
  shell compiler did not define (its prompt was not compiled) and that the
  host's :class:`~chatmd.tools.host.ShellToolDefiner` cannot define either
  (left out).

:func:`chatmd.tools.check.check_tools` is the host-independent part (unknown
built-ins and duplicate names among statically known names), for ``chatmdc check``.
"""

from __future__ import annotations

import attrs

from chatcommon.diagnostics import Diagnostic, DiagnosticError, Severity
from chatmd.declarations.paths import resolve_read_roots
from chatmd.ir import (
    AgentTool,
    BuiltinTool,
    CustomTool,
    McpTool,
    Prompt,
    ReadFileTool,
    ShellTool,
    Tool,
)
from chatmd.tools import builtins, names
from chatmd.tools.agent import agent_tool_definition
from chatmd.tools.check import PHASE, duplicate_names, tool_diagnostic, unknown_builtin
from chatmd.tools.command import compact_command_definition
from chatmd.tools.host import ToolHost
from chatmd.tools.mcp import McpUnavailable, remote_tool_definition, select_tools, server_uri
from chatmd.tools.read_file import default_read_file_tool, read_file_definition
from chatmd.tools.schema import JsonObject


@attrs.frozen
class ToolSet:
    """The definitions built from a prompt's tools, and what was reported on the way."""

    definitions: tuple[JsonObject, ...]
    diagnostics: tuple[Diagnostic, ...]

    @property
    def ok(self) -> bool:
        return not any(d.is_error for d in self.diagnostics)


class _Builder:
    def __init__(self, prompt: Prompt, host: ToolHost) -> None:
        self.prompt = prompt
        self.host = host
        self.diagnostics: list[Diagnostic] = []
        self.named: list[tuple[str, Tool]] = []
        self.definitions: list[JsonObject] = []

    def add(self, tool: Tool, definition: JsonObject) -> None:
        self.definitions.append(definition)
        self.named.append((definition["name"], tool))

    def build(self) -> ToolSet:
        for tool in self.prompt.tools:
            if isinstance(tool, BuiltinTool):
                self.builtin(tool)
            elif isinstance(tool, ReadFileTool):
                self.read_file(tool)
            elif isinstance(tool, CustomTool):
                self.add(tool, compact_command_definition(tool.name, tool.command,
                                                          tool.description))
            elif isinstance(tool, AgentTool):
                self.add(tool, agent_tool_definition(tool.name, tool.agent, tool.description))
            elif isinstance(tool, McpTool):
                self.mcp(tool)
            else:
                self.shell(tool)
        self.diagnostics.extend(duplicate_names(self.prompt, self.named))
        return ToolSet(tuple(self.definitions), tuple(self.diagnostics))

    def builtin(self, tool: BuiltinTool) -> None:
        definition = builtins.builtin_definition(tool.name)
        if definition is None:
            if names.is_known(tool.name):  # read_file / get_contents without roots
                self.read_file(default_read_file_tool(tool.name, tool.provenance))
            else:
                self.diagnostics.append(unknown_builtin(self.prompt, tool))
            return
        self.add(tool, definition)

    def read_file(self, tool: ReadFileTool) -> None:
        roots, problems = resolve_read_roots(tool, attrs.asdict(self.host.paths), phase=PHASE)
        self.diagnostics.extend(problems)
        if not problems:
            self.add(tool, read_file_definition(tool, roots))

    def mcp(self, tool: McpTool) -> None:
        uri = server_uri(tool.mcp_server, tool.client_id_env, tool.client_secret_env,
                         self.host.environ)
        try:
            catalogue = self.host.mcp_catalogue.list_tools(uri)
        except McpUnavailable as problem:
            self.diagnostics.append(tool_diagnostic(
                self.prompt, tool, "chatmd.mcp_unresolved",
                f"the tools of MCP server {tool.mcp_server} are left out of the request: "
                f"{problem}", severity=Severity.WARNING,
                hint="a host with MCP access (or a configured catalogue) resolves them"))
            return
        selected, missing = select_tools(catalogue, tool.names)
        for name in missing:
            self.diagnostics.append(tool_diagnostic(
                self.prompt, tool, "chatmd.mcp_tool_not_found",
                f"MCP server {tool.mcp_server} has no tool \"{name}\"; it is left out",
                severity=Severity.WARNING,
                hint="available: " + (", ".join(t.name for t in catalogue) or "none")))
        for remote in selected:
            self.add(tool, remote_tool_definition(remote, strict=tool.strict))

    def shell(self, tool: ShellTool) -> None:
        compiled = tool.compiled.get("definition") if tool.compiled else None
        if compiled is not None:  # the shell compiler's definition (shell spec §9)
            self.add(tool, compiled)
            return
        definer = self.host.shell_definer
        if definer is None:
            self.diagnostics.append(tool_diagnostic(
                self.prompt, tool, "chatmd.shell_tool_unavailable",
                f"shell tool \"{tool.name}\" is left out of the request: its definition comes "
                "from the shell runtime compiler, and this prompt's shell declarations were "
                "not compiled",
                severity=Severity.WARNING))
            return
        try:
            self.add(tool, definer.definition(tool))
        except DiagnosticError as error:
            self.diagnostics.extend(error.diagnostics)


def build_tools(prompt: Prompt, host: ToolHost) -> ToolSet:
    """The model-visible definitions of ``prompt``'s tools, in declaration order."""
    return _Builder(prompt, host).build()
