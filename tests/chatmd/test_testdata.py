"""Runs every data-driven ChatMD case under tests/chatmd/testdata (see harness.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatmd.parser import parse
from common.diagnostics import Diagnostic
from common.sources import SourceFile
from tests.chatmd.harness import TESTDATA, cases, check_case


def diagnostics_for(path: Path) -> list[Diagnostic]:
    text = path.read_text(encoding="utf-8")
    return list(parse(SourceFile(path.name, text)).diagnostics)


@pytest.mark.parametrize("path", cases(), ids=lambda p: str(p.relative_to(TESTDATA)))
def test_case(path: Path) -> None:
    check_case(path, diagnostics_for)
