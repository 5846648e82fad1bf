"""Fuzz the ChatMD entry points: generated documents, prompt folders, damaged test data."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzzing.budget import fuzz_settings
from tests.fuzzing.entry_points import drive_chatmd, drive_chatmd_files
from tests.fuzzing.strategies_chatmd import documents, prompt_folders
from tests.fuzzing.strategies_damage import chatmd_seeds, damaged

pytestmark = pytest.mark.fuzz


@fuzz_settings(240)
@given(documents)
def test_generated_document(document: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        drive_chatmd_files(Path(folder), {"root.chatmd": document}, "root.chatmd")


@fuzz_settings(160)
@given(prompt_folders())
def test_generated_prompt_folder(files: dict[str, str | bytes]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        drive_chatmd_files(Path(folder), files, "root.chatmd")


@fuzz_settings(300)
@given(st.deferred(lambda: damaged(chatmd_seeds())))
def test_damaged_test_data(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "root.chatmd"
        path.write_bytes(data)
        drive_chatmd(path)
