"""Replay every kept crasher of tests/fuzzing/crashers/ through every entry point of its language.

The crashers of tests/fuzzing/pending/ (shapes fixed on the issue-16 branch) are
not run here; they move into crashers/ when that branch is merged.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fuzzing.crashers import CRASHERS, PENDING, SUFFIXES, cases, replay

pytestmark = pytest.mark.fuzz


@pytest.mark.parametrize("path", cases(CRASHERS), ids=lambda p: p.name)
def test_crasher_is_answered(path: Path) -> None:
    replay(path)


def test_pending_crashers_are_well_formed() -> None:
    pending = cases(PENDING)
    assert pending, "tests/fuzzing/pending holds the issue-16 table's shapes until merge"
    assert all(p.suffix in SUFFIXES for p in pending)
