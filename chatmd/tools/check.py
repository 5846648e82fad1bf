"""The host-independent tool checks, for ``chatmdc check`` (spec §6).

* ``agent.unknown_builtin`` — ``<tool name="..."/>`` names no built-in;
* ``agent.duplicate_tool_name`` — two declarations give the model the same
  function name (reported at the later one, with the first as related note).

MCP declarations are left out here (only the server knows their names); tool
construction (:mod:`chatmd.tools.construct`) repeats the duplicate check over
the definitions it actually builds. Kept small and light: ``chatmdc check``
imports it on every run.
"""

from __future__ import annotations

from chatcommon.diagnostics import Diagnostic, Related, Severity
from chatmd.ir import AgentTool, BuiltinTool, CustomTool, Prompt, ReadFileTool, ShellTool, Tool
from chatmd.ir_diagnostics import diagnostic_at, related_at
from chatmd.tools import names

PHASE = "tools"
READ_FILE = "read_file"


def tool_diagnostic(prompt: Prompt, tool: Tool, code: str, message: str, *,
        severity: Severity = Severity.ERROR, hint: str | None = None,
        related: tuple[Related, ...] = ()) -> Diagnostic:
    return diagnostic_at(code, message, provenance=tool.provenance, fallback_file=prompt.name,
                         phase=PHASE, severity=severity, hint=hint, related=related)


def unknown_builtin(prompt: Prompt, tool: BuiltinTool) -> Diagnostic:
    import difflib  # only when there is something to suggest

    known = sorted(names.MODEL_NAMES)
    close = difflib.get_close_matches(tool.name, known, n=1)
    hint = (f"did you mean `{close[0]}`? " if close else "") + \
        "built-ins: " + ", ".join(known) + \
        "; a command tool needs `command=`, an agent tool `agent=`, an MCP tool `mcp_server=`"
    return tool_diagnostic(prompt, tool, "agent.unknown_builtin",
               f"unknown built-in tool \"{tool.name}\": expected one of the built-in tool names",
               hint=hint)


def static_model_names(tool: Tool) -> tuple[str, ...]:
    """The model-visible names a declaration yields, when known without a host."""
    if isinstance(tool, BuiltinTool):
        name = names.MODEL_NAMES.get(tool.name)
        return (name,) if name else ()
    if isinstance(tool, ReadFileTool):
        return (READ_FILE,)
    if isinstance(tool, CustomTool | AgentTool | ShellTool):
        return (tool.name,)
    return ()  # MCP: only the server knows


def _shell_layer(tool: Tool) -> bool:
    return isinstance(tool, CustomTool | ShellTool)


def duplicate_names(prompt: Prompt, named: list[tuple[str, Tool]]) -> list[Diagnostic]:
    """``agent.duplicate_tool_name`` for every later definition reusing a name.

    Two command or shell tools with one name are left to the shell compiler,
    which reports them as ``shell.duplicate_tool`` when the prompt is loaded.
    """
    first: dict[str, Tool] = {}
    found = []
    for name, tool in named:
        earlier = first.setdefault(name, tool)
        if earlier is tool or (_shell_layer(earlier) and _shell_layer(tool)):
            continue
        related = related_at(earlier.provenance, None, f"\"{name}\" first declared here",
                             prompt.name)
        found.append(tool_diagnostic(
            prompt, tool, "agent.duplicate_tool_name",
            f"duplicate tool name \"{name}\": another tool declared earlier already has this "
            "model-visible name", hint="rename one of the tools (tool names must be unique)",
            related=(related,)))
    return found


def check_tools(prompt: Prompt) -> list[Diagnostic]:
    """Unknown built-ins and duplicate model-visible names, without consulting any host."""
    diagnostics: list[Diagnostic] = []
    named: list[tuple[str, Tool]] = []
    for tool in prompt.tools:
        if isinstance(tool, BuiltinTool) and not names.is_known(tool.name):
            diagnostics.append(unknown_builtin(prompt, tool))
        named.extend((name, tool) for name in static_model_names(tool))
    return diagnostics + duplicate_names(prompt, named)


