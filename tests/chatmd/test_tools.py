"""Tool definitions and tool construction (spec §6, checklist 96-107, DECISIONS 12).

Prompts are built as IR here so that each test controls exactly the
declarations it checks; ``test_tools_prompts.py`` runs the same construction
on parsed ChatMD.
"""

from __future__ import annotations

import os
from pathlib import Path

import attrs
import pytest

from chatcommon.diagnostics import DiagnosticError, Severity
from chatcommon.sources import SourceFile
from chatmd.ast import Element
from chatmd.ir import (
    AgentTool,
    BuiltinTool,
    CustomTool,
    Location,
    McpTool,
    PathExpr,
    Prompt,
    ReadFileTool,
    ReadRoot,
    ShellTool,
)
from chatmd.provenance import Provenance
from chatmd.tools import (
    McpRemoteTool,
    PathVariables,
    StaticMcpCatalogue,
    ToolHost,
    build_tools,
    check_tools,
)
from chatmd.tools.apply_patch import V4A_PATCH_GRAMMAR
from chatmd.tools.mcp import server_uri

S = {"type": "string"}
I = {"type": "integer"}  # noqa: E741
B = {"type": "boolean"}


def at(line: int, column: int = 1, folder: str = "/p") -> Provenance:
    return Provenance("agent.chatmd", line, column, folder, folder)


def host_for(tmp_path: Path, **kwargs: object) -> ToolHost:
    here = str(tmp_path)
    paths = PathVariables(tool_dir=here, workspace=here, prompt_dir=here,
                          session_dir=here, cache_dir=here, home=here)
    return ToolHost(paths=paths, **kwargs)  # type: ignore[arg-type]


def build(tmp_path: Path, *tools: object, **host: object):  # type: ignore[no-untyped-def]
    return build_tools(Prompt(tools=tuple(tools), name="agent.chatmd"),  # type: ignore[arg-type]
                       host_for(tmp_path, **host))


def obj(properties: dict, required: list[str] | None = None) -> dict:  # type: ignore[type-arg]
    schema: dict = {"type": "object", "properties": properties}  # type: ignore[type-arg]
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


# The table of spec §6, written out: declared name -> (model name, strict, parameters).
BUILTIN_TABLE = {
    "read_dir": ("read_directory", True, obj({"path": S}, ["path"])),
    "append_to_file": ("append_to_file", True,
                       obj({"path": S, "content": S}, ["path", "content"])),
    "find_and_replace": ("find_and_replace", True,
                         obj({"path": S, "find": S, "replace": S, "all": B},
                             ["path", "find", "replace", "all"])),
    "webpage_to_markdown": ("webpage_to_markdown", True, obj({"url": S}, ["url"])),
    "index_ocaml_code": ("index_ocaml_code", True,
                         obj({"folder_to_index": S, "vector_db_folder": S},
                             ["folder_to_index", "vector_db_folder"])),
    "query_vector_db": ("query_vector_db", True,
                        obj({"vector_db_folder": S, "query": S, "num_results": I,
                             "index": {"type": ["string", "null"]}},
                            ["vector_db_folder", "query", "num_results", "index"])),
    "index_markdown_docs": ("index_markdown_docs", True,
                            obj({"root": S, "index_name": S, "description": S,
                                 "vector_db_root": S}, ["root", "index_name", "description"])),
    "markdown_search": ("markdown_search", False,
                        obj({"query": S, "k": I, "index_name": S, "vector_db_root": S},
                            ["query"])),
    "odoc_search": ("odoc_search", False,
                    obj({"query": S, "k": I, "index": S, "package": S}, ["query", "package"])),
    "import_image": ("import_image", True, obj({"path": S}, ["path"])),
    "meta_refine": ("meta_refine", True, obj({"prompt": S, "task": S}, ["prompt", "task"])),
    "fork": ("fork", True, obj({"command": S, "arguments": {"type": "array", "items": S}},
                               ["command", "arguments"])),
}


@pytest.mark.parametrize("declared", sorted(BUILTIN_TABLE))
def test_function_builtins_have_the_exact_schema_of_the_table(tmp_path: Path, declared: str) -> None:
    model_name, strict, parameters = BUILTIN_TABLE[declared]
    result = build(tmp_path, BuiltinTool(declared, provenance=at(1)))
    assert result.diagnostics == ()
    [definition] = result.definitions
    assert definition["type"] == "function"
    assert definition["name"] == model_name
    assert definition["strict"] is strict
    assert definition["parameters"] == parameters
    assert isinstance(definition["description"], str) and definition["description"]
    assert set(definition) == {"type", "name", "description", "parameters", "strict"}


