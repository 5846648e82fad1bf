"""Runs every data-driven ChatMD case under tests/chatmd/testdata through ``check_prompt``.

Each case goes through :func:`chatmd.frontend.check_prompt` — parse, imports,
declarations and every prompt check (:func:`runtime.prompt_checks.prompt_checks`:
shell compilation, ChatML script checking, ...), as ``chatmdc check`` runs them — so markers state every diagnostic of the whole
pipeline (see harness.py). The folders in :data:`FRONTEND_FOLDERS` describe the
ChatMD frontend itself; their scripts and runtimes are placeholders, so they
run without the registered checks. Helper files (``_*.chatmd``, ``_*.md``,
``*.chatml``) sit beside the cases that import or load them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from chatcommon.diagnostics import Diagnostic
from chatmd.frontend import check_prompt
from runtime.prompt_checks import prompt_checks
from tests.chatmd.harness import TESTDATA, cases, check_case

#: Case folders about the frontend's own phases (parse, imports, declarations).
FRONTEND_FOLDERS = frozenset({"syntax", "imports", "declarations"})


def diagnostics_for(path: Path) -> list[Diagnostic]:
    folder = path.relative_to(TESTDATA).parts[0]
    checks = () if folder in FRONTEND_FOLDERS else prompt_checks()
    return list(check_prompt(path, checks=checks).diagnostics)


@pytest.mark.parametrize("path", cases(), ids=lambda p: str(p.relative_to(TESTDATA)))
def test_case(path: Path) -> None:
    check_case(path, diagnostics_for)
