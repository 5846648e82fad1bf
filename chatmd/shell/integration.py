"""The adapter between the prompt IR (:mod:`chatmd.ir`) and the shell compiler.

The declaration layer keeps shell declarations as IR objects carrying their
element and provenance. This module lowers them again into typed
declarations (cheap and deterministic), adds legacy command tools, shell
scripts and the moderator binding, and then:

- :func:`check_prompt_shell` — the prompt check registered with
  :func:`chatmd.frontend.chatmd_checks`: compile (shell spec §6) and the
  administrative ceilings of ``OCHAT_SHELL_ADMIN_POLICY`` (§6.9); returns the
  diagnostics. It reports nothing when a shell declaration itself is invalid
  (those errors are already reported and stop the shell layer, §0).
- :func:`with_compiled_shell` — the prompt with each runtime's and shell
  tool's ``compiled`` record (``chatmdc compile --emit ir``).
- :func:`shell_tool_definition` — the model-visible definition of a long-form
  shell tool, for request building (behind
  :class:`chatmd.declarations.shell_validation.ShellDefinitions`).
- :func:`compile_declared_shell` — the compiled shell as declared, which
  ``chatmdc shell explain`` (:mod:`chatmd.shell.cli`) explains.

Legacy tools, scripts and the moderator binding are located by their
provenance (the IR keeps no syntax tree for them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from chatcommon.diagnostics import Diagnostic, DiagnosticError
from chatcommon.records import evolve
from chatmd.ir import CustomTool, Prompt, ShellTool
from chatmd.shell.compile.compiler import CompiledShell, compile_runtimes
from chatmd.shell.compile.features import SUPPORTED_FEATURES
from chatmd.shell.declare.lower_runtime import lower_shell_access
from chatmd.shell.declare.lower_tool import lower_shell_tool
from chatmd.shell.declare.typed_declarations import (
    LegacyToolDecl,
    ModeratorRuntimeDecl,
    ShellAccessDecl,
    ShellScript,
    ShellToolDecl,
)
from chatmd.shell.secure.admin import (
    AdminPolicyError,
    admin_policy_from_environment,
    check_admin_ceilings,
)


@attrs.frozen
class ShellInputs:
    """The compiler's inputs read from a prompt; ``failed`` when a declaration is invalid."""

    runtimes: list[ShellAccessDecl]
    tools: list[ShellToolDecl]
    legacy_tools: list[LegacyToolDecl]
    scripts: list[ShellScript]
    moderator: ModeratorRuntimeDecl | None
    failed: bool

    @property
    def empty(self) -> bool:
        return not (self.runtimes or self.tools or self.legacy_tools or self.moderator
                    or any(script.kind.startswith("shell_") for script in self.scripts))


def shell_inputs(prompt: Prompt) -> ShellInputs:
    failed = False
    runtimes: list[ShellAccessDecl] = []
    for runtime in prompt.shell_runtimes:
        if runtime.element is None:
            continue  # the synthetic legacy:custom: the compiler builds it from the legacy tools
        assert runtime.provenance is not None
        lowered = lower_shell_access(runtime.element, runtime.provenance)
        if lowered.value is None:
            failed = True
        else:
            runtimes.append(lowered.value)
    tools: list[ShellToolDecl] = []
    legacy: list[LegacyToolDecl] = []
    for tool in prompt.tools:
        if isinstance(tool, ShellTool) and tool.provenance is not None:
            lowered_tool = lower_shell_tool(tool.element, tool.provenance)
            if lowered_tool.value is None:
                failed = True
            else:
                tools.append(lowered_tool.value)
        elif isinstance(tool, CustomTool):
            legacy.append(LegacyToolDecl(tool.name, tool.command, tool.description,
                                         provenance=tool.provenance))
    scripts = [ShellScript(script.id, script.kind, script.source_hash,
                           attrs.asdict(script.limits), provenance=script.provenance)
               for script in prompt.scripts]
    if len({script.id for script in scripts}) != len(scripts):
        failed = True  # chatmd.duplicate_script, reported by the declaration layer
    moderator = None
    if prompt.moderator_runtime is not None:
        moderator = ModeratorRuntimeDecl(prompt.moderator_runtime.qualified,
                                         provenance=prompt.moderator_runtime.provenance)
    return ShellInputs(runtimes, tools, legacy, scripts, moderator, failed)


