"""Every real prompt of ../shared/conformance/chatmd/prompts/ goes through ``check_prompt``.

No errors anywhere; the exact warnings are asserted: the stale ``local`` flag
on ``<import>`` (DECISIONS 10a) and, in the recorded session, two stray ``<``
inside a reasoning summary that the reference would reject (DECISIONS 8).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from chatmd.frontend import check_prompt
from chatmd.ir import AgentTool, BuiltinTool, CustomTool, McpTool, ReadFileTool
from tests.support import CONFORMANCE

PROMPTS = CONFORMANCE / "chatmd" / "prompts"
LOCAL_IMPORT = ("warning", "chatmd.import_local_ignored", 11, 30)

EXPECTED = {
    "prompt-examples/call_document.md": [],
    "prompt-examples/discovery.md": [],
    "prompt-examples/document.md": [],
    "prompt-examples/general-agent.md": [LOCAL_IMPORT],
    "prompt-examples/git-tools.md": [],
    "prompt-examples/ocaml-coding-agent.md": [],
    "prompt-examples/research.md": [],
    "real-world-example-session/update-tool-docs/git-tools.md": [],
    "real-world-example-session/update-tool-docs/session-compact.md": [LOCAL_IMPORT],
    "real-world-example-session/update-tool-docs/session.md": [
        ("warning", "chatmd.stray_less_than", 9727, 324),
        ("warning", "chatmd.stray_less_than", 9727, 337),
        LOCAL_IMPORT,
    ],
}


def test_every_real_prompt_is_listed() -> None:
    found = {str(p.relative_to(PROMPTS)) for p in PROMPTS.rglob("*.md")}
    assert found == set(EXPECTED)


@pytest.mark.parametrize("relative", sorted(EXPECTED))
def test_real_prompt(relative: str) -> None:
    result = check_prompt(PROMPTS / relative)
    got = [(d.severity.value, d.code, d.line, d.column) for d in result.diagnostics]
    assert got == EXPECTED[relative]
    assert result.prompt is not None


def test_general_agent_declarations() -> None:
    result = check_prompt(PROMPTS / "prompt-examples" / "general-agent.md")
    prompt = result.prompt
    assert prompt is not None
    assert (prompt.config.model, prompt.config.max_tokens, prompt.config.reasoning_effort,
            prompt.config.show_tool_call) == ("gpt-5.2", 100000, "medium", True)
    kinds = [type(tool).__name__ for tool in prompt.tools]
    # the imported git-tools.md declares 16 compact command tools, in place of the import
    assert kinds.count("CustomTool") == 16
    git_tools = [t for t in prompt.tools if isinstance(t, CustomTool)]
    assert git_tools[0].provenance is not None
    assert git_tools[0].provenance.file == "./git-tools.md"
    mcp = [t for t in prompt.tools if isinstance(t, McpTool)]
    assert [t.names for t in mcp] == [
        ("brave_web_search",), ("search_emails", "draft_email", "send_email", "read_email")]
    assert any(isinstance(t, ReadFileTool) for t in prompt.tools)
    assert any(isinstance(t, BuiltinTool) and t.name == "apply_patch" for t in prompt.tools)


def test_agent_tool_with_stray_local_flag() -> None:
    prompt = check_prompt(PROMPTS / "prompt-examples" / "ocaml-coding-agent.md").prompt
    assert prompt is not None
    agents = [(t.name, t.agent, t.local) for t in prompt.tools if isinstance(t, AgentTool)]
    assert agents == [("research", "./research.md", True), ("discovery", "./discovery.md", True),
                      ("document", "./call_document.md", True)]


def test_recorded_session_conversation() -> None:
    prompt = check_prompt(PROMPTS / "real-world-example-session" / "update-tool-docs"
                          / "session.md").prompt
    assert prompt is not None
    kinds = {item.kind if hasattr(item, "kind") else "reasoning" for item in prompt.items}
    assert {"user", "assistant", "tool_call", "tool_response", "reasoning"} <= kinds
    calls = [m for m in prompt.messages if m.kind == "tool_call"]
    responses = [m for m in prompt.messages if m.kind == "tool_response"]
    assert calls and all(m.tool_call is not None for m in calls)
    assert {m.tool_call.call_id for m in calls} >= {m.tool_call_id for m in responses}  # type: ignore[union-attr]


def test_the_stray_warning_keeps_the_summary_text() -> None:
    path = PROMPTS / "real-world-example-session" / "update-tool-docs" / "session.md"
    prompt = check_prompt(path).prompt
    assert prompt is not None
    line = Path(path).read_text(encoding="utf-8").splitlines()[9726]
    summaries = [part.text for item in prompt.items if not hasattr(item, "kind")
                 for part in item.summary]  # type: ignore[union-attr]
    assert any(line.strip() in text for text in summaries)
