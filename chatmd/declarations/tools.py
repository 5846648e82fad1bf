"""``<tool>`` declarations (spec §4.8): dispatch on the attributes to one tool shape.

1. ``type="shell"`` or any ``runtime`` attribute → long-form shell tool
   (:mod:`chatmd.declarations.shell_validation`).
2. Two or more of ``command``/``agent``/``mcp_server`` → ``chatmd.tool_conflicting_kinds``.
3. ``command`` → :class:`~chatmd.ir.CustomTool` (compact command tool).
4. ``agent`` → :class:`~chatmd.ir.AgentTool`.
5. ``mcp_server`` → :class:`~chatmd.ir.McpTool`.
6. Otherwise a name is required: ``read_file``/``get_contents`` →
   :mod:`chatmd.declarations.read_file`; anything else → :class:`~chatmd.ir.BuiltinTool`
   (whether the built-in exists is decided at tool construction).

Plain forms are lenient (unknown attributes such as a stray ``local`` are
ignored); names, commands, agents, servers and descriptions are stripped.
"""

from __future__ import annotations

from chatmd.ast import Element
from chatmd.declarations.attributes import lenient, stripped_or_none
from chatmd.declarations.content import checked_src
from chatmd.declarations.context import LoweringContext
from chatmd.declarations.read_file import lower_read_file
from chatmd.declarations.shell_validation import lower_shell_tool
from chatmd.ir import AgentTool, BuiltinTool, CustomTool, McpTool, Tool
from chatmd.provenance import Provenance
from chatmd.vocabulary import READ_FILE_TOOL_NAMES, WS

_KINDS = ("command", "agent", "mcp_server")


def lower_tool(element: Element, provenance: Provenance, ctx: LoweringContext) -> Tool | None:
    """The IR tool for one ``<tool>``; None after a reported problem."""
    values = lenient(element)
    if values.get("type") == "shell" or "runtime" in values:
        return lower_shell_tool(element, provenance, ctx)
    name = values.get("name", "").strip(WS)
    kinds = [kind for kind in _KINDS if kind in values]
    if len(kinds) > 1:
        ctx.error(ctx.attribute_span(element, kinds[1]), "chatmd.tool_conflicting_kinds",
                  f"<tool> combines {' and '.join(f'`{k}`' for k in kinds)}: a tool is either a "
                  "command, an agent or an MCP server", path=("tool",),
                  hint="split it into one <tool> per kind")
        return None
    kind = kinds[0] if kinds else None
    description = stripped_or_none(values.get("description"))
    if kind == "mcp_server":
        return _mcp_tool(element, values, name, description, provenance, ctx)
    if not name:
        ctx.error(ctx.attribute_span(element, "name"), "chatmd.tool_empty_name",
                  "<tool> needs a non-empty name: expected name=\"...\"", path=("tool", "name"))
        return None
    if kind == "command":
        command = values["command"].strip(WS)
        if not command:
            ctx.error(ctx.attribute_span(element, "command"), "chatmd.tool_empty_command",
                      f"tool `{name}` has an empty command: expected command=\"program args\"",
                      path=("tool", "command"))
            return None
        return CustomTool(name, command, description, provenance)
    if kind == "agent":
        agent = values["agent"].strip(WS)
        if not agent:
            ctx.error(ctx.attribute_span(element, "agent"), "chatmd.tool_empty_agent",
                      f"tool `{name}` has an empty agent: expected agent=\"path/to/prompt.chatmd\"",
                      path=("tool", "agent"))
            return None
        checked_src(element, agent, ctx, attribute="agent")
        return AgentTool(name, agent, "local" in values, description, provenance)
    if name in READ_FILE_TOOL_NAMES:
        return lower_read_file(element, provenance, ctx)
    return BuiltinTool(name, provenance)


def _mcp_tool(element: Element, values: dict[str, str], name: str, description: str | None,
              provenance: Provenance, ctx: LoweringContext) -> McpTool | None:
    server = values["mcp_server"].strip(WS)
    if not server:
        ctx.error(ctx.attribute_span(element, "mcp_server"), "chatmd.tool_empty_mcp_server",
                  "<tool> has an empty mcp_server: expected stdio:<command> or an http(s) URL",
                  path=("tool", "mcp_server"))
        return None
    names: tuple[str, ...] | None = None
    if name:
        names = (name,)
    else:
        selection = values.get("include") or values.get("includes")
        if selection:
            names = tuple(item.strip(WS) for item in selection.split(","))
    return McpTool(server, names, description, "strict" in values, values.get("client_id_env"),
                   values.get("client_secret_env"), provenance)
