"""JSON for the IR (chatmd.ir_json): exact round trips and the documented shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatmd.frontend import load_prompt, load_prompt_text
from chatmd.ir import Prompt
from chatmd.ir_json import ir_from_json, ir_to_json, ir_to_json_text
from tests.chatmd.prompt_files import EVERYTHING, load
from tests.support import CONFORMANCE


@pytest.fixture
def everything(tmp_path: Path) -> Prompt:
    return load(tmp_path, EVERYTHING, files={"m.chatml": "let y = 2\n"})


def test_round_trip_is_exact(everything: Prompt) -> None:
    data = ir_to_json(everything)
    back = ir_from_json(data)
    assert back == everything
    assert ir_to_json(back) == data
    assert ir_from_json(json.loads(ir_to_json_text(everything))) == everything


def test_round_trip_of_the_real_prompts() -> None:
    for path in sorted((CONFORMANCE / "chatmd" / "prompts").rglob("*.md")):
        prompt = load_prompt(path)
        data = ir_to_json(prompt)
        assert ir_to_json(ir_from_json(json.dumps(data))) == data, path


def test_json_shape(everything: Prompt) -> None:
    data = ir_to_json(everything)
    assert list(data)[:7] == ["ir_version", "config", "tools", "scripts", "shell_runtimes",
                              "moderator_runtime", "items"]
    assert [tool["node"] for tool in data["tools"]] == [
        "read_file", "builtin", "custom", "agent", "mcp", "mcp", "shell"]
    assert [(s["id"], s["kind"], s["source"]["node"]) for s in data["scripts"]] == [
        ("main", "moderator", "inline"), ("m", "shell_matcher", "src")]
    assert all(len(s["source_hash"]) == 64 for s in data["scripts"])
    user = data["items"][1]
    assert (user["node"], user["kind"]) == ("message", "user")
    assert [item["node"] for item in user["content"]] == ["text", "image", "doc", "text", "agent"]
    assert data["items"][0]["content"] == "s"
    assert data["items"][-1]["content"] is None
    assert data["items"][-2]["node"] == "reasoning"
    shell = data["tools"][-1]["element"]
    assert shell["tag"] == "tool" and shell["children"] == []
    assert data["shell_runtimes"][0]["element"]["children"][0]["tag"] == "limits"
    assert data["config"]["provenance"]["line"] == 1


def test_element_round_trip_keeps_tree_but_not_positions(everything: Prompt) -> None:
    back = ir_from_json(ir_to_json(everything))
    runtime = back.shell_runtimes[0]
    assert runtime.element == everything.shell_runtimes[0].element
    assert runtime.element.span.file == "<ir>"


def test_rejects_unknown_versions_and_shapes(everything: Prompt) -> None:
    data = ir_to_json(everything)
    with pytest.raises(ValueError):
        ir_from_json({**data, "ir_version": 99})
    with pytest.raises(Exception):  # noqa: B017 - cattrs' validation error group
        ir_from_json({**data, "surprise": 1})


def test_default_prompt_round_trips() -> None:
    prompt = load_prompt_text("")
    assert ir_from_json(ir_to_json(prompt)) == prompt == Prompt()
