"""Atomic writes: a failed write leaves the old file intact and no stray temp files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chatcommon import atomic
from chatcommon.atomic import atomic_write_bytes, atomic_write_text


def test_write_creates_parents_and_replaces(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "file.txt"
    atomic_write_text(target, "one\r\n")
    assert target.read_bytes() == b"one\r\n"
    atomic_write_text(target, "two")
    assert target.read_text() == "two"
    assert os.listdir(target.parent) == ["file.txt"]


def test_crash_before_rename_keeps_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "file.txt"
    target.write_text("old")

    def explode(src: str, dst: str) -> None:
        raise OSError("disk on fire")

    monkeypatch.setattr(atomic.os, "replace", explode)
    with pytest.raises(OSError):
        atomic_write_bytes(target, b"new")
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["file.txt"]


def test_existing_mode_is_kept(tmp_path: Path) -> None:
    target = tmp_path / "script.sh"
    target.write_text("x")
    target.chmod(0o750)
    atomic_write_text(target, "y")
    assert target.stat().st_mode & 0o777 == 0o750
