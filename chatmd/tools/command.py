"""Model-visible definition of compact command tools: ``<tool name="rg" command="rg"/>``.

A compact (legacy) command tool desugars into a *fixed*-mode shell tool bound
to the synthetic runtime ``legacy:custom`` with optional model arguments,
stdin ``none``, rationale ``optional``, result ``combined`` and nonzero
``result`` (shell spec §5.3). Its schema and generated description follow
shell spec §9. Only the model-facing half lives here; running the command is
the shell runtime's job.
"""

from __future__ import annotations

from chatmd.tools.schema import STRING, STRING_ARRAY, JsonObject, function_tool, object_schema

LEGACY_RUNTIME = "legacy:custom"

_POLICY_SENTENCE = (
    "The runtime's command policy, approvals, sandboxing, resource limits, interceptors, "
    "output sanitization, secret redaction and audit settings govern execution."
)


def compact_command_schema() -> JsonObject:
    """Fixed mode, arguments optional, stdin none, rationale optional (shell spec §9)."""
    return object_schema({"arguments": STRING_ARRAY, "rationale": STRING})


def compact_command_description(command: str, description: str | None) -> str:
    """The generated description, with the declared one appended as guidance."""
    sentences = [
        f"Runs the fixed shell command `{command}` through the configured runtime.",
        "Optional literal argv elements may be given in `arguments`; each is appended to the "
        "command line as one argument and is never interpreted by a shell.",
        "You may give a short `rationale` saying why the command is needed; it is shown to "
        "whoever approves the command.",
        "The result is the command's standard output followed by its standard error; a "
        "non-zero exit status is reported in the normal result, not as a tool error.",
        _POLICY_SENTENCE,
    ]
    text = " ".join(sentences)
    guidance = (description or "").strip()
    if guidance:
        text += "\n\nAdditional tool guidance: " + guidance
    return text


def compact_command_definition(name: str, command: str, description: str | None) -> JsonObject:
    """The function definition of a compact command tool.

    ``strict`` is false: both properties are optional, which strict mode does
    not allow.
    """
    return function_tool(name, compact_command_description(command, description),
                         compact_command_schema(), strict=False)
