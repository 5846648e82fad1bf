"""The ``apply_patch`` built-in: a V4A patch applied to the workspace, all files or none.

The runner parses the patch (:mod:`~runtime.builtin_tools.patch_parse`), then
*plans* every change in memory — confinement of each path, existence checks,
every hunk matched (:mod:`~runtime.builtin_tools.patch_match`) — so any
mistake fails the patch before a byte is written. The planned files are then
written with :func:`chatcommon.atomic.atomic_write_bytes` (writes before deletes,
so a move never loses its source first); if a write fails midway, the files
already changed are restored from the in-memory originals and the folders the
patch created are removed, so the workspace is left as it was.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat

import attrs

from chatcommon.atomic import atomic_write_bytes
from runtime.builtin_tools.confinement import confine_to_workspace
from runtime.builtin_tools.failures import ToolFailure, guarded
from runtime.builtin_tools.patch_match import apply_hunks
from runtime.builtin_tools.patch_parse import (
    AddFile,
    DeleteFile,
    Operation,
    UpdateFile,
    parse_patch,
)
from runtime.builtin_tools.text_files import MAX_EDIT_BYTES, open_regular, read_text
from runtime.tools import Runner

TOOL = "apply_patch"


@attrs.frozen
class Change:
    """One file's planned change: ``new`` None deletes it, ``old`` None means it was absent."""

    real: str
    shown: str
    new: bytes | None
    old: bytes | None
    mode: int | None = None


def apply_patch_runner(workspace: str) -> Runner:
    return guarded(lambda payload: apply_patch(payload, workspace))


def apply_patch(payload: str, workspace: str) -> str:
    operations = parse_patch(_patch_text(payload))
    changes, summary = _Planner(workspace).plan(operations)
    commit(changes)
    return "Success. Updated the following files:\n" + "\n".join(summary)


def _patch_text(payload: str) -> str:
    """The raw patch; a JSON object ``{"input"|"patch": TEXT}`` (a function-style call) too."""
    stripped = payload.strip()
    if stripped.startswith("{"):
        with contextlib.suppress(ValueError):
            value = json.loads(stripped)
            for key in ("input", "patch"):
                if isinstance(value, dict) and isinstance(value.get(key), str):
                    return str(value[key])
    return payload


class _Planner:
    def __init__(self, workspace: str) -> None:
        self.workspace = workspace
        self.touched: set[str] = set()

    def target(self, path: str) -> str:
        real = confine_to_workspace(path, self.workspace, TOOL)
        if real in self.touched:
            raise ToolFailure(f"{TOOL}.duplicate_path", f"the patch changes {path} twice",
                              hint="put every change to one file in one section")
        self.touched.add(real)
        return real

    def plan(self, operations: list[Operation]) -> tuple[list[Change], list[str]]:
        changes: list[Change] = []
        summary: list[str] = []
        for operation in operations:
            if isinstance(operation, AddFile):
                changes.append(self.add(operation))
                summary.append(f"A {operation.path}")
            elif isinstance(operation, DeleteFile):
                changes.append(self.delete(operation.path))
                summary.append(f"D {operation.path}")
            else:
                changes.extend(self.update(operation))
                moved = f" -> {operation.move_to}" if operation.move_to else ""
                summary.append(f"M {operation.path}{moved}")
        return changes, summary

    def add(self, operation: AddFile) -> Change:
        real = self.new_file(operation.path)
        text = "".join(line + "\n" for line in operation.lines)
        return Change(real, operation.path, text.encode("utf-8"), None)

    def new_file(self, path: str) -> str:
        real = self.target(path)
        if os.path.lexists(real):
            raise ToolFailure(f"{TOOL}.file_exists", f"{path} already exists",
                              hint="change an existing file with `*** Update File:`")
        folder = os.path.dirname(real)
        while not os.path.lexists(folder):
            folder = os.path.dirname(folder)
        if not os.path.isdir(folder):
            raise ToolFailure(f"{TOOL}.not_a_directory", f"{path} cannot be created: "
                              f"{folder} is not a directory")
        return real

    def delete(self, path: str) -> Change:
        real = self.target(path)
        with open_regular(real, path, TOOL) as handle:
            old = handle.read(MAX_EDIT_BYTES + 1)
            mode = stat.S_IMODE(os.fstat(handle.fileno()).st_mode)
        if len(old) > MAX_EDIT_BYTES:
            raise ToolFailure(f"{TOOL}.file_too_large", f"{path} is larger than "
                              f"{MAX_EDIT_BYTES} bytes")
        return Change(real, path, None, old, mode)

    def update(self, operation: UpdateFile) -> list[Change]:
        real = self.target(operation.path)
        text = read_text(real, operation.path, TOOL)
        mode = stat.S_IMODE(os.stat(real).st_mode)
        new = apply_hunks(text, operation.hunks, operation.path).encode("utf-8")
        old = text.encode("utf-8")
        if operation.move_to is None or \
                confine_to_workspace(operation.move_to, self.workspace, TOOL) == real:
            return [Change(real, operation.path, new, old, mode)]
        destination = self.new_file(operation.move_to)
        return [Change(destination, operation.move_to, new, None, mode),
                Change(real, operation.path, None, old, mode)]


def _missing_folders(path: str) -> list[str]:
    """The folders above ``path`` that do not exist yet, deepest first."""
    missing = []
    folder = os.path.dirname(path)
    while not os.path.lexists(folder):
        missing.append(folder)
        folder = os.path.dirname(folder)
    return missing


def commit(changes: list[Change]) -> None:
    """Write and delete as planned; on a failure restore what was done and raise."""
    ordered = [c for c in changes if c.new is not None] + [c for c in changes if c.new is None]
    done: list[tuple[Change, list[str]]] = []
    for change in ordered:
        created = _missing_folders(change.real) if change.new is not None else []
        try:
            if change.new is None:
                os.unlink(change.real)
            else:
                atomic_write_bytes(change.real, change.new, mode=change.mode)
        except OSError as error:
            _restore(done + [(change, created)])
            raise ToolFailure(f"{TOOL}.write_failed", f"changing {change.shown} failed "
                              f"({error.strerror or error}); no file was changed") from None
        done.append((change, created))


def _restore(done: list[tuple[Change, list[str]]]) -> None:
    for change, created in reversed(done):
        with contextlib.suppress(OSError):
            if change.old is None:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(change.real)
                for folder in created:
                    os.rmdir(folder)
            else:
                atomic_write_bytes(change.real, change.old, mode=change.mode)