def test_apply_patch_is_a_custom_tool_with_the_lark_patch_grammar(tmp_path: Path) -> None:
    [definition] = build(tmp_path, BuiltinTool("apply_patch")).definitions
    assert definition["type"] == "custom"
    assert definition["name"] == "apply_patch"
    assert definition["format"] == {"type": "grammar", "syntax": "lark",
                                    "definition": V4A_PATCH_GRAMMAR}
    assert "parameters" not in definition
    for rule in ("start:", "begin_patch:", "end_patch:", "add_hunk:", "delete_hunk:",
                 "update_hunk:", "change_move:", "eof_line:"):
        assert rule in V4A_PATCH_GRAMMAR


def test_read_dir_and_get_contents_use_their_model_visible_names(tmp_path: Path) -> None:
    result = build(tmp_path, BuiltinTool("read_dir"),
                   ReadFileTool("get_contents", (ReadRoot("cwd", PathExpr("tool_dir", "")),)))
    assert [d["name"] for d in result.definitions] == ["read_directory", "read_file"]


def test_default_read_file_has_one_cwd_root_at_the_tool_dir(tmp_path: Path) -> None:
    tool = ReadFileTool("read_file", (ReadRoot("cwd", PathExpr("tool_dir", ""),
                                               "ochat launch directory"),))
    [definition] = build(tmp_path, tool).definitions
    assert definition["strict"] is False
    assert definition["parameters"] == obj(
        {"file": S, "offset": {"type": "integer", "minimum": 0},
         "line_count": {"type": "integer", "minimum": 0},
         "root": {"type": "string", "enum": ["cwd"]}}, ["file"])
    assert f"- cwd: {os.path.realpath(tmp_path)} — ochat launch directory" in \
        definition["description"].splitlines()


