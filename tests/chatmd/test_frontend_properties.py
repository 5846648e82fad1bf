"""Properties: the whole frontend (parse, imports, declarations) never fails with anything but
diagnostics — on arbitrary markup-heavy text and on mutated valid prompts."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatcommon.diagnostics import DiagnosticError
from chatmd.frontend import check_prompt_text, load_prompt_text
from tests.chatmd.prompt_files import EVERYTHING, write_files

HELPERS = {
    "a.chatmd": '<tool name="rg" command="rg"/><import src="b.chatmd" namespace="n"/>',
    "b.chatmd": '<script language="chatml" kind="shell_matcher" id="g">x</script>',
    "loop.chatmd": '<import src="loop.chatmd"/>',
    "p.md": "policy <b>text</b>",
    "m.chatml": "let x = 1",
}

FRAGMENTS = [
    "<user>", "</user>", "<system>", "</system>", "<assistant id='a'>", "</assistant>",
    "<msg role=\"tool\" tool_call>", "<msg>", "</msg>", "<tool_call function_name='f' tool_call_id='c'>",
    "</tool_call>", "<tool_response>", "</tool_response>", "<reasoning id='r'>", "<reasoning>",
    "</reasoning>", "<summary>", "</summary>", "<config ", "max_tokens='x'", "temperature=\"1\"",
    "<tool ", "name=\"read_file\"", "name=' '", "command='rg'", "agent='a'", "mcp_server='s'",
    "type=\"shell\"", "runtime='r'", "</tool>", "<read id='a' path='${nope}'/>", "<read ",
    "<script language=\"chatml\" kind=\"moderator\"", " src=\"m.chatml\"", " fuel='0'",
    "</script>", "<shell_access id='x'>", "</shell_access>", "<moderator_runtime ",
    "shell_runtime='p'", "<import src=\"a.chatmd\"/>", "<import src=\"loop.chatmd\"/>",
    "<import src='p.md'/>", "<import ", "namespace='n'", "namespace='1'", " local", "/>", ">",
    "<", "</", "<!--", "-->", "RAW|", "|RAW", "\"", "'", "=", "&amp;", "ochat-history-id='1:a:0'",
    "<doc src='x'/>", "<img src='y' local/>", "<agent src='z'>", "</agent>", "\n", " ", "\r\n",
    "\ufeff", "text", "a<b", "${home}",
]

markup = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=4), max_size=40).map("".join)


@pytest.fixture(scope="module")
def prompt_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("prompts")
    write_files(root, HELPERS)
    return root


def _assert_only_diagnostics(text: str, prompt_dir: Path) -> None:
    result = check_prompt_text(text, name="p.chatmd", prompt_dir=str(prompt_dir), checks=())
    for diagnostic in result.diagnostics:
        assert diagnostic.code and diagnostic.message and diagnostic.file
        assert diagnostic.line >= 1 and diagnostic.column >= 1
    assert (result.prompt is None) == result.has_errors
    try:
        load_prompt_text(text, name="p.chatmd", prompt_dir=str(prompt_dir))
    except DiagnosticError as exc:
        assert exc.diagnostics and any(d.is_error for d in exc.diagnostics)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=markup)
def test_arbitrary_markup_gives_only_diagnostics(text: str, prompt_dir: Path) -> None:
    _assert_only_diagnostics(text, prompt_dir)


@settings(max_examples=100, deadline=None)
@given(text=st.text(max_size=200))
def test_arbitrary_text_gives_only_diagnostics(text: str, prompt_dir: Path) -> None:
    _assert_only_diagnostics(text, prompt_dir)


VALID = EVERYTHING


@st.composite
def mutated(draw: st.DrawFn) -> str:
    text = VALID
    for _ in range(draw(st.integers(1, 4))):
        start = draw(st.integers(0, len(text)))
        end = draw(st.integers(start, min(len(text), start + 30)))
        action = draw(st.sampled_from(["delete", "duplicate", "insert", "replace"]))
        if action == "delete":
            text = text[:start] + text[end:]
        elif action == "duplicate":
            text = text[:end] + text[start:end] + text[end:]
        elif action == "insert":
            text = text[:start] + draw(st.sampled_from(FRAGMENTS)) + text[start:]
        else:
            text = text[:start] + draw(st.text(max_size=3)) + text[end:]
    return text


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=mutated())
def test_mutated_valid_prompts_give_only_diagnostics(text: str, prompt_dir: Path) -> None:
    _assert_only_diagnostics(text, prompt_dir)


def test_the_unmutated_prompt_is_valid_for_the_frontend(prompt_dir: Path) -> None:
    # its scripts are placeholders: later phases' checks are not asked to accept them
    assert load_prompt_text(VALID, name="p.chatmd", prompt_dir=str(prompt_dir), checks=()).items
