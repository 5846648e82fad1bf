"""Every input the fuzzing suite found failing, minimised, kept as a regression case.

Each file of ``tests/fuzz/crashers/`` goes through the same entry points as in
the fuzz test that found it (the file's first line says which and what went
wrong): ``*.chatml`` through :func:`exercise_chatml`, ``*.chatmd`` through the
ChatMD text entry points, ``*.bc`` through the bytecode reader, ``*.html``
through the HTML converters.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fuzz.harness import (
    exercise_bytecode,
    exercise_chatmd_text,
    exercise_chatml,
    exercise_html,
)

CRASHERS = sorted((Path(__file__).parent / "crashers").iterdir())


def test_there_are_crashers() -> None:
    assert CRASHERS


@pytest.mark.parametrize("path", CRASHERS, ids=lambda path: path.name)
def test_crasher(path: Path) -> None:
    data = path.read_bytes()
    if path.suffix == ".chatml":
        exercise_chatml(data.decode("utf-8"))
    elif path.suffix == ".chatmd":
        exercise_chatmd_text(data.decode("utf-8"))
    elif path.suffix == ".html":
        exercise_html(data.decode("utf-8"))
    else:
        assert path.suffix == ".bc"
        exercise_bytecode(data)
