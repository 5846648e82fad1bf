"""Reading the files a prompt refers to: resolution, confinement, decoding, import keys.

Imports and script ``src`` files are resolved against the folder of the file
that mentions them (absolute paths as-is), read as UTF-8 with one leading BOM
stripped (DECISIONS 13), and — when the prompt is being pinned
(``confine=True``) — must lie beneath the root prompt folder *after* symlinks
and ``..`` are resolved (:func:`os.path.realpath`); absolute paths are then
refused outright (seed §9, "pinning").
"""

from __future__ import annotations

import importlib
import os
import stat
from collections.abc import Callable
from typing import Any

BOM = "\ufeff"

#: CPython's builtin SHA-256 (``_sha256`` up to 3.11, ``_sha2`` since 3.12), for small texts:
#: ``hashlib`` would first load OpenSSL, which costs ``chatmdc check`` more start-up time
#: than hashing a prompt takes. Large texts go to OpenSSL's faster implementation.
def _find_builtin_sha256() -> Callable[[bytes | memoryview], Any] | None:
    for module_name in ("_sha256", "_sha2"):
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        sha256: Callable[[bytes | memoryview], Any] = module.sha256
        return sha256
    return None


_builtin_sha256 = _find_builtin_sha256()
_SMALL_TEXT = 256 * 1024  # bytes: where OpenSSL's start-up and speed break even


def strip_bom(text: str) -> str:
    """``text`` without one leading byte-order mark."""
    return text[1:] if text.startswith(BOM) else text


def sha256_hex(text: str) -> str:
    """Lower-hex SHA-256 of ``text`` encoded as UTF-8."""
    return _sha256_bytes(text.encode("utf-8", "surrogatepass"))


def _sha256_bytes(data: bytes | memoryview) -> str:
    if _builtin_sha256 is not None and len(data) <= _SMALL_TEXT:
        return str(_builtin_sha256(data).hexdigest())
    import hashlib

    return hashlib.sha256(data).hexdigest()


def resolve(reference: str, directory: str) -> str:
    """The path ``reference`` names, relative to the absolute ``directory`` unless absolute.

    Not normalised textually: ``..`` after a symlink must mean what the file
    system says it means, both when the file is read and when it is confined.
    """
    return os.path.join(directory, reference)


def import_key(path: str) -> str:
    """The textual normal form of an absolute path used for import-cycle detection (spec §3.4).

    Backslashes become ``/``, ``.`` and empty segments are removed and ``..``
    pops one segment. Symlinks are not resolved (the reference's rule).
    """
    segments: list[str] = []
    for segment in path.replace("\\", "/").split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if segments:
                segments.pop()
            continue
        segments.append(segment)
    return "/" + "/".join(segments)


class Confinement:
    """The root folder that pinned references must stay beneath (already ``realpath``-ed)."""

    __slots__ = ("root",)

    def __init__(self, root: str) -> None:
        self.root = root

    @classmethod
    def of(cls, prompt_dir: str) -> Confinement:
        return cls(os.path.realpath(prompt_dir))

    def violation(self, reference: str, resolved: str) -> str | None:
        """Why ``reference`` (resolved to ``resolved``) escapes the root, or None if it is inside."""
        if os.path.isabs(reference):
            return f"absolute path `{reference}` is not allowed in a pinned prompt"
        real = os.path.realpath(resolved)
        try:
            inside = os.path.commonpath([real, self.root]) == self.root
        except ValueError:  # different drives
            inside = False
        if not inside:
            return (f"`{reference}` resolves to {real}, outside the prompt folder {self.root}"
                    " (symlinks and `..` are resolved before the check)")
        return None


class UnreadableFile(Exception):
    """A referenced file could not be read or is not UTF-8 text; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


#: Larger files are refused (a prompt, an import or a script is text, not a data dump).
MAX_FILE_BYTES = 64 * 1024 * 1024


def read_text(path: str) -> str:
    """The UTF-8 text of ``path`` (one leading BOM stripped); :class:`UnreadableFile` on failure.

    Only regular files are read (never a FIFO or a device such as ``/dev/zero``,
    which could block or never end), and at most :data:`MAX_FILE_BYTES`.
    """
    return _decode(_read_bytes(path))


def read_source(path: str) -> tuple[str, str]:
    """:func:`read_text` of ``path`` and :func:`sha256_hex` of that text.

    The digest is taken from the bytes as read (a strict UTF-8 decoding gives
    them back exactly), which spares encoding the text again: a large
    transcript would otherwise be copied once more only to be hashed.
    """
    data = _read_bytes(path)
    text = _decode(data)
    view = memoryview(data)
    return text, _sha256_bytes(view[len(_BOM_BYTES):] if data.startswith(_BOM_BYTES) else view)


_BOM_BYTES = BOM.encode("utf-8")


def _read_bytes(path: str) -> bytes:
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer (no effect on regular files)
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with open(descriptor, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise UnreadableFile("not a regular file")
            if info.st_size > MAX_FILE_BYTES:
                raise UnreadableFile(f"file is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise UnreadableFile(exc.strerror or str(exc)) from exc
    if len(data) > MAX_FILE_BYTES:
        raise UnreadableFile(f"file is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
    return data


def _decode(data: bytes) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnreadableFile(f"not UTF-8 text (invalid byte at offset {exc.start})") from exc
    return strip_bom(text)
