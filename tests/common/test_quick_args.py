"""The argparse-free fast path reads a command line exactly as argparse does, or declines."""

from __future__ import annotations

import contextlib
import io
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatcommon.quick_args import CommandSpec, quick_parse
from chatml import cli as chatml_cli
from runtime.commands import chatmdc as chatmd_cli


def _argparse(parser_factory: Any, words: list[str]) -> dict[str, Any] | None:
    """argparse's values for ``words``, or None when it rejects them (or prints help)."""
    parser = parser_factory()
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        try:
            return vars(parser.parse_args(words))
        except SystemExit:
            return None


CASES = [
    ("chatmdc", chatmd_cli.build_parser, chatmd_cli.CHECK_SPEC),
    ("chatml", lambda: chatml_cli.build_parser("check"), chatml_cli.CHECK_SPEC),
]

WORDS = ["check", "compile", "a.chatmd", "b.chatml", "x=y", "", "--format", "--format=json",
         "--format=text", "--format=", "json", "text", "xml", "--confine", "--confine=1",
         "--surface", "--surface=moderator", "core", "moderator", "shell_matcher", "--form",
         "--conf", "-h", "--help", "--", "-", "-1", "--surface=nope", "--emit", "ir"]


@pytest.mark.parametrize(("tool", "factory", "spec"), CASES, ids=[c[0] for c in CASES])
@settings(max_examples=300, deadline=None)
@given(tail=st.lists(st.sampled_from(WORDS), max_size=6))
def test_fast_path_agrees_with_argparse(tool: str, factory: Any, spec: CommandSpec,
                                        tail: list[str]) -> None:
    words = ["check", *tail]
    quick = quick_parse(words, spec)
    if quick is not None:  # when the fast path answers, argparse gives the very same values
        assert vars(quick) == _argparse(factory, words)


@pytest.mark.parametrize(("words", "expected"), [
    (["check", "a.chatmd"], {"paths": ["a.chatmd"], "format": "text", "confine": False}),
    (["check", "--format", "json", "a", "b"], {"paths": ["a", "b"], "format": "json",
                                               "confine": False}),
    (["check", "a", "b", "--confine", "--format=json"], {"paths": ["a", "b"], "format": "json",
                                                        "confine": True}),
])
def test_plain_chatmdc_lines_take_the_fast_path(words: list[str], expected: dict[str, Any]) -> None:
    quick = quick_parse(words, chatmd_cli.CHECK_SPEC)
    assert quick is not None
    values = vars(quick)
    assert {key: values[key] for key in expected} == expected
    assert values == _argparse(chatmd_cli.build_parser, words)


@pytest.mark.parametrize("words", [
    ["check"],  # argparse: PATH is required
    ["check", "a", "--form", "json"],  # abbreviation: argparse decides
    ["check", "a", "--format", "xml"],  # not a choice
    ["check", "a", "--confine", "b"],  # a second run of paths: argparse rejects it
    ["check", "--", "-a"],
    ["check", "-h"],
    ["compile", "a"],
    [],
])
def test_anything_else_goes_to_argparse(words: list[str]) -> None:
    assert quick_parse(words, chatmd_cli.CHECK_SPEC) is None


def test_chatml_check_takes_one_file() -> None:
    quick = quick_parse(["check", "--surface", "moderator", "s.chatml"], chatml_cli.CHECK_SPEC)
    assert quick is not None and quick.file == "s.chatml" and quick.surface == "moderator"
    assert vars(quick) == _argparse(lambda: chatml_cli.build_parser("check"),
                                    ["check", "--surface", "moderator", "s.chatml"])
    assert quick_parse(["check", "a", "b"], chatml_cli.CHECK_SPEC) is None
