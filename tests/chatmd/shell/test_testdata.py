"""Runs the data-driven shell cases under tests/chatmd/testdata/shell (see harness.py).

Each case is checked the way ``chatmdc check`` sees it: declaration
diagnostics first; only when every shell declaration is valid, the compile
diagnostics with this implementation's supported features on Linux.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from chatcommon.diagnostics import Diagnostic
from chatmd.shell import SUPPORTED_FEATURES
from tests.chatmd.harness import check_case
from tests.chatmd.shell.support import TESTDATA, diagnostics_of

CASES = sorted(p for p in TESTDATA.glob("*.chatmd") if not p.name.startswith("_"))


def shell_diagnostics(path: Path) -> list[Diagnostic]:
    text = path.read_text(encoding="utf-8")
    return diagnostics_of(text, path.name, features=SUPPORTED_FEATURES, platform="linux")


def test_the_folder_has_cases() -> None:
    assert len(CASES) >= 10


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.name)
def test_case(path: Path) -> None:
    check_case(path, shell_diagnostics)
