"""ChatMD elements nested as deep as the parser allows (issue 16): every phase answers.

:data:`chatmd.parser.MAX_NESTING` (1,000) levels of each nestable element are
checked and compiled (IR, request, canonical ChatMD) without an internal
error; one level more is the one diagnostic ``chatmd.nesting_too_deep``; far
deeper input (100,000 levels) gets that diagnostic with work linear in its
size, counted in function calls (no clock). Shell matcher combinators keep
their own documented limit (``shell.matcher_too_deep``).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from chatmd.ir import AgentItem, TextItem
from chatmd.parser import MAX_NESTING
from chatmd.request_content import ContentResolver
from chatmd.request_context import CallbackAgentRunner, ConversionContext
from chatmd.shell.declare.lower_policy import MAX_MATCHER_NESTING
from tests.robustness.support import chatmdc, write_files

HEAD = '<config model="m"/>\n'


def _nest(open_tag: str, inner: str, levels: int) -> str:
    tag = open_tag.split()[0]
    return f"<{open_tag}>" * levels + inner + f"</{tag}>" * levels


#: name -> a prompt whose elements nest exactly MAX_NESTING deep, and that is clean.
CLEAN: dict[str, str] = {
    "user": HEAD + _nest("user", "x", MAX_NESTING),
    "system": HEAD + _nest("system", "x", MAX_NESTING),
    "developer": HEAD + _nest("developer", "x", MAX_NESTING),
    "assistant": HEAD + _nest("assistant", "x", MAX_NESTING),
    "tool_response": HEAD + _nest('tool_response tool_call_id="c"', "x", MAX_NESTING),
    "tool_call": HEAD + _nest('tool_call function_name="f" tool_call_id="c"', "x", MAX_NESTING),
    "msg": HEAD + _nest('msg role="user"', "x", MAX_NESTING),
    "reasoning": HEAD + _nest('reasoning id="r"', "x", MAX_NESTING),
    "agent": HEAD + "<user>" + _nest('agent src="a.chatmd" local', "q", MAX_NESTING - 1)
    + "</user>",
    "summary": HEAD + '<reasoning id="r">' + _nest("summary", "s", MAX_NESTING - 1)
    + "</reasoning>",
    "doc": HEAD + "<user>" + _nest("doc", "x", MAX_NESTING - 1) + "</user>",
    "img": HEAD + "<user>" + _nest("img", "x", MAX_NESTING - 1) + "</user>",
    "config": HEAD + "<user>" + _nest('config model="m"', "x", MAX_NESTING - 1) + "</user>",
    "mixed": HEAD + "<assistant>" + "<user>a<agent>b<msg role=\"user\">c" * (
        (MAX_NESTING - 1) // 3) + "</msg></agent></user>" * ((MAX_NESTING - 1) // 3)
    + "</assistant>",
}
FILES = {"a.chatmd": "<user>hi</user>\n"}


@pytest.mark.parametrize("name", sorted(CLEAN))
def test_max_nesting_checks_and_compiles(name: str, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    write_files(tmp_path, {"p.chatmd": CLEAN[name], **FILES})
    prompt = str(tmp_path / "p.chatmd")
    outcome = chatmdc(["check", "--format", "json", prompt], capsys)
    assert outcome.status == 0, outcome.codes()[:5]
    for emit in ("ir", "chatmd", "request"):
        outcome = chatmdc(["compile", "--emit", emit, prompt], capsys)
        assert "internal_error" not in outcome.err
        if emit == "request" and name in ("agent", "doc", "img", "mixed"):
            continue  # (no agent runner; <doc>/<img> without a file: positioned errors)
        assert outcome.status == 0, outcome.err[-500:]
        assert outcome.out


def test_max_nesting_round_trips_through_the_canonical_writer(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_files(tmp_path, {"p.chatmd": CLEAN["mixed"], **FILES})
    written = chatmdc(["compile", "--emit", "chatmd", str(tmp_path / "p.chatmd")], capsys)
    write_files(tmp_path, {"again.chatmd": written.out})
    again = chatmdc(["compile", "--emit", "chatmd", str(tmp_path / "again.chatmd")], capsys)
    assert again.status == 0 and again.out == written.out
    ir = chatmdc(["compile", "--emit", "ir", str(tmp_path / "p.chatmd")], capsys)
    from chatmd.ir_json import ir_from_json, ir_to_json_text

    assert ir_to_json_text(ir_from_json(ir.out)) + "\n" == ir.out


def test_the_indented_json_writer_is_json_dumps() -> None:
    import json

    from chatmd.ir_json import dumps_indented

    values: list[Any] = [{}, [], {"a": [1, 2.5, None, True, "é\n\"x\""], "b": {"c": {}}},
                         [[[]], {"k": []}], "s", 3, {2: "x", True: "y", None: "z", 1.5: "w"}]
    for value in values:
        assert dumps_indented(value) == json.dumps(value, indent=2, ensure_ascii=False)
    deep: Any = "x"
    for _ in range(200):
        deep = {"items": [deep]}
    assert dumps_indented(deep) == json.dumps(deep, indent=2, ensure_ascii=False)
    for _ in range(5 * MAX_NESTING):  # deeper than json.dumps can go
        deep = {"items": [deep]}
    text = dumps_indented(deep)
    assert text.count('"items"') == 5 * MAX_NESTING + 200
    assert text.endswith("\n    }\n  ]\n}")


@pytest.mark.parametrize("name", ["user", "msg", "reasoning", "agent", "doc", "mixed"])
def test_one_level_more_is_one_diagnostic(name: str, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    text = CLEAN[name]
    deeper = text.replace("<config model=\"m\"/>\n", "<config model=\"m\"/>\n<user>", 1) \
        + "</user>"
    write_files(tmp_path, {"p.chatmd": deeper, **FILES})
    outcome = chatmdc(["check", "--format", "json", str(tmp_path / "p.chatmd")], capsys)
    assert outcome.status == 1
    assert outcome.codes() == ["chatmd.nesting_too_deep"]


def _calls(function: Any, *args: Any) -> int:
    """How many Python functions ``function(*args)`` calls (a measure of work, not of time)."""
    count = 0

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal count
        if event == "call":
            count += 1

    sys.setprofile(profile)
    try:
        function(*args)
    finally:
        sys.setprofile(None)
    return count


def test_far_deeper_nesting_is_one_diagnostic_with_linear_work() -> None:
    from runtime.prompt_checks import check_prompt_text

    def check(levels: int) -> None:
        result = check_prompt_text(_nest("user", "x", levels), name="deep.chatmd")
        assert [d.code for d in result.diagnostics] == ["chatmd.nesting_too_deep"]

    check(100_000)
    small, large = _calls(check, 25_000), _calls(check, 100_000)
    assert large <= 4.4 * small  # 4x the input, at most 4x the work (and a little)


def test_deep_agents_run_bottom_up_without_recursion(tmp_path: Path) -> None:
    """A request's ``<agent>`` items nested MAX_NESTING deep: each agent's answer is the
    input of the one around it, found with an explicit stack."""
    (tmp_path / "a.chatmd").write_text("<system>x</system>", encoding="utf-8")
    calls: list[int] = []

    def answer(text: str, parts: Sequence[Mapping[str, Any]], folder: str,
               session: str | None) -> str:
        inner = "".join(part["text"] for part in parts)
        calls.append(len(inner))
        return inner + "+"

    item: Any = TextItem("q")
    for _ in range(MAX_NESTING):
        item = AgentItem("a.chatmd", True, (item,))
    ctx = ConversionContext(prompt_dir=tmp_path, cwd=tmp_path,
                            agent_runner=CallbackAgentRunner(answer))
    resolver = ContentResolver(ctx, "p.chatmd")
    parts = resolver.input_parts((item,), None)
    assert parts == [{"type": "input_text", "text": "q" + "+" * MAX_NESTING}]
    assert calls == list(range(1, MAX_NESTING + 1)) and not resolver.diagnostics


def _matchers(levels: int) -> str:
    return (HEAD + '<shell_access id="s"><policy><rule id="r" action="allow">'
            + _nest("all", '<program value="ls"/>', levels) + "</rule></policy></shell_access>\n")


def test_shell_matchers_nest_to_their_own_limit(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    write_files(tmp_path, {"ok.chatmd": _matchers(MAX_MATCHER_NESTING),
                           "deep.chatmd": _matchers(MAX_MATCHER_NESTING + 1),
                           "deeper.chatmd": _matchers(MAX_NESTING - 4)})
    ok = chatmdc(["check", "--format", "json", str(tmp_path / "ok.chatmd")], capsys)
    assert ok.status == 0, ok.codes()
    for name in ("deep.chatmd", "deeper.chatmd"):
        outcome = chatmdc(["check", "--format", "json", str(tmp_path / name)], capsys)
        assert outcome.codes() == ["shell.matcher_too_deep"]
        for command in (["compile", "--emit", "ir"], ["shell", "explain"]):
            outcome = chatmdc([*command, str(tmp_path / name)], capsys)
            assert outcome.status == 1 and "internal_error" not in outcome.err


def test_syntax_trees_nested_to_the_limit_are_written_and_read_back() -> None:
    """The canonical writer's syntax-node form and the IR's JSON of syntax nodes (shell
    declarations are kept as elements) walk nesting with explicit stacks."""
    from chatmd.canonical_writer import render_node
    from chatmd.ir_json import _node_from_json, _node_to_json
    from chatmd.parser import parse_text

    text = _nest('user id="u"', "a<img src=\"i\"/>b", MAX_NESTING - 1)  # (<img> is one more)
    (node,) = parse_text(text).nodes
    written = render_node(node)
    assert written.count("<user id=\"u\">") == MAX_NESTING - 1 and written.endswith("</user>")
    (again,) = parse_text(written).nodes
    assert render_node(again) == written
    assert render_node(_node_from_json(_node_to_json(node))) == written