def _compile(inputs: ShellInputs, platform: str | None,
             features: frozenset[str]) -> CompiledShell:
    return compile_runtimes(inputs.runtimes, inputs.tools, legacy_tools=inputs.legacy_tools,
                            scripts=inputs.scripts, moderator=inputs.moderator,
                            platform=platform, features=features)


def compile_declared_shell(prompt: Prompt, *, platform: str | None = None) -> CompiledShell:
    """Compile a prompt's shell declarations as they are (no administrative ceilings).

    Unlike :func:`compile_prompt_shell` it always compiles, even when there are no
    shell declarations (``chatmdc shell explain`` shows the defaults then).
    """
    return _compile(shell_inputs(prompt), platform, SUPPORTED_FEATURES)


def compile_prompt_shell(prompt: Prompt, *, platform: str | None = None,
                         features: frozenset[str] = SUPPORTED_FEATURES,
                         environ: Mapping[str, str] | None = None
                         ) -> tuple[CompiledShell | None, list[Diagnostic]]:
    """Compile and secure a prompt's shell declarations (None when there are none).

    The diagnostics include the administrative ceiling violations.
    """
    inputs = shell_inputs(prompt)
    if inputs.failed or inputs.empty:
        return None, []
    compiled = _compile(inputs, platform, features)
    diagnostics = list(compiled.diagnostics)
    if compiled.manifest is not None:
        try:
            policy = admin_policy_from_environment(environ)
        except AdminPolicyError as error:
            diagnostics.append(error.diagnostic)
        else:
            if policy is not None:
                diagnostics += check_admin_ceilings(compiled, policy)
    return compiled, diagnostics


def check_prompt_shell(prompt: Prompt) -> list[Diagnostic]:
    """The prompt check: every compile and administrative diagnostic of the shell layer."""
    return compile_prompt_shell(prompt)[1]


def with_compiled_shell(prompt: Prompt) -> Prompt:
    """``prompt`` with ``compiled`` records on its runtimes and shell tools.

    Raises :class:`DiagnosticError` when the shell declarations do not compile.
    """
    from chatmd.shell.compile.schema import tool_definition

    compiled, diagnostics = compile_prompt_shell(prompt)
    if compiled is None:
        return prompt
    if any(d.is_error for d in diagnostics) or compiled.manifest is None:
        raise DiagnosticError(diagnostics)
    digest = compiled.manifest.sha256
    payload = compiled.manifest.payload
    runtimes = {record["id"]: {"manifest_sha256": digest, **record}
                for record in payload["runtimes"]}
    definitions = {tool.name: tool_definition(tool) for tool in compiled.tools}
    tools = {record["name"]: {"manifest_sha256": digest, **record,
                              "definition": definitions[record["name"]]}
             for record in payload["tools"]}
    return evolve(
        prompt,
        shell_runtimes=tuple(evolve(r, compiled=runtimes.get(r.id))
                             for r in prompt.shell_runtimes),
        tools=tuple(evolve(t, compiled=tools.get(t.name)) if isinstance(t, ShellTool)
                    else t for t in prompt.tools))


def shell_tool_definition(tool: ShellTool) -> dict[str, Any]:
    """The model-visible definition (spec §9) of a long-form shell tool of the IR.

    Raises :class:`DiagnosticError` when the declaration is invalid.
    """
    from chatmd.shell.compile.schema import tool_definition

    if tool.compiled is not None and "definition" in tool.compiled:
        return dict(tool.compiled["definition"])
    assert tool.provenance is not None
    lowered = lower_shell_tool(tool.element, tool.provenance)
    if lowered.value is None:
        raise DiagnosticError(lowered.diagnostics)
    return tool_definition(lowered.value)
