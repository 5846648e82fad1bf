"""Model-visible shell tool definitions (spec §9): schema per mode, generated description."""

from __future__ import annotations

import json

import pytest

from chatmd.shell import ShellToolDecl, desugar_legacy_tool, tool_definition, tool_schema
from chatmd.shell.declare.typed_declarations import LegacyToolDecl
from tests.chatmd.shell.support import declarations_of


def tool(text: str) -> ShellToolDecl:
    found = declarations_of(text)
    assert not found.diagnostics, [str(d) for d in found.diagnostics]
    return found.tools[0]  # type: ignore[no-any-return]


STRING = {"type": "string"}
STRINGS = {"type": "array", "items": {"type": "string"}}

SCHEMAS = [
    ('<tool name="t" type="shell" runtime="r" command="ls"><arguments mode="none"/></tool>',
     {}, None),
    ('<tool name="t" type="shell" runtime="r" command="ls"/>', {"arguments": STRINGS}, None),
    ('<tool name="t" type="shell" runtime="r" command="ls"><arguments mode="optional"/></tool>',
     {"arguments": STRINGS}, None),
    ('<tool name="t" type="shell" runtime="r" command="ls"><arguments mode="required"/></tool>',
     {"arguments": STRINGS}, ["arguments"]),
    ('<tool name="t" type="shell" mode="structured" runtime="r" rationale="none"/>',
     {"program": STRING, "arguments": STRINGS}, ["program", "arguments"]),
    ('<tool name="t" type="shell" mode="chain" runtime="r" rationale="none"/>',
     {"command": STRING}, ["command"]),
    ('<tool name="t" type="shell" mode="raw" runtime="r" executable="/bin/sh" '
     'rationale="none"/>', {"script": STRING}, ["script"]),
    ('<tool name="t" type="shell" mode="script" runtime="r" script="run.sh" rationale="none"/>',
     {"arguments": STRINGS}, None),
]


@pytest.mark.parametrize(("text", "properties", "required"), SCHEMAS)
def test_schema_per_mode(text: str, properties: dict[str, object],
                         required: list[str] | None) -> None:
    schema = tool_schema(tool(text))
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert list(schema["properties"]) == list(properties)
    assert schema["properties"] == properties
    assert schema.get("required") == required


def test_the_spec_example_is_reproduced_exactly() -> None:
    schema = tool_schema(tool('<tool name="t" type="shell" mode="structured" runtime="r" '
                              'rationale="required"/>'))
    assert json.dumps(schema, separators=(",", ":")) == (
        '{"type":"object","properties":{"program":{"type":"string"},"arguments":{"type":'
        '"array","items":{"type":"string"}},"rationale":{"type":"string"}},"required":'
        '["rationale","program","arguments"],"additionalProperties":false}')


def test_stdin_and_rationale_follow_the_mode_fields() -> None:
    schema = tool_schema(tool('<tool name="t" type="shell" mode="chain" runtime="r" '
                              'stdin="required" rationale="optional"/>'))
    assert list(schema["properties"]) == ["command", "stdin", "rationale"]
    assert schema["required"] == ["stdin", "command"]


def test_non_fixed_modes_default_to_an_optional_rationale() -> None:
    assert "rationale" in tool_schema(tool('<tool name="t" type="shell" mode="chain" '
                                           'runtime="r"/>'))["properties"]
    assert "rationale" not in tool_schema(tool('<tool name="t" type="shell" runtime="r" '
                                               'command="ls"/>'))["properties"]


DESCRIPTIONS = [
    ('<tool name="t" type="shell" runtime="r" command="rg --json"/>', "fixed shell command"),
    ('<tool name="t" type="shell" runtime="r"><command program="rg"/></tool>',
     "fixed executable `rg`"),
    ('<tool name="t" type="shell" runtime="r" executable_ref="rg"/>',
     "through the configured runtime"),
    ('<tool name="t" type="shell" mode="structured" runtime="r"/>', "one executable directly"),
    ('<tool name="t" type="shell" mode="chain" runtime="r"/>', "parsed shell command chain"),
    ('<tool name="t" type="shell" mode="raw" runtime="r" executable="/bin/sh"/>',
     "raw shell source"),
    ('<tool name="t" type="shell" mode="script" runtime="r" script="${workspace}/run.sh"/>',
     "source and executable identities"),
]


@pytest.mark.parametrize(("text", "fragment"), DESCRIPTIONS)
def test_descriptions_name_the_mode_and_the_governing_policy(text: str, fragment: str) -> None:
    description = tool_definition(tool(text))["description"]
    assert fragment in description
    assert "command policy" in description
    assert "Additional tool guidance: " not in description


def test_legacy_tools_describe_the_fixed_shell_command() -> None:
    legacy = desugar_legacy_tool(LegacyToolDecl("rg", "rg", "ripgrep search"))
    definition = tool_definition(legacy)
    assert "fixed shell command `rg`" in definition["description"]
    assert definition["description"].endswith("\n\nAdditional tool guidance: ripgrep search")
    assert definition["parameters"]["properties"] == {"arguments": STRINGS,
                                                      "rationale": STRING}
    assert "required" not in definition["parameters"]


def test_author_guidance_is_trimmed_and_appended() -> None:
    definition = tool_definition(tool('<tool name="t" type="shell" mode="chain" runtime="r" '
                                      'description="  Prefer rg.  "/>'))
    assert definition["description"].endswith("\n\nAdditional tool guidance: Prefer rg.")
    blank = tool_definition(tool('<tool name="t" type="shell" mode="chain" runtime="r" '
                                 'description="   "/>'))
    assert "Additional tool guidance" not in blank["description"]


def test_definitions_are_functions_and_strict_only_when_everything_is_required() -> None:
    structured = tool_definition(tool('<tool name="sh" type="shell" mode="structured" '
                                      'runtime="r" rationale="required"/>'))
    assert (structured["type"], structured["name"], structured["strict"]) == (
        "function", "sh", True)
    fixed = tool_definition(tool('<tool name="ls" type="shell" runtime="r" command="ls"/>'))
    assert fixed["strict"] is False


def test_stdin_rationale_result_and_nonzero_sentences() -> None:
    description = tool_definition(tool(
        '<tool name="t" type="shell" mode="chain" runtime="r" stdin="optional" '
        'rationale="required" result="structured" nonzero="error"/>'))["description"]
    assert "stdin" in description and "rationale" in description
    assert "JSON object" in description and "tool error" in description
