"""The shell cases of ../shared/conformance/chatmd/cases.jsonl (read at test time).

They run through the real frontend at prompt level (parse, imports,
declarations: ``check_prompt_text`` without the later checks), as the
reference's prompt parser does; the facts are read from the typed shell
declarations, and cases that declare a complete prompt are also compiled.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

from chatmd.canonical_writer import write_prompt
from chatmd.frontend import CheckResult, check_prompt_text, load_prompt_text
from chatmd.shell import ALL_FEATURES, compile_runtimes
from chatmd.shell.declare.matchers import ProgramRegex
from chatmd.shell.integration import ShellInputs, shell_inputs
from tests.chatmd.prompt_files import write_files
from tests.support import load_cases

SHELL_CASE_IDS = {
    "comments, whitespace, and quoted entities survive shell parsing",
    "Prompt lowers runtime and shell tools from the ChatMD tree",
    "unknown and duplicate nested declarations fail closed [1]",
    "unknown and duplicate nested declarations fail closed [2]",
    "unknown and duplicate nested declarations fail closed [3]",
    "unknown and duplicate nested declarations fail closed [4]",
    "multiline shell tags use XML whitespace after element names",
    "shell declarations serialize without semantic loss",
    "imports retain namespace and source provenance",
}
CASES = {case["id"]: case for case in load_cases("chatmd/cases.jsonl")
         if case["id"] in SHELL_CASE_IDS}


def run(case: dict[str, Any], root: Path) -> CheckResult:
    write_files(root, case["files"] or {})
    return check_prompt_text(case["document"], name=case["source_name"] or "<prompt>",
                             prompt_dir=str(root), checks=())


def inputs_of(case: dict[str, Any], root: Path) -> ShellInputs:
    result = run(case, root)
    assert not result.has_errors, [str(d) for d in result.diagnostics]
    assert result.prompt is not None
    inputs = shell_inputs(result.prompt)
    assert not inputs.failed
    return inputs


def test_every_shell_case_is_present() -> None:
    assert set(CASES) == SHELL_CASE_IDS


ERROR_CASES = sorted(case_id for case_id, case in CASES.items() if case["expect"] == "error")


@pytest.mark.parametrize("case_id", ERROR_CASES)
def test_error_cases_fail_closed_with_the_reference_code_path_and_message(
        case_id: str, tmp_path: Path) -> None:
    case = CASES[case_id]
    result = run(case, tmp_path)
    assert len(result.errors) == 1, [str(d) for d in result.errors]
    diagnostic = result.errors[0]
    where = ".".join(diagnostic.path)
    rendered = (f"error[{diagnostic.code}]" + (f" at {where}" if where else "")
                + f": {diagnostic.message}")
    assert rendered.startswith(case["error_text"]), rendered
    assert case["error_contains"] in diagnostic.message
    assert diagnostic.line >= 1 and diagnostic.column >= 1


def test_quoted_entities_survive(tmp_path: Path) -> None:
    case = CASES["comments, whitespace, and quoted entities survive shell parsing"]
    inputs = inputs_of(case, tmp_path)
    (runtime,) = inputs.runtimes
    assert runtime.policy is not None
    (rule,) = runtime.policy.rules
    assert isinstance(rule.matcher, ProgramRegex)
    expected = case["facts"]["shell_runtimes"][0]["rules"][0]["matcher"]["program_regex"]
    assert rule.matcher.value == expected == '^echo "safe" & sound$'


def test_runtime_and_tools_are_lowered(tmp_path: Path) -> None:
    case = CASES["Prompt lowers runtime and shell tools from the ChatMD tree"]
    inputs = inputs_of(case, tmp_path)
    facts = case["facts"]
    (runtime,) = inputs.runtimes
    (expected_runtime,) = facts["shell_runtimes"]
    assert runtime.id == expected_runtime["id"]
    assert runtime.policy is not None and runtime.backends is not None
    assert len(runtime.policy.rules) == expected_runtime["rule_count"]
    assert len(runtime.backends.backends) == expected_runtime["backend_count"]
    search, shell = inputs.tools
    expected_search, expected_shell = facts["shell_tools"]
    assert (search.name, search.mode_name) == (expected_search["name"], expected_search["mode"])
    command = search.mode.command  # type: ignore[union-attr]
    expected_command = expected_search["command"]
    assert (command.TAG, command.program, command.executable_ref) == (
        expected_command["kind"], expected_command["program"],
        expected_command["executable_ref"])
    assert [{"literal": a.value} for a in command.arguments] == expected_command["arguments"]
    arguments = search.mode.arguments  # type: ignore[union-attr]
    expected_arguments = expected_search["model_arguments"]
    assert (arguments.mode, arguments.min_count, arguments.max_count,
            arguments.max_item_bytes) == (expected_arguments["mode"],
                                          expected_arguments["min_count"],
                                          expected_arguments["max_count"],
                                          expected_arguments["max_item_bytes"])
    assert (shell.name, shell.mode_name) == (expected_shell["name"], expected_shell["mode"])


def test_multiline_tags(tmp_path: Path) -> None:
    case = CASES["multiline shell tags use XML whitespace after element names"]
    inputs = inputs_of(case, tmp_path)
    assert [r.id for r in inputs.runtimes] == [r["id"] for r in case["facts"]["shell_runtimes"]]
    (tool,) = inputs.tools
    (expected,) = case["facts"]["shell_tools"]
    assert (tool.name, tool.mode_name, tool.description) == (
        expected["name"], expected["mode"], expected["description"])
    arguments = tool.mode.arguments  # type: ignore[union-attr]
    assert (arguments.min_count, arguments.max_count) == (
        expected["model_arguments"]["min_count"], expected["model_arguments"]["max_count"])
    compiled = compile_runtimes(inputs.runtimes, inputs.tools, platform="linux",
                                features=ALL_FEATURES)
    assert compiled.ok and compiled.manifest is not None


def test_declarations_survive_writing_and_reparsing(tmp_path: Path) -> None:
    case = CASES["shell declarations serialize without semantic loss"]
    inputs = inputs_of(case, tmp_path)
    facts = case["facts"]
    assert len(inputs.runtimes) == facts["shell_runtime_count"]
    assert len(inputs.tools) == facts["shell_tool_count"]
    result = run(case, tmp_path)
    assert result.prompt is not None
    text = write_prompt(result.prompt)
    again = load_prompt_text(text, name="again.chatmd", prompt_dir=str(tmp_path), checks=())
    reparsed = shell_inputs(again)
    assert facts["serialize_then_reparse_is_equal"] is True
    assert reparsed.runtimes == inputs.runtimes
    assert reparsed.tools == inputs.tools


def test_imported_runtimes_keep_their_namespace_and_source(tmp_path: Path) -> None:
    case = CASES["imports retain namespace and source provenance"]
    inputs = inputs_of(case, tmp_path)
    (runtime,) = inputs.runtimes
    (expected,) = case["facts"]["shell_runtimes"]
    assert runtime.id == expected["id"] == "common:readonly"
    (tool,) = inputs.tools
    assert tool.runtime == case["facts"]["shell_tools"][0]["runtime"]
    compiled = compile_runtimes(inputs.runtimes, inputs.tools, platform="linux",
                                features=ALL_FEATURES)
    assert compiled.ok and compiled.manifest is not None
    (record,) = compiled.manifest.payload["runtimes"]
    source = record["source"]
    imported = case["files"]["definitions/runtime.chatmd"]
    assert source["file"] == expected["source"]["file"]
    assert source["namespace"] == expected["source"]["namespace"]
    assert source["sha256"] == expected["source"]["source_sha256"] == hashlib.sha256(
        imported.encode("utf-8")).hexdigest()
    assert os.path.samefile(source["source_dir"], tmp_path / "definitions")
    assert record["cwd"] == {"base": "source_dir", "path": "",
                             "source_dir": source["source_dir"]}
    (tool_record,) = compiled.manifest.payload["tools"]
    assert tool_record["runtime"] == "common:readonly"
    assert tool_record["source"]["file"] == case["facts"]["shell_tools"][0]["source"]["file"]