def test_read_file_roots_give_the_enum_and_the_generated_description(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    workspace = tmp_path / "ws"
    (workspace / "docs").mkdir(parents=True)
    roots = (ReadRoot("src", PathExpr("tool_dir", "lib")),
             ReadRoot("docs", PathExpr("workspace", "docs"), "Project docs"))
    tool = ReadFileTool("read_file", roots, "Read project files.")
    here = str(tmp_path)
    paths = PathVariables(tool_dir=here, workspace=str(workspace), prompt_dir=here,
                          session_dir=here, cache_dir=here, home=here)
    result = build_tools(Prompt(tools=(tool,)), ToolHost(paths=paths))
    [definition] = result.definitions
    assert definition["parameters"]["properties"]["root"]["enum"] == ["src", "docs"]
    lines = definition["description"].splitlines()
    assert f"- src: {os.path.realpath(tmp_path / 'lib')}" in lines
    assert f"- docs: {os.path.realpath(workspace / 'docs')} — Project docs" in lines
    assert lines[-1] == "Read project files."
    assert lines[-2] == ""  # the custom description follows a blank line


def test_source_dir_roots_resolve_against_the_declaring_file(tmp_path: Path) -> None:
    (tmp_path / "defs" / "data").mkdir(parents=True)
    tool = ReadFileTool("read_file", (ReadRoot("d", PathExpr("source_dir", "data")),),
                        provenance=at(1, folder=str(tmp_path / "defs")))
    [definition] = build(tmp_path, tool).definitions
    assert f"- d: {os.path.realpath(tmp_path / 'defs' / 'data')}" in \
        definition["description"].splitlines()


def test_root_paths_are_canonical_after_symlinks_and_dotdot(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    tool = ReadFileTool("read_file", (ReadRoot("r", PathExpr("tool_dir", "link/../link")),))
    [definition] = build(tmp_path, tool).definitions
    assert f"- r: {os.path.realpath(tmp_path / 'real')}" in definition["description"].splitlines()


def test_a_missing_root_directory_is_reported_at_its_read_element(tmp_path: Path) -> None:
    roots = (ReadRoot("ok", PathExpr("tool_dir", "")),
             ReadRoot("gone", PathExpr("tool_dir", "missing"),
                      location=Location("agent.chatmd", 3, 5)))
    result = build(tmp_path, ReadFileTool("read_file", roots, provenance=at(2)))
    assert result.definitions == ()
    [problem] = result.diagnostics
    assert (problem.code, problem.line, problem.column) == ("read_file.root_unavailable", 3, 5)
    assert "gone" in problem.message and "missing" in problem.message


def test_compact_command_tool_is_a_fixed_shell_tool_with_optional_arguments(tmp_path: Path) -> None:
    [definition] = build(tmp_path, CustomTool("rg", "rg --json", "search")).definitions
    assert definition["name"] == "rg"
    assert definition["strict"] is False
    assert definition["parameters"] == obj(
        {"arguments": {"type": "array", "items": S}, "rationale": S})
    description = definition["description"]
    assert "fixed shell command" in description and "`rg --json`" in description
    assert "command policy" in description
    assert description.endswith("\n\nAdditional tool guidance: search")


def test_compact_command_without_description_has_no_guidance(tmp_path: Path) -> None:
    [definition] = build(tmp_path, CustomTool("ls", "ls")).definitions
    assert "Additional tool guidance" not in definition["description"]


def test_agent_tool_takes_one_input_string_and_is_strict(tmp_path: Path) -> None:
    result = build(tmp_path, AgentTool("triage", "p.chatmd", True, "Triage a bug"),
                   AgentTool("plain", "q.chatmd"))
    triage, plain = result.definitions
    assert triage == {"type": "function", "name": "triage", "description": "Triage a bug",
                      "parameters": obj({"input": S}, ["input"]), "strict": True}
    assert "q.chatmd" in plain["description"]


def test_unknown_builtin_is_reported_at_its_tool_with_a_suggestion(tmp_path: Path) -> None:
    tool = BuiltinTool("read_dri", provenance=at(4, 3))
    [problem] = check_tools(Prompt(tools=(tool,)))
    assert (problem.code, problem.line, problem.column) == ("agent.unknown_builtin", 4, 3)
    assert "read_dri" in problem.message
    assert problem.hint is not None and "read_dir" in problem.hint
    result = build(tmp_path, tool)
    assert [d.code for d in result.diagnostics] == ["agent.unknown_builtin"]
    assert result.definitions == ()


def test_duplicate_names_are_reported_at_the_later_declaration(tmp_path: Path) -> None:
    tools = (CustomTool("rg", "rg", provenance=at(1)), AgentTool("rg", "a", provenance=at(2)),
             BuiltinTool("read_dir", provenance=at(3)),
             CustomTool("read_directory", "ls", provenance=at(4)))
    for problems in (check_tools(Prompt(tools=tools)),
                     list(build(tmp_path, *tools).diagnostics)):
        assert [(d.code, d.line) for d in problems] == [("agent.duplicate_tool_name", 2),
                                                        ("agent.duplicate_tool_name", 4)]
        assert '"rg"' in problems[0].message
        assert (problems[0].related[0].line, problems[0].related[0].column) == (1, 1)


def test_definitions_keep_declaration_order(tmp_path: Path) -> None:
    tools = (CustomTool("zeta", "z"), BuiltinTool("apply_patch"), AgentTool("alpha", "a"),
             BuiltinTool("fork"), CustomTool("mid", "m"))
    names = [d["name"] for d in build(tmp_path, *tools).definitions]
    assert names == ["zeta", "apply_patch", "alpha", "fork", "mid"]


def test_mcp_without_a_catalogue_is_a_warning_and_left_out(tmp_path: Path) -> None:
    result = build(tmp_path, CustomTool("a", "a"),
                   McpTool("stdio:srv", ("x",), provenance=at(7)))
    assert [d["name"] for d in result.definitions] == ["a"]
    [warning] = result.diagnostics
    assert (warning.code, warning.severity, warning.line) == (
        "chatmd.mcp_unresolved", Severity.WARNING, 7)
    assert result.ok


CATALOGUE = StaticMcpCatalogue({"stdio:srv": (
    McpRemoteTool("weather", "Weather", {"type": "object", "properties": {"city": S}}),
    McpRemoteTool("stock", None, {}),
    McpRemoteTool("news", "News", {"type": "object", "properties": {}}),
)})


def test_mcp_selects_named_tools_in_selection_order(tmp_path: Path) -> None:
    result = build(tmp_path, McpTool("stdio:srv", ("news", "weather", "nope"), strict=True,
                                     provenance=at(2)), mcp_catalogue=CATALOGUE)
    news, weather = result.definitions
    assert news == {"type": "function", "name": "news", "description": "News",
                    "parameters": {"type": "object", "properties": {}}, "strict": True}
    assert weather["parameters"] == {"type": "object", "properties": {"city": S}}
    [warning] = result.diagnostics
    assert warning.code == "chatmd.mcp_tool_not_found" and '"nope"' in warning.message
    assert warning.severity is Severity.WARNING


def test_mcp_without_selection_takes_the_whole_catalogue(tmp_path: Path) -> None:
    result = build(tmp_path, McpTool("stdio:srv"), mcp_catalogue=CATALOGUE)
    assert [d["name"] for d in result.definitions] == ["weather", "stock", "news"]
    stock = result.definitions[1]
    assert "description" not in stock  # omitted, never null
    assert stock["strict"] is False
    assert result.diagnostics == ()


def test_mcp_names_take_part_in_duplicate_detection(tmp_path: Path) -> None:
    result = build(tmp_path, CustomTool("news", "n", provenance=at(1)),
                   McpTool("stdio:srv", ("news",), provenance=at(2)), mcp_catalogue=CATALOGUE)
    assert [(d.code, d.line) for d in result.diagnostics] == [("agent.duplicate_tool_name", 2)]


def test_mcp_credentials_are_added_to_http_uris_only() -> None:
    env = {"ID": "abc", "SECRET": "s&t", "EMPTY": ""}
    assert server_uri("https://h/mcp?x=1", "ID", "SECRET", env) == \
        "https://h/mcp?x=1&client_id=abc&client_secret=s%26t"
    assert server_uri("https://h/mcp", "EMPTY", "UNSET", env) == "https://h/mcp"
    assert server_uri("stdio:srv --flag", "ID", None, env) == "stdio:srv --flag"


def test_mcp_catalogue_is_asked_with_the_credentialed_uri(tmp_path: Path) -> None:
    catalogue = StaticMcpCatalogue({"https://h/m?client_id=abc": (McpRemoteTool("t"),)})
    result = build(tmp_path, McpTool("https://h/m", client_id_env="ID"),
                   mcp_catalogue=catalogue, environ={"ID": "abc"})
    assert [d["name"] for d in result.definitions] == ["t"]


def _shell_tool(name: str, line: int) -> ShellTool:
    element = Element("tool", (), (), SourceFile("x", "").span(0))
    return ShellTool(name, "dev", element, provenance=at(line))


def test_long_form_shell_tools_wait_for_a_shell_definer(tmp_path: Path) -> None:
    result = build(tmp_path, _shell_tool("sh", 3))
    [warning] = result.diagnostics
    assert (warning.code, warning.severity, warning.line) == (
        "chatmd.shell_tool_unavailable", Severity.WARNING, 3)
    assert result.definitions == ()


class _Definer:
    def definition(self, tool: ShellTool) -> dict:  # type: ignore[type-arg]
        if tool.name == "bad":
            from chatcommon.diagnostics import Diagnostic
            raise DiagnosticError(Diagnostic("shell.x", "bad tool", "f", 9, 1))
        return {"type": "function", "name": tool.name, "parameters": obj({}), "strict": False}


def test_a_shell_definer_supplies_long_form_definitions(tmp_path: Path) -> None:
    result = build(tmp_path, _shell_tool("sh", 1), _shell_tool("bad", 2),
                   AgentTool("sh", "x", provenance=at(3)), shell_definer=_Definer())
    assert [d["name"] for d in result.definitions] == ["sh", "sh"]
    assert [(d.code, d.line) for d in result.diagnostics] == [
        ("shell.x", 9), ("agent.duplicate_tool_name", 3)]
    assert [(d.code, d.line) for d in check_tools(Prompt(tools=(
        _shell_tool("sh", 1), AgentTool("sh", "x", provenance=at(3)))))] == [
        ("agent.duplicate_tool_name", 3)]


def test_compiled_shell_definitions_are_used_as_they_are(tmp_path: Path) -> None:
    definition = {"type": "function", "name": "sh", "parameters": obj({}), "strict": False}
    tool = attrs.evolve(_shell_tool("sh", 1), compiled={"definition": definition})
    result = build(tmp_path, tool)
    assert result.definitions == (definition,) and result.diagnostics == ()


def test_duplicate_command_and_shell_tools_are_left_to_the_shell_compiler() -> None:
    tools = (CustomTool("x", "a", provenance=at(1)), _shell_tool("x", 2),
             CustomTool("x", "b", provenance=at(3)))
    assert check_tools(Prompt(tools=tools)) == []


def test_every_known_builtin_name_builds_its_model_visible_function(tmp_path: Path) -> None:
    from chatmd.tools.names import MODEL_NAMES

    for declared, model_name in MODEL_NAMES.items():
        result = build(tmp_path, BuiltinTool(declared))
        assert result.diagnostics == ()
        assert [d["name"] for d in result.definitions] == [model_name]
