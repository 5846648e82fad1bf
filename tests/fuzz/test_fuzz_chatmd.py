"""Fuzzing the ChatMD frontend in-process: any input gives a result or a diagnostic.

Structure-aware documents (nesting, repetition, size), byte-level damage of
the valid test prompts, prompt folders full of file references (some
escaping the folder, some malformed) checked with and without ``--confine``,
and deep HTML documents go through every entry point
(:mod:`tests.fuzz.harness`).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz import strategies
from tests.fuzz.budget import fuzz
from tests.fuzz.harness import (
    exercise_chatmd_files,
    exercise_chatmd_text,
    exercise_html,
    write_tree,
)

OUTSIDE_TEXT = "FUZZ-OUTSIDE-SECRET"


@fuzz
@given(strategies.chatmd_documents())
def test_structured_documents(text: str) -> None:
    exercise_chatmd_text(text)


@fuzz
@given(strategies.damaged_samples(strategies.CHATMD_SAMPLES))
def test_damaged_test_prompts(data: bytes) -> None:
    with tempfile.TemporaryDirectory(prefix="fuzz-md-") as folder:
        root = Path(folder) / "prompt"
        write_tree(root, {"p.chatmd": data})
        exercise_chatmd_files(root, "p.chatmd", confine=False)


@fuzz
@given(strategies.prompt_trees(), st.booleans())
def test_file_references(files: dict[str, bytes], confine: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="fuzz-md-") as folder:
        (Path(folder) / "outside.txt").write_text(OUTSIDE_TEXT, encoding="utf-8")
        root = Path(folder) / "prompt"
        write_tree(root, files)
        os.symlink(Path(folder) / "outside.txt", root / "link.txt")
        exercise_chatmd_files(root, "p.chatmd", confine=confine)


@fuzz
@given(st.one_of(
    st.text(max_size=300),
    st.builds(lambda tags, depth, text: "".join(f"<{t}>" for t in tags) * depth + text,
              st.lists(st.sampled_from(["b", "i", "a", "p", "li", "ul", "blockquote", "table",
                                        "tr", "td", "pre", "code", "div", "h1", "script"]),
                       min_size=1, max_size=3),
              st.integers(1, 3000), st.text(max_size=20)),
))
def test_html_documents(html: str) -> None:
    exercise_html(html)
