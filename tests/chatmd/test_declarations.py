"""The declaration layer (spec §4, checklist 35-109 in this layer's scope): what lands in the IR.

Diagnostics (codes, positions) are covered by testdata/declarations/; these
tests check the values each declaration produces.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from chatmd.frontend import script_source_file
from chatmd.ir import (
    AgentItem,
    AgentTool,
    BuiltinTool,
    Config,
    CustomTool,
    DocItem,
    ImageItem,
    InlineSource,
    McpTool,
    Message,
    PathExpr,
    ReadFileTool,
    ReadRoot,
    Reasoning,
    ScriptLimits,
    SrcSource,
    SummaryPart,
    TextItem,
    ToolCallRef,
)
from tests.chatmd.prompt_files import check, codes, load


def only_item(tmp_path: Path, text: str) -> Message | Reasoning:
    (item,) = load(tmp_path, text).items
    return item


def only_message(tmp_path: Path, text: str) -> Message:
    item = only_item(tmp_path, text)
    assert isinstance(item, Message)
    return item


# ----------------------------------------------------------------------------- config


def test_config_fields(tmp_path: Path) -> None:  # checklist 35
    prompt = load(tmp_path, '<config model="gpt-4o" temperature="0.2" max_tokens="1024" '
                  'reasoning_effort="low" id="s1"/>')
    assert prompt.config == Config("gpt-4o", 1024, 0.2, "low", "s1", False)


def test_show_tool_call_is_a_presence_flag(tmp_path: Path) -> None:  # checklist 36
    assert load(tmp_path, '<config show_tool_call="false"/>').config.show_tool_call
    assert load(tmp_path, "<config show_tool_call/>").config.show_tool_call
    assert not load(tmp_path, "<user>x</user>").config.show_tool_call


def test_first_config_wins_including_imported(tmp_path: Path) -> None:  # checklist 37
    assert load(tmp_path, '<config model="a"/><config model="b"/>').config.model == "a"
    prompt = load(tmp_path, '<import src="c.chatmd"/><config model="b"/>',
                  files={"c.chatmd": '<config model="imported" max_tokens="7"/>'})
    assert (prompt.config.model, prompt.config.max_tokens) == ("imported", 7)


def test_absent_config_is_the_default(tmp_path: Path) -> None:
    config = load(tmp_path, "<user>x</user>").config
    assert config == Config() and config.provenance is None


def test_invalid_number_in_a_later_config_is_reported_at_the_attribute(tmp_path: Path) -> None:
    result = check(tmp_path, '<config model="a"/><config max_tokens="lots"/>')  # checklist 38
    (diagnostic,) = result.diagnostics
    # the spec positions attribute errors at the tag (1:20); we point at the attribute
    assert (diagnostic.code, diagnostic.line, diagnostic.column) == (
        "chatmd.invalid_attribute_value", 1, 28)
    assert "max_tokens" in diagnostic.message and diagnostic.path == ("config", "max_tokens")


@pytest.mark.parametrize(("text", "expected"), [
    ('max_tokens="1_024"', 1024), ('max_tokens="-5"', -5), ('max_tokens="+0"', 0)])
def test_config_integers(tmp_path: Path, text: str, expected: int) -> None:
    assert load(tmp_path, f"<config {text}/>").config.max_tokens == expected


@pytest.mark.parametrize(("text", "expected"), [
    ('temperature="1"', 1.0), ('temperature=".5"', 0.5), ('temperature="1e-1"', 0.1),
    ('temperature="2."', 2.0)])
def test_config_floats(tmp_path: Path, text: str, expected: float) -> None:
    assert load(tmp_path, f"<config {text}/>").config.temperature == expected


def test_unknown_config_attributes_are_ignored(tmp_path: Path) -> None:  # checklist 39, 40, 31
    prompt = load(tmp_path, '<config show model=gpt-4o reasoning_effort="extreme"/><user>x</user>')
    assert (prompt.config.model, prompt.config.reasoning_effort) == ("gpt-4o", "extreme")


# ----------------------------------------------------------------------------- messages


def test_shorthand_messages_and_roles(tmp_path: Path) -> None:  # checklist 1, 41, 42, 43
    prompt = load(tmp_path, '<user>Hello</user><system>s</system><developer>d</developer>'
                  '<msg role="USER">x</msg><msg role="critic">y</msg><assistant>hi</assistant>')
    assert [(m.kind, m.role, m.content) for m in prompt.messages] == [
        ("user", "user", "Hello"), ("system", "system", "s"), ("developer", "developer", "d"),
        ("msg", "USER", "x"), ("msg", "critic", "y"), ("assistant", "assistant", "hi")]


def test_message_attributes_are_recorded(tmp_path: Path) -> None:
    message = only_message(tmp_path, '<assistant id="m1" status="completed" phase="final" '
                           'name="n" type="t" id="m2" role="user">hi</assistant>')
    assert (message.id, message.status, message.phase, message.name, message.type) == (
        "m2", "completed", "final", "n", "t")
    assert (message.role, message.role_attribute) == ("assistant", "user")


def test_flag_attributes_read_as_empty_strings(tmp_path: Path) -> None:
    message = only_message(tmp_path, "<msg role id>x</msg>")
    assert (message.role, message.id) == ("", "")


def test_history_id_and_source_context(tmp_path: Path) -> None:
    message = only_message(tmp_path, '<user ochat-history-id="7:session:12" '
                           'ochat-source-context="first.md" ochat-source-context="second.md">'
                           "x</user>")
    assert (message.history_id, message.source_file) == ("7:session:12", "first.md")
    reasoning = only_item(tmp_path, '<reasoning id="r" ochat-history-id="3:né:0">x</reasoning>')
    assert isinstance(reasoning, Reasoning) and reasoning.history_id == "3:né:0"


@pytest.mark.parametrize(("text", "expected"), [
    ("<user/>", None),
    ("<user>Hello <b>world</b></user>", "Hello <b>world</b>"),  # checklist 7
    ("<user>a<!-- note -->b</user>", "ab"),  # checklist 14
    ('<user>RAW|<doc src="x"/>|RAW</user>', '<doc src="x"/>'),  # checklist 16
    ("<user>&lt;b&gt;</user>", "&lt;b&gt;"),  # checklist 24
    ("<user>look <summary>s</summary></user>", "look "),  # checklist 49
    ('<user><read id="a" path="b"/></user>', '<read id="a" path="b"/>'),  # checklist 109
    ("<user>RAW||RAW</user>", ""),  # checklist 34
    ("<user><summary>s</summary></user>", None),
])
def test_string_and_empty_content(tmp_path: Path, text: str, expected: str | None) -> None:
    assert only_message(tmp_path, text).content == expected


def test_content_items_in_order(tmp_path: Path) -> None:  # checklist 26, 27, 28, 32
    message = only_message(tmp_path, '<user>\n  <img src="u"/>\n<doc src="a&amp;b.txt" local '
                           'strip markdown/><img src="x.png" alt="&copy; &#39;" local/>'
                           '<agent src="first" src="second" local>hi <doc src="n"/></agent>'
                           '<user>nested dropped</user></user>')
    assert message.content == (
        TextItem("\n  "), ImageItem("u"), TextItem("\n"),
        DocItem("a&b.txt", local=True, strip=True, markdown=True), ImageItem("x.png", local=True),
        AgentItem("first", local=True, items=(TextItem("hi "), DocItem("n"))))
    assert isinstance(message.content, tuple)
    image = message.content[1]
    assert isinstance(image, ImageItem) and image.location is not None
    assert (image.location.file, image.location.line, image.location.column) == (
        "root.chatmd", 2, 3)


def test_one_image_alone_is_a_list(tmp_path: Path) -> None:
    assert only_message(tmp_path, '<user><img src="u"/></user>').content == (ImageItem("u"),)


def test_tool_call_inline_and_externalised(tmp_path: Path) -> None:  # checklist 50, 52, 56
    call = only_message(tmp_path, '<tool_call function_name="f" tool_call_id="c1" id="i1">'
                        'RAW|{"a":1}|RAW</tool_call>')
    assert (call.kind, call.role, call.id) == ("tool_call", "assistant", "i1")
    assert call.tool_call == ToolCallRef("c1", "f", '{"a":1}')
    custom = only_message(tmp_path, '<tool_call type="custom_tool_call" function_name="apply_patch"'
                          ' tool_call_id="c">RAW|P|RAW</tool_call>')
    assert (custom.type, custom.tool_call) == ("custom_tool_call", ToolCallRef("c", "apply_patch", "P"))
    external = only_message(tmp_path, '<tool_call function_name="f" tool_call_id="c">'
                            '<doc src="./.chatmd/0.tool-call.c.json" local/></tool_call>')
    assert external.content == (DocItem("./.chatmd/0.tool-call.c.json", local=True),)
    assert external.tool_call == ToolCallRef("c", "f", "")


def test_seed_indented_externalised_layout(tmp_path: Path) -> None:
    response = only_message(tmp_path, '<tool_response tool_call_id="call_123">\n'
                            '  <doc src="./.chatmd/0.tool-call-result.call_123.json" local/>\n'
                            "</tool_response>")
    assert response.content == (TextItem("\n  "), DocItem(
        "./.chatmd/0.tool-call-result.call_123.json", local=True), TextItem("\n"))


def test_tool_responses_and_legacy_tool_messages(tmp_path: Path) -> None:  # checklist 53-55, 58
    prompt = load(tmp_path, '<tool_response tool_call_id="c1" id="7">RAW|ok|RAW</tool_response>'
                  "<tool_response>ok</tool_response>"
                  '<msg role="tool" tool_call_id="c" type="custom_tool_call_output">OK</msg>'
                  '<msg role="tool" tool_call function_name="f" tool_call_id="c">{}</msg>')
    first, second, legacy_output, legacy_call = prompt.messages
    assert (first.role, first.tool_call_id, first.id, first.content) == ("tool", "c1", "7", "ok")
    assert second.tool_call_id is None
    assert (legacy_output.role, legacy_output.type, legacy_output.tool_call) == (
        "tool", "custom_tool_call_output", None)
    assert legacy_call.tool_call == ToolCallRef("c", "f", "{}")


def test_reasoning_summaries(tmp_path: Path) -> None:  # checklist 59, 61
    reasoning = only_item(tmp_path, '<reasoning id="r1"><summary>  s  </summary>'
                          '<summary type="x" type="y">\n t <b>b</b>\n</summary></reasoning>')
    assert reasoning == Reasoning("r1", None, (SummaryPart("s"), SummaryPart("t <b>b</b>", "x")))
    plain = only_item(tmp_path, '<reasoning id="r" status="completed">\n plain \n</reasoning>')
    assert plain == Reasoning("r", "completed", (SummaryPart("plain"),))


def test_top_level_helpers_are_ignored(tmp_path: Path) -> None:  # checklist 62
    prompt = load(tmp_path, '<doc src="missing.txt" local/><img src="x"/><summary>s</summary>'
                  '<agent src="a">x</agent>')
    assert prompt.items == () and prompt.tools == ()


# ----------------------------------------------------------------------------- tools


def test_compact_command_tool(tmp_path: Path) -> None:  # checklist 96
    (tool,) = load(tmp_path, '<tool name="rg" command=" rg " description=" search " local/>').tools
    assert tool == CustomTool("rg", "rg", "search")


def test_agent_tool(tmp_path: Path) -> None:  # checklist 100
    (tool,) = load(tmp_path, '<tool name="triage" agent=" p.chatmd " local/>').tools
    assert tool == AgentTool("triage", "p.chatmd", local=True)


@pytest.mark.parametrize(("attributes", "names"), [  # checklist 99
    ('includes="a, b"', ("a", "b")),
    ('includes="a, b" name="c"', ("c",)),
    ('include="x" includes="y"', ("x",)),
    ('include="" includes="y"', ("y",)),
    ('includes="a,,b"', ("a", "", "b")),
    ("", None),
])
def test_mcp_tool_selection(tmp_path: Path, attributes: str, names: tuple[str, ...] | None) -> None:
    (tool,) = load(tmp_path, f'<tool mcp_server=" stdio:srv " {attributes}/>').tools
    assert isinstance(tool, McpTool) and (tool.mcp_server, tool.names) == ("stdio:srv", names)


def test_mcp_tool_flags_and_env(tmp_path: Path) -> None:
    (tool,) = load(tmp_path, '<tool mcp_server="https://h" strict client_id_env="ID" '
                   'client_secret_env="SECRET" description="d"/>').tools
    assert tool == McpTool("https://h", None, "d", True, "ID", "SECRET")


def test_builtin_tools_keep_their_declared_names(tmp_path: Path) -> None:  # checklist 105, 106
    prompt = load(tmp_path, '<tool name="read_dir"/><tool name=" frobnicate "/>')
    assert prompt.tools == (BuiltinTool("read_dir"), BuiltinTool("frobnicate"))


def test_read_file_default_root(tmp_path: Path) -> None:  # checklist 101
    (tool,) = load(tmp_path, '<tool name="read_file"/>').tools
    assert tool == ReadFileTool("read_file", (
        ReadRoot("cwd", PathExpr("tool_dir", ""), "ochat launch directory"),))
    assert str(tool.roots[0].path) == "${tool_dir}"


def test_read_file_roots(tmp_path: Path) -> None:  # checklist 102, conformance read_file [1]
    (tool,) = load(tmp_path, '<tool name="get_contents" description=" Read approved files ">\n'
                   '  <read id=" source " path="lib" description="OCaml source"/>\n'
                   '  <read id="docs" path="${workspace}/docs"/>\n'
                   '  <read id="computer" path="/" description="Whole computer"/>\n'
                   "</tool>").tools
    assert isinstance(tool, ReadFileTool)
    assert (tool.name, tool.description) == ("get_contents", "Read approved files")
    assert [(r.id, str(r.path), r.description) for r in tool.roots] == [
        ("source", "${tool_dir}/lib", "OCaml source"), ("docs", "${workspace}/docs", None),
        ("computer", "/", "Whole computer")]
    location = tool.roots[1].location
    assert location is not None and (location.line, location.column) == (3, 3)


# ----------------------------------------------------------------------------- scripts


def test_inline_moderator(tmp_path: Path) -> None:  # checklist 83
    (script,) = load(tmp_path, '<script language="chatml" kind="moderator">let x = 1</script>').scripts
    assert (script.id, script.kind, script.language) == ("main", "moderator", "chatml")
    assert script.source == InlineSource("let x = 1")
    assert script.source_hash == hashlib.sha256(b"let x = 1").hexdigest()
    assert script.limits == ScriptLimits()


def test_inline_source_position_maps_back_into_the_prompt(tmp_path: Path) -> None:
    text = ('<user>x</user>\n<script language="chatml" kind="moderator">\nRAW|\nlet x = 1\n'
            "let y = oops\n|RAW\n</script>")
    (script,) = load(tmp_path, text).scripts
    source = script.source
    assert isinstance(source, InlineSource)
    assert (source.file, source.line, source.column) == ("root.chatmd", 3, 5)
    assert source.text == "\nlet x = 1\nlet y = oops\n\n"
    mapped = script_source_file(script)
    offset = source.text.index("oops")
    assert mapped.position(offset) == (5, 9)
    assert mapped.line_text(5) == "let y = oops"
    plain = load(tmp_path, '<script language="chatml" kind="moderator">let x = 1</script>').scripts[0]
    assert script_source_file(plain).position(4) == (1, 48)


def test_src_script_resolves_against_the_declaring_file(tmp_path: Path) -> None:  # checklist 89
    prompt = load(tmp_path, '<import src="defs/x.chatmd"/>', files={
        "defs/x.chatmd": '<script language="chatml" kind="moderator" src="m.chatml"/>',
        "defs/m.chatml": "let x = 1\n", "m.chatml": "wrong file"})
    (script,) = prompt.scripts
    assert script.source == SrcSource("m.chatml", "let x = 1\n")
    assert isinstance(script.source, SrcSource)
    assert script.source.path == str(tmp_path / "defs" / "m.chatml")
    assert script.source.display_name == "defs/m.chatml"
    assert script.source_hash == hashlib.sha256(b"let x = 1\n").hexdigest()
    assert script_source_file(script).name == "defs/m.chatml"


def test_script_limits(tmp_path: Path) -> None:
    (script,) = load(tmp_path, '<script language="chatml" kind="shell_audit_filter" id="f" '
                     'wall_time="2.5m" fuel="10" max_tasks="4" max_value="1MiB" max_output="2KiB" '
                     'max_array_items="8" max_depth="3">x</script>').scripts
    assert script.limits == ScriptLimits(150.0, 10, 4, 1 << 20, 2048, 8, 3)


def test_nested_scripts_are_validated_but_not_registered(tmp_path: Path) -> None:  # checklist 94
    prompt = load(tmp_path, '<user>a<script language="chatml" kind="moderator">x</script></user>')
    assert prompt.scripts == () and prompt.messages[0].content == "a"
    assert codes(check(tmp_path, '<user><script language="chatml" kind="moderator" '
                       'src="missing.chatml"/></user>')) == ["chatmd.script_source_unavailable"]


def test_duplicate_scripts_report_each_id_once(tmp_path: Path) -> None:  # checklist 90, 91
    script = '<script language="chatml" kind="shell_matcher" id="a">x</script>'
    result = check(tmp_path, script * 3)
    assert codes(result) == ["chatmd.duplicate_script"]
    assert result.diagnostics[0].path == ("script", "a")


def test_moderator_runtime_last_one_wins(tmp_path: Path) -> None:  # checklist 95
    prompt = load(tmp_path, '<moderator_runtime shell_runtime="p"/>'
                  '<moderator_runtime shell_runtime="q"/>')
    assert prompt.moderator_runtime is not None
    assert (prompt.moderator_runtime.shell_runtime, prompt.moderator_runtime.qualified) == ("q", "q")


def test_every_error_of_a_prompt_is_reported(tmp_path: Path) -> None:
    result = check(tmp_path, '<config max_tokens="x"/>\n<msg>y</msg>\n<tool name=" "/>\n'
                   '<script language="chatml" kind="moderator"/>\n<reasoning/>')
    assert codes(result) == ["chatmd.invalid_attribute_value", "chatmd.missing_attribute",
                             "chatmd.tool_empty_name", "chatmd.script_empty_source",
                             "chatmd.missing_attribute"]
    assert [d.line for d in result.diagnostics] == [1, 2, 3, 4, 5]
    assert result.prompt is None
