"""The bytecode cache: compiled scripts on disk, keyed by source hash, like ``.pyc``.

Location: ``$XDG_CACHE_HOME/chatml`` or ``~/.cache/chatml`` -- never the
user's working folder; when neither can be created or written, there is no
cache (every run compiles). An entry's key hashes the format version, the
compiler version, the surface (name and builtin names) and the source text,
so an entry is only ever found by the exact build it came from. Entries are
written with :func:`chatcommon.atomic.atomic_write_bytes`; an entry that does not
deserialise or whose recorded hash/surface do not match is ignored (and
overwritten by the rebuilt one).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from chatcommon.atomic import atomic_write_bytes
from chatcommon.diagnostics import DiagnosticError
from chatml.bytecode.code import FORMAT_VERSION, CompiledModule
from chatml.bytecode.serialize import BytecodeFormatError, deserialize, serialize

COMPILER_VERSION = "2"
"""Bumped whenever the compiler's output changes for the same input (2: builds with
warnings are no longer cached, so entries of version 1 may hide warnings)."""

SUFFIX = ".cmlb"


def cache_dir(environ: dict[str, str] | None = None) -> Path | None:
    """The cache folder, created if needed, or ``None`` when it is not writable."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CACHE_HOME")
    if base:
        root = Path(base)
    else:
        home = env.get("HOME")
        if not home:
            return None
        root = Path(home) / ".cache"
    folder = root / "chatml"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    if not os.access(folder, os.W_OK | os.X_OK):
        return None
    return folder


_FINGERPRINT: str | None = None


def toolchain_fingerprint() -> str:
    """A hash of the ``chatml`` package's module files (path, size, mtime)."""
    global _FINGERPRINT
    if _FINGERPRINT is None:
        package = Path(__file__).resolve().parents[1]
        digest = hashlib.sha256()
        for path in sorted(package.rglob("*.py")):
            try:
                stat = path.stat()
            except OSError:
                continue
            digest.update(f"{path.relative_to(package)}\0{stat.st_size}\0{stat.st_mtime_ns}\n"
                          .encode())
        _FINGERPRINT = digest.hexdigest()
    return _FINGERPRINT


def cache_key(text: str, surface: str, builtin_names: Iterable[str]) -> str:
    digest = hashlib.sha256()
    header = (f"chatml-bytecode\0{FORMAT_VERSION}\0{COMPILER_VERSION}\0"
              f"{toolchain_fingerprint()}\0{surface}\0")
    digest.update(header.encode())
    digest.update("\0".join(sorted(builtin_names)).encode())
    digest.update(b"\0")
    digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def read_entry(folder: Path | None, key: str, source_hash: str, surface: str, *,
               read: Callable[[bytes], CompiledModule] = deserialize) -> CompiledModule | None:
    """The cached module for ``key``, or ``None`` (missing, unreadable, corrupt or stale).

    ``read`` turns the entry's bytes into a module, raising
    ``BytecodeFormatError`` for anything it finds invalid (pass a reader that
    also verifies the code objects, as :func:`chatml.build.read_cached_bytecode`
    does): such an entry counts as stale, so the caller rebuilds and rewrites it.
    """
    if folder is None:
        return None
    try:
        data = (folder / (key + SUFFIX)).read_bytes()
        module = read(data)
    except (OSError, BytecodeFormatError, DiagnosticError):
        return None  # unreadable, invalid or refused: rebuilt from the source
    if module.source_hash != source_hash or module.surface != surface:
        return None
    return module


def write_entry(folder: Path | None, key: str, module: CompiledModule) -> bool:
    """Store ``module`` under ``key``; ``False`` (and no error) when that is not possible."""
    if folder is None:
        return False
    try:
        atomic_write_bytes(folder / (key + SUFFIX), serialize(module))
    except OSError:
        return False
    return True
