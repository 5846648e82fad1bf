"""The prompt-level cases of ../shared/conformance/chatmd/cases.jsonl owned by the frontend.

Read at test time. The shell-runtime cases belong to the shell validator's
tests (tests/chatmd/shell/); the one case that mixes imports with shell
declarations is checked here for what the frontend decides (qualified ids,
provenance, source context) and there for the validated runtime.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from chatmd.frontend import check_prompt_text
from chatmd.ir import CustomTool, Message, ModeratorRuntime, ReadFileTool, ShellRuntime, ShellTool
from tests.chatmd.prompt_files import write_files
from tests.support import load_cases

PROMPT_CASES = [case for case in load_cases("chatmd/cases.jsonl") if case["level"] == "prompt"]

#: Cases about the shell vocabulary, checked by the shell validator's tests.
SHELL_CASES = {
    "comments, whitespace, and quoted entities survive shell parsing",
    "Prompt lowers runtime and shell tools from the ChatMD tree",
    "unknown and duplicate nested declarations fail closed [1]",
    "unknown and duplicate nested declarations fail closed [2]",
    "unknown and duplicate nested declarations fail closed [3]",
    "unknown and duplicate nested declarations fail closed [4]",
    "multiline shell tags use XML whitespace after element names",
    "shell declarations serialize without semantic loss",
}
MIXED_CASE = "imports retain namespace and source provenance"
FRONTEND_CASES = [case for case in PROMPT_CASES if case["id"] not in SHELL_CASES]

#: The reference's error message fragment for each case → our stable code.
ERROR_CODES = {
    "duplicate root id": "read_file.duplicate_root",
    "root id is empty": "read_file.invalid_root_id",
    "only <read> roots are allowed": "read_file.unexpected_child",
    "unknown attribute": "shell.unknown_attribute",
    "import cycle detected": "chatmd.import_cycle",
    "Duplicate ChatMD import namespace": "chatmd.import_duplicate_namespace",
}


def test_every_prompt_case_is_accounted_for() -> None:
    ids = {case["id"] for case in PROMPT_CASES}
    assert len(PROMPT_CASES) == 19
    assert ids >= SHELL_CASES and MIXED_CASE in ids
    assert len(FRONTEND_CASES) == 11


def _run(case: dict[str, Any], tmp_path: Path):  # type: ignore[no-untyped-def]
    write_files(tmp_path, case["files"] or {})
    return check_prompt_text(case["document"], name=case["source_name"] or "<prompt>",
                             prompt_dir=str(tmp_path), checks=())


@pytest.mark.parametrize("case", FRONTEND_CASES, ids=[c["id"] for c in FRONTEND_CASES])
def test_prompt_case(case: dict[str, Any], tmp_path: Path) -> None:
    result = _run(case, tmp_path)
    if case["expect"] == "error":
        (code,) = [c for fragment, c in ERROR_CODES.items() if fragment in case["error_contains"]]
        assert [d.code for d in result.errors] == [code]
        at = re.search(r"\] at ([\w.]+):", case["error_text"] or "")
        if at:  # the reference's diagnostic path
            assert ".".join(result.errors[0].path) == at.group(1)
        return
    assert not result.has_errors, [str(d) for d in result.diagnostics]
    prompt = result.prompt
    assert prompt is not None
    facts = case["facts"]
    if "custom_tools" in facts:
        assert prompt.items == () and all(isinstance(t, CustomTool) for t in prompt.tools)
        assert [{"name": t.name, "description": t.description, "command": t.command}
                for t in prompt.tools] == facts["custom_tools"]  # type: ignore[union-attr]
    if "read_file_tools" in facts:
        assert prompt.items == () and all(isinstance(t, ReadFileTool) for t in prompt.tools)
        assert [{"description": t.description,
                 "roots": [{"id": r.id, "path": str(r.path), "description": r.description}
                           for r in t.roots]}
                for t in prompt.tools] == facts["read_file_tools"]  # type: ignore[union-attr]
    if "moderator_runtimes" in facts:
        (expected,) = facts["moderator_runtimes"]
        assert isinstance(prompt.moderator_runtime, ModeratorRuntime)
        assert prompt.moderator_runtime.shell_runtime == expected["shell_runtime"]
    if case["id"] == MIXED_CASE:
        _check_import_provenance(prompt, facts, tmp_path)


def _check_import_provenance(prompt: Any, facts: dict[str, Any], tmp_path: Path) -> None:
    (runtime,) = prompt.shell_runtimes
    (expected_runtime,) = facts["shell_runtimes"]
    assert isinstance(runtime, ShellRuntime) and runtime.id == expected_runtime["id"]
    source = expected_runtime["source"]
    provenance = runtime.provenance
    assert (provenance.file, provenance.namespace, provenance.source_sha256) == (
        source["file"], source["namespace"], source["source_sha256"])
    assert Path(provenance.source_dir).samefile(tmp_path / "definitions")
    shell_tools = [t for t in prompt.tools if isinstance(t, ShellTool)]
    assert [(t.runtime, t.provenance.file) for t in shell_tools] == [
        (t["runtime"], t["source"]["file"]) for t in facts["shell_tools"]]
    users = [m for m in prompt.items if isinstance(m, Message) and m.kind == "user"]
    assert [m.source_file for m in users] == [u["source_context"] for u in facts["user_messages"]]
