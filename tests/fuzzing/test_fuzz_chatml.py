"""Fuzz the ChatML entry points: generated programs, damaged sources and damaged bytecode."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzzing.budget import fuzz_settings
from tests.fuzzing.entry_points import drive_bytecode, drive_chatml
from tests.fuzzing.strategies_chatml import printed_programs, sources, structured
from tests.fuzzing.strategies_damage import bytecode_seeds, chatml_seeds, damaged

pytestmark = pytest.mark.fuzz


@fuzz_settings(300)
@given(sources)
def test_generated_source(text: str) -> None:
    drive_chatml(text)


@fuzz_settings(200)
@given(structured)
def test_nesting_and_repetition(text: str) -> None:
    drive_chatml(text)


@fuzz_settings(120)
@given(printed_programs)
def test_printed_syntax_trees(text: str) -> None:
    drive_chatml(text)


@fuzz_settings(240)
@given(st.deferred(lambda: damaged(chatml_seeds())))
def test_damaged_source(data: bytes) -> None:
    drive_bytecode(data)  # build_file reads it as source (or refuses it as not UTF-8)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return
    drive_chatml(text)


@fuzz_settings(300)
@given(st.deferred(lambda: damaged(bytecode_seeds())))
def test_damaged_bytecode(data: bytes) -> None:
    drive_bytecode(data)
