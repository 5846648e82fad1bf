"""Model-visible definitions of shell tools (spec §9): JSON schema and description.

The schema lists only the fields the tool's mode accepts
(``additionalProperties: false``); the description is always generated from
the declaration and may be extended with the author's ``description``. A
description grants no authority: the runtime's policy governs every call.
"""

from __future__ import annotations

from typing import Any

from chatmd.shell.declare.typed_declarations import (
    ArgvCommand,
    ChainMode,
    CompactCommand,
    FixedMode,
    RawMode,
    ScriptMode,
    ShellToolDecl,
    StructuredMode,
)

_STRING = {"type": "string"}
_STRINGS = {"type": "array", "items": {"type": "string"}}

GOVERNANCE = ("The runtime's command policy, approvals, sandboxing, resource limits, "
              "interceptors, output sanitization, secret redaction and audit settings govern "
              "execution.")


def _mode_fields(tool: ShellToolDecl) -> tuple[list[str], list[str]]:
    """(properties, required) of the mode, in schema order."""
    mode = tool.mode
    if isinstance(mode, FixedMode):
        presence = mode.arguments.mode
        if presence == "none":
            return [], []
        return ["arguments"], ["arguments"] if presence == "required" else []
    if isinstance(mode, StructuredMode):
        return ["program", "arguments"], ["program", "arguments"]
    if isinstance(mode, ChainMode):
        return ["command"], ["command"]
    if isinstance(mode, RawMode):
        return ["script"], ["script"]
    return ["arguments"], []


def tool_schema(tool: ShellToolDecl) -> dict[str, Any]:
    """The JSON schema of the tool's model-visible arguments."""
    fields, mode_required = _mode_fields(tool)
    properties: dict[str, Any] = {name: dict(_STRINGS if name == "arguments" else _STRING)
                                  for name in fields}
    required: list[str] = []
    if tool.stdin != "none":
        properties["stdin"] = dict(_STRING)
    if tool.rationale != "none":
        properties["rationale"] = dict(_STRING)
    if tool.rationale == "required":
        required.append("rationale")
    if tool.stdin == "required":
        required.append("stdin")
    required += mode_required
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


def _fixed_sentence(mode: FixedMode) -> str:
    command = mode.command
    if isinstance(command, CompactCommand):
        subject = f"Runs the fixed shell command `{command.text}`"
    elif isinstance(command, ArgvCommand) and command.program is not None:
        subject = f"Runs the fixed executable `{command.program}`"
    else:
        reference = command.executable_ref if isinstance(command, ArgvCommand) else ""
        subject = (f"Runs the fixed executable reference `{reference}` through the configured "
                   "runtime")
    presence = mode.arguments.mode
    if presence == "none":
        return subject + "; it accepts no arguments."
    if presence == "required":
        return (subject + "; `arguments` are required and are appended as literal argv "
                "elements.")
    return subject + "; optional `arguments` are appended as literal argv elements."


def _mode_sentence(tool: ShellToolDecl) -> str:
    mode = tool.mode
    if isinstance(mode, FixedMode):
        return _fixed_sentence(mode)
    if isinstance(mode, StructuredMode):
        return ("Runs one executable directly from `program` and `arguments`; the arguments "
                "are passed literally, without an implicit shell.")
    if isinstance(mode, ChainMode):
        return ("Runs a parsed shell command chain from `command`: simple commands joined by "
                "|, ;, && and ||, without redirection, substitution or background jobs.")
    if isinstance(mode, RawMode):
        return (f"Runs raw shell source from `script` through the configured shell "
                f"executable `{mode.executable}`.")
    assert isinstance(mode, ScriptMode)
    return (f"Runs the configured script file `{mode.script}` after its source and executable "
            "identities are verified, with optional extra `arguments`.")


_STDIN = {"optional": "Optional `stdin` text is passed to the command's standard input.",
          "required": "`stdin` is required and is passed to the command's standard input."}
_RATIONALE = {"optional": "An optional `rationale` explains the call to the approver.",
              "required": "A `rationale` explaining why the command is needed is required."}
_RESULT = {"combined": "The result is the command's stdout followed by its stderr.",
           "stdout": "The result is the command's stdout only.",
           "structured": "The result is a JSON object with the request id, status, stdout, "
                         "stderr, truncation flags and the commands that ran."}
_NONZERO = {"result": "A nonzero exit status is returned as a normal result.",
            "error": "A nonzero exit status is returned as a tool error."}


def tool_description(tool: ShellToolDecl) -> str:
    parts = [_mode_sentence(tool), _STDIN.get(tool.stdin, ""),
             _RATIONALE.get(tool.rationale, ""), _RESULT[tool.result], _NONZERO[tool.nonzero],
             GOVERNANCE]
    text = " ".join(part for part in parts if part)
    extra = (tool.description or "").strip()
    if extra:
        text += "\n\nAdditional tool guidance: " + extra
    return text


def tool_definition(tool: ShellToolDecl) -> dict[str, Any]:
    """The Responses API function definition of a shell tool.

    ``strict`` is true only when every property is required (the API's strict
    mode rejects optional properties).
    """
    schema = tool_schema(tool)
    strict = set(schema.get("required", [])) == set(schema["properties"])
    return {"type": "function", "name": tool.name, "description": tool_description(tool),
            "parameters": schema, "strict": strict}
