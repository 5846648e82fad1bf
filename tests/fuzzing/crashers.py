"""Kept crashers: the files of tests/fuzzing/crashers/, each replayed through its language's entry points.

A crasher is one file, by suffix:

- ``NAME.chatmd`` — a prompt, checked and compiled as ``root.chatmd`` in an empty folder;
- ``NAME.chatml`` — a ChatML source;
- ``NAME.chatmlc`` — bytes loaded as a bytecode file;
- ``NAME.dir/`` — a folder of files, driven on its ``root.chatmd``;
- ``NAME.json`` — a big input described small: ``{"language": "chatmd"|"chatml",
  "prefix": "...", "repeat": "...", "count": N, "middle": "...", "close": "...",
  "suffix": "..."}`` is ``prefix + repeat*N + middle + close*N + suffix``; an optional
  ``"files"`` object adds files beside a ChatMD root (the root is ``root.chatmd``).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from tests.fuzzing.entry_points import drive_bytecode, drive_chatmd_files, drive_chatml

HERE = Path(__file__).resolve().parent
CRASHERS = HERE / "crashers"
SUFFIXES = (".chatmd", ".chatml", ".chatmlc", ".dir", ".json")


def cases(folder: Path) -> list[Path]:
    """The crashers kept in ``folder``, by name."""
    return sorted(p for p in folder.iterdir() if p.suffix in SUFFIXES)


def _folder_files(folder: Path) -> dict[str, str | bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def _expand(spec: dict[str, object]) -> str:
    count = int(spec.get("count", 1))  # type: ignore[call-overload]
    parts = [str(spec.get(key, "")) for key in ("prefix", "repeat", "middle", "close", "suffix")]
    return parts[0] + parts[1] * count + parts[2] + parts[3] * count + parts[4]


def replay(path: Path) -> None:
    """Drive the entry points of the crasher's language on it (raises FuzzFailure if it crashes)."""
    if path.suffix == ".chatml":
        drive_chatml(path.read_bytes().decode("utf-8"), path.name)
        return
    if path.suffix == ".chatmlc":
        drive_bytecode(path.read_bytes())
        return
    files: dict[str, str | bytes]
    if path.suffix == ".chatmd":
        files = {"root.chatmd": path.read_bytes()}
    elif path.suffix == ".dir":
        files = _folder_files(path)
    else:
        spec = json.loads(path.read_text(encoding="utf-8"))
        text = _expand(spec)
        if spec.get("language") == "chatml":
            drive_chatml(text, path.stem + ".chatml")
            return
        files = {"root.chatmd": text, **dict(spec.get("files", {}))}
    with tempfile.TemporaryDirectory() as folder:
        drive_chatmd_files(Path(folder), files, "root.chatmd")
