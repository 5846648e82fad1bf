"""Atomic file writes: temporary file in the same folder, flush, fsync, rename.

A crash at any point leaves either the old file or the new one, never a torn
mix. Every file the toolchain writes (transcripts, payload files, sessions,
snapshots, bytecode caches) goes through :func:`atomic_write_bytes`.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes, *, mode: int | None = None,
                       create_folders: bool = True) -> None:
    """Replace ``path`` with ``data`` atomically, creating parent folders as needed.

    With ``create_folders=False`` (a user-named output file) a missing parent
    folder is :class:`MissingOutputFolder` instead: a typo in ``-o`` should not
    quietly create a tree of folders.
    """
    target = Path(path)
    if not create_folders and not target.parent.is_dir():
        raise MissingOutputFolder(str(target.parent))
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(temp_name, mode)
        elif target.exists():
            os.chmod(temp_name, target.stat().st_mode & 0o7777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(temp_name, 0o666 & ~umask)
        os.replace(temp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp_name)
        raise
    _fsync_directory(target.parent)


def atomic_write_text(path: str | os.PathLike[str], text: str, *, encoding: str = "utf-8",
                      create_folders: bool = True) -> None:
    """Replace ``path`` with ``text`` atomically (no newline translation)."""
    atomic_write_bytes(path, text.encode(encoding), create_folders=create_folders)


class MissingOutputFolder(FileNotFoundError):
    """The folder of an output file does not exist (and was not to be created)."""

    def __init__(self, folder: str) -> None:
        super().__init__(2, f"the output folder {folder} does not exist", folder)


def _fsync_directory(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
