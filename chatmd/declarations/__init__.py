"""The declaration layer (spec §4): expanded top-level elements to the typed :class:`~chatmd.ir.Prompt`.

One module per family: :mod:`.config`, :mod:`.messages` (messages and
reasoning; :mod:`.content` for bodies), :mod:`.tools` (with :mod:`.read_file`
and :mod:`.paths`), :mod:`.scripts`, :mod:`.moderator_runtime`, and
:mod:`.shell` (the seam to the shell validator). :func:`lower_prompt` converts
every top-level element in order and never stops at the first error: every
problem becomes a diagnostic and the element is left out.

Elements that mean something only at top level (declarations and messages)
are still converted when nested inside another element — so they are
validated — and then dropped (spec §2.5). ``doc``, ``img``, ``agent`` and
``summary`` at top level are ignored.
"""

from __future__ import annotations

from collections.abc import Callable

from chatcommon.diagnostics import Diagnostic
from chatmd.ast import Element, Node
from chatmd.declarations.config import lower_config
from chatmd.declarations.context import LoweringContext, NestedOpener
from chatmd.declarations.messages import (
    MESSAGE_TAGS,
    lower_message,
    lower_reasoning,
    open_message,
    open_reasoning,
)
from chatmd.declarations.moderator_runtime import lower_moderator_runtime
from chatmd.declarations.scripts import check_script_registry, lower_script
from chatmd.declarations.shell_validation import lower_shell_access
from chatmd.declarations.tools import lower_tool
from chatmd.imports import ExpandedPrompt
from chatmd.ir import (
    LEGACY_RUNTIME_ID,
    Config,
    ConversationItem,
    CustomTool,
    ModeratorRuntime,
    Prompt,
    Script,
    ShellRuntime,
    Tool,
)
from chatmd.loading import Confinement
from chatmd.provenance import Provenance

__all__ = ["LoweringContext", "lower_prompt"]

_Lowering = Callable[[Element, Provenance, LoweringContext], object]

#: How each top-level tag is converted (tags not listed are ignored).
_LOWERINGS: dict[str, _Lowering] = {
    **{tag: lower_message for tag in MESSAGE_TAGS},
    "reasoning": lower_reasoning,
    "config": lower_config,
    "tool": lower_tool,
    "script": lower_script,
    "shell_access": lower_shell_access,
    "moderator_runtime": lower_moderator_runtime,
}


def _open_nested(ctx: LoweringContext) -> NestedOpener:
    def open_nested(element: Element, provenance: Provenance) -> tuple[int, tuple[Node, ...]] | None:
        tag = element.tag
        if tag in MESSAGE_TAGS:
            return open_message(element, provenance, ctx)
        if tag == "reasoning":
            return open_reasoning(element, provenance, ctx)
        lowering = _LOWERINGS.get(tag)
        if lowering is not None:
            lowering(element, provenance, ctx)
        return None
    return open_nested


def _legacy_runtime(tools: list[Tool]) -> list[ShellRuntime]:
    """The synthetic ``legacy:custom`` runtime when a legacy command tool exists (shell spec §5.3).

    It has no syntax tree (``element=None``) and the first legacy tool's provenance;
    the shell compiler builds its settings.
    """
    for tool in tools:
        if isinstance(tool, CustomTool):
            return [ShellRuntime(LEGACY_RUNTIME_ID, None, None, tool.provenance)]
    return []


def lower_prompt(expanded: ExpandedPrompt, *, name: str, prompt_dir: str,
                 confine: bool = False) -> tuple[Prompt, list[Diagnostic]]:
    """Convert every expanded top-level element; the prompt and the diagnostics found.

    The prompt is complete only when no error was reported; otherwise it holds
    whatever converted cleanly (useful for further checks, not for running).
    """
    ctx = LoweringContext(prompt_dir=prompt_dir, folders=expanded.folders,
                          confinement=Confinement.of(prompt_dir) if confine else None)
    ctx.open_nested = _open_nested(ctx)
    config: Config | None = None
    tools: list[Tool] = []
    scripts: list[tuple[Script, Element]] = []
    runtimes: list[ShellRuntime] = []
    moderator_runtime: ModeratorRuntime | None = None
    items: list[ConversationItem] = []
    append_item = items.append
    for element, provenance in zip(expanded.elements, expanded.provenances, strict=True):
        tag = element.tag
        if tag in MESSAGE_TAGS:
            message = lower_message(element, provenance, ctx)
            if message is not None:
                append_item(message)
        elif tag == "reasoning":
            reasoning = lower_reasoning(element, provenance, ctx)
            if reasoning is not None:
                append_item(reasoning)
        elif tag == "config":
            lowered = lower_config(element, provenance, ctx)
            if config is None:
                config = lowered
        elif tag == "tool":
            tool = lower_tool(element, provenance, ctx)
            if tool is not None:
                tools.append(tool)
        elif tag == "script":
            script = lower_script(element, provenance, ctx)
            if script is not None:
                scripts.append((script, element))
        elif tag == "shell_access":
            runtime = lower_shell_access(element, provenance, ctx)
            if runtime is not None:
                runtimes.append(runtime)
        elif tag == "moderator_runtime":
            declared = lower_moderator_runtime(element, provenance, ctx)
            if declared is not None:
                moderator_runtime = declared
    check_script_registry(scripts, ctx)
    runtimes += _legacy_runtime(tools)
    prompt = Prompt(config if config is not None else Config(), tuple(tools),
                    tuple(script for script, _ in scripts), tuple(runtimes), moderator_runtime,
                    tuple(items), name, prompt_dir)
    return prompt, ctx.diagnostics
