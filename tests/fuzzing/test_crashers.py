"""Replay every kept crasher of tests/fuzzing/crashers/ through every entry point of its language.

Among them the shapes of issue 16's table (NUL in file references, deep HTML, deep
constant patterns, many diagnostics on one line, quadratic nesting, large literals).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fuzzing.crashers import CRASHERS, cases, replay

pytestmark = pytest.mark.fuzz


@pytest.mark.parametrize("path", cases(CRASHERS), ids=lambda p: p.name)
def test_crasher_is_answered(path: Path) -> None:
    replay(path)
