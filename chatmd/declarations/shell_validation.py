"""The declaration layer's seam to :mod:`chatmd.shell`: strict validation of shell declarations.

:func:`lower_shell_access` and :func:`lower_shell_tool` validate one top-level
``<shell_access>`` or shell ``<tool>`` (shell spec §1-§5), report every
problem through the :class:`LoweringContext`, and return the IR object
(:class:`~chatmd.ir.ShellRuntime` / :class:`~chatmd.ir.ShellTool`, ids and
references qualified by the import namespace).

A shell tool with errors is left out (None). A runtime with errors is still
returned: the prompt is incomplete anyway (the errors were reported), and the
compile check (:func:`chatmd.shell.integration.check_prompt_shell`) must see
that a declaration failed, so that it neither compiles nor reports follow-on
errors such as "unknown runtime" for the tools bound to it. Compilation is a
later phase (shell spec §0, phase 2): it runs as a registered prompt check.

:func:`check_shell` is that check (one of :func:`chatmd.frontend.chatmd_checks`);
:func:`with_compiled_shell` attaches the compiled records for ``--emit ir``;
:class:`ShellDefinitions` gives request building the shell tools' definitions.
The shell package is imported on first use, so prompts without shell
declarations do not pay for it, and neither do prompts whose only shell
declarations are clean legacy command tools (``<tool name command/>``): see
:func:`legacy_tools_compile_cleanly`.
"""

from __future__ import annotations

import os
from typing import Any

from chatcommon.diagnostics import Diagnostic
from chatmd.ast import Element
from chatmd.declarations.context import LoweringContext
from chatmd.ir import CustomTool, Prompt, ShellRuntime, ShellTool
from chatmd.provenance import Provenance, qualify


def lower_shell_access(element: Element, provenance: Provenance,
                       ctx: LoweringContext) -> ShellRuntime | None:
    """A ``<shell_access>`` runtime, validated; returned even when invalid (see above)."""
    from chatmd.shell import lower_shell_access as lower

    lowered = lower(element, provenance)
    ctx.diagnostics.extend(lowered.diagnostics)
    if lowered.value is not None:
        return ShellRuntime(lowered.value.id, lowered.value.extends, element, provenance)
    written_id = element.get("id") or ""
    extends = element.get("extends")
    return ShellRuntime(qualify(provenance.namespace, written_id) if written_id else "",
                        qualify(provenance.namespace, extends) if extends else None,
                        element, provenance)


def lower_shell_tool(element: Element, provenance: Provenance,
                     ctx: LoweringContext) -> ShellTool | None:
    """A shell ``<tool>``, validated: the IR tool, or None after its diagnostics."""
    from chatmd.shell import lower_shell_tool as lower

    lowered = lower(element, provenance)
    ctx.diagnostics.extend(lowered.diagnostics)
    if lowered.value is None:
        return None
    return ShellTool(lowered.value.name, lowered.value.runtime, element, provenance)


class ShellDefinitions:
    """Model-visible definitions of long-form shell tools: a ``chatmd.tools`` ``ShellToolDefiner``."""

    def definition(self, tool: ShellTool) -> dict[str, Any]:
        from chatmd.shell.integration import shell_tool_definition

        return shell_tool_definition(tool)


def _declared_runtimes(prompt: Prompt) -> bool:
    """Whether ``prompt`` has a runtime the user wrote (not the synthetic ``legacy:custom``)."""
    return any(not runtime.synthetic for runtime in prompt.shell_runtimes)


def has_shell_declarations(prompt: Prompt) -> bool:
    """Whether ``prompt`` declares anything the shell layer compiles."""
    return bool(_declared_runtimes(prompt) or prompt.moderator_runtime is not None
                or any(isinstance(tool, ShellTool | CustomTool) for tool in prompt.tools)
                or any(script.kind.startswith("shell_") for script in prompt.scripts))


def _single_command(command: str) -> bool:
    from chatmd.shell.compile.chain import ChainError, parse_chain

    try:
        return parse_chain(command).single_command is not None
    except ChainError:
        return False


def legacy_tools_compile_cleanly(prompt: Prompt) -> bool:
    """Whether the shell compiler certainly accepts ``prompt`` without any diagnostic.

    True only when the prompt's sole shell-related declarations are legacy
    command tools (no runtime, long-form shell tool, shell script or moderator
    binding), no administrative policy is configured, their names are distinct,
    and each command parses as one simple command. The compiler then adds the
    fixed ``legacy:custom`` runtime, which always compiles, and reports nothing;
    anything else (including every error case) goes through the compiler, so
    the diagnostics are always the compiler's own. This saves loading the shell
    compiler (about 70 attrs classes) for the most common shell declaration.
    """
    from chatmd.shell import POLICY_VARIABLE

    if (_declared_runtimes(prompt) or prompt.moderator_runtime is not None
            or os.environ.get(POLICY_VARIABLE)
            or any(script.kind.startswith("shell_") for script in prompt.scripts)):
        return False
    names: set[str] = set()
    for tool in prompt.tools:
        if isinstance(tool, ShellTool):
            return False
        if isinstance(tool, CustomTool):
            if tool.name in names or not _single_command(tool.command.strip()):
                return False
            names.add(tool.name)
    return True


def check_shell(prompt: Prompt) -> list[Diagnostic]:
    """The registered prompt check: compile the prompt's shell declarations (shell spec §6).

    A prompt without any shell-related declaration costs nothing (the shell
    package is not even imported); one whose only shell declarations are clean
    legacy command tools costs a command-line parse per tool.
    """
    if not has_shell_declarations(prompt) or legacy_tools_compile_cleanly(prompt):
        return []
    from chatmd.shell.integration import check_prompt_shell

    return check_prompt_shell(prompt)


def with_compiled_shell(prompt: Prompt) -> Prompt:
    """``prompt`` with the ``compiled`` records of its runtimes and shell tools (for --emit ir).

    Raises :class:`~chatcommon.diagnostics.DiagnosticError` when they do not compile.
    """
    if not has_shell_declarations(prompt):
        return prompt
    from chatmd.shell.integration import with_compiled_shell as compiled

    return compiled(prompt)
