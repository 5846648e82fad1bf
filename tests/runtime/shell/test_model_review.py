"""Model reviewers through the host's model recipes, with the bounds of spec §8.7.6.

The model itself cannot run here: the recipe is a local function returning
the model's answer text, which is what a host recipe hands back.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from runtime.capabilities import ModelError, ModelOk, ModelRecipe, ModelResult
from runtime.shell.chatml_bridge import HookError
from runtime.shell.model_review import decode_answer
from tests.runtime.shell.support import call, error, open_prompt, runtime, structured_tool

REVIEWERS = ('<reviewers><reviewer id="judge" kind="model" agent="judge" model="small"/>'
             '</reviewers><approvals scopes="once,exact_session"/>')


def recipe(answer: Any, seen: list[Any]) -> ModelRecipe:
    def call_model(payload: Any) -> ModelResult:
        seen.append(payload)
        return answer if isinstance(answer, ModelError) else ModelOk(answer)
    return ModelRecipe("judge", call_model)


def session(tmp_path: Path, answer: Any, seen: list[Any]):  # type: ignore[no-untyped-def]
    return open_prompt(tmp_path, runtime(REVIEWERS, policy='<policy default="ask"/>')
                       + structured_tool(rationale="optional"),
                       model_recipes={"judge": recipe(answer, seen)})


def test_model_reviewer_allows_for_the_session(tmp_path: Path) -> None:
    seen: list[Any] = []
    shell = session(tmp_path, '{"decision": "allow_session"}', seen)
    for _ in range(2):
        assert call(shell, "run", program="echo", arguments=["hi"], rationale="greet").text == (
            "hi\n")
    assert len(seen) == 1 and seen[0]["model"] == "small" and seen[0]["tools"] == []
    assert '"argv": ["echo", "hi"]' in seen[0]["prompt"]


def test_model_reviewer_denial_and_bad_answers(tmp_path: Path) -> None:
    denied = session(tmp_path, json.dumps({"decision": "deny", "reason": "risky"}), [])
    assert error(call(denied, "run", program="echo", arguments=[])) == ("denied", "risky")
    for answer in ('{"decision": "allow_once", "extra": 1}', "not json",
                   '{"decision": "allow", "decision": "deny"}', ModelError("offline"),
                   '{"decision": "durable_allow"}'):
        shell = session(tmp_path, answer, [])
        assert error(call(shell, "run", program="echo", arguments=[]))[0] == "denied"


@pytest.mark.parametrize("data", [
    {"decision": "allow_prefix_session", "prefix": []},
    {"decision": "deny", "reason": " "},
    {"decision": "rewrite", "program": "ls"},
    {"decision": "allow", "expires_at": float("inf")},
    ["allow"],
])
def test_strict_answer_schema(data: Any) -> None:
    with pytest.raises(HookError):
        decode_answer(data)


def test_rewrite_answer() -> None:
    answer = decode_answer({"decision": "rewrite", "program": "ls", "arguments": ["-l"]})
    assert answer.decision == "rewrite" and answer.argv == ("ls", "-l")
