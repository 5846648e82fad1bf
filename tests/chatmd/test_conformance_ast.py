"""The AST-level cases of ../shared/conformance/chatmd/cases.jsonl, read at test time."""

from __future__ import annotations

from typing import Any

import pytest

from chatcommon.sources import SourceFile
from chatmd.parser import parse
from tests.chatmd.astjson import node_to_json
from tests.support import load_cases

AST_CASES = [case for case in load_cases("chatmd/cases.jsonl") if case["level"] == "ast"]

# The reference's message text for each error case, mapped to our stable code.
ERROR_CODES = {
    "Unterminated quoted attribute value": "chatmd.unterminated_attribute",
    "Unexpected text at top level": "chatmd.top_level_text",
}


def test_corpus_has_the_expected_ast_cases() -> None:
    assert len(AST_CASES) == 26


@pytest.mark.parametrize("case", AST_CASES, ids=[c["id"] for c in AST_CASES])
def test_ast_case(case: dict[str, Any]) -> None:
    result = parse(SourceFile(case["source_name"] or "<prompt>", case["document"]))
    if case["expect"] == "error":
        assert not result.ok
        (code,) = [c for fragment, c in ERROR_CODES.items() if fragment in case["error_contains"]]
        assert [d.code for d in result.diagnostics] == [code]
        return
    assert result.ok, [str(d) for d in result.diagnostics]
    facts = case["facts"]
    drop_blank = "ast_ignoring_blank_text" in facts
    expected = facts.get("ast_ignoring_blank_text") if drop_blank else facts["ast"]
    got = [node_to_json(node, drop_blank_text=drop_blank) for node in result.document.nodes]
    assert got == expected
