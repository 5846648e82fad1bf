"""Executable resolution and identity (shell spec §8.4).

:meth:`Resolver.resolve` finds the executable of a requested program (a path,
a resolver alias, or a search through the explicit search path or the
sanitised ``PATH``), canonicalises it and fingerprints it: a regular file with
an execute bit, its stat identity and the SHA-256 of its contents (re-stated
after hashing). :func:`reverify` repeats that just before spawning and fails
with ``executable_changed`` when any recorded field differs.

Hashes are cached by stat identity (device, inode, mode, owner, size, mtime,
ctime), so a tool called again pays one ``stat`` instead of a read.
"""

from __future__ import annotations

import hashlib
import os
import stat
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from runtime.shell.errors import ShellError
from runtime.shell.paths import inside

FALLBACK_SEARCH = ("/usr/bin", "/bin", "/usr/sbin", "/sbin")
_CACHE_SIZE = 1024


@dataclass(frozen=True)
class Alias:
    path: str
    trusted: bool
    sha256: str | None


@dataclass(frozen=True)
class Fingerprint:
    canonical: str
    device: int
    inode: int
    mode: int
    uid: int
    gid: int
    size: int
    mtime_ns: int
    ctime_ns: int
    sha256: str

    @property
    def identity(self) -> tuple[object, ...]:
        return (self.canonical, self.device, self.inode, self.mode, self.uid, self.gid,
                self.size, self.mtime_ns, self.ctime_ns)


@dataclass(frozen=True)
class Executable:
    requested: str
    path: str
    trusted: bool
    fingerprint: Fingerprint

    @property
    def canonical(self) -> str:
        return self.fingerprint.canonical

    @property
    def sha256(self) -> str:
        return self.fingerprint.sha256


class _HashCache:
    def __init__(self) -> None:
        self._entries: OrderedDict[tuple[object, ...], str] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[object, ...]) -> str | None:
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def put(self, key: tuple[object, ...], value: str) -> None:
        with self._lock:
            self._entries[key] = value
            while len(self._entries) > _CACHE_SIZE:
                self._entries.popitem(last=False)


HASH_CACHE = _HashCache()


def _identity(canonical: str, st: os.stat_result) -> tuple[object, ...]:
    return (canonical, st.st_dev, st.st_ino, st.st_mode, st.st_uid, st.st_gid, st.st_size,
            st.st_mtime_ns, st.st_ctime_ns)


def _hash_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fingerprint(path: str, requested: str, *, code: str = "resolution_error") -> Fingerprint:
    """Canonicalise and fingerprint ``path``; ``code`` is raised on any problem."""
    canonical = os.path.realpath(path)
    try:
        st = os.stat(canonical)
    except OSError:
        raise ShellError(code, f"executable for {requested} not found: {path}") from None
    if not stat.S_ISREG(st.st_mode) or not st.st_mode & 0o111:
        raise ShellError(code, f"{path} (for {requested}) is not an executable regular file")
    key = _identity(canonical, st)
    digest = HASH_CACHE.get(key)
    if digest is None:
        try:
            digest = _hash_file(canonical)
            after = os.stat(canonical)
        except OSError:
            raise ShellError(code, f"executable {path} cannot be read") from None
        if _identity(canonical, after) != key:
            raise ShellError(code, f"executable {path} changed while it was fingerprinted")
        HASH_CACHE.put(key, digest)
    return Fingerprint(canonical, st.st_dev, st.st_ino, st.st_mode, st.st_uid, st.st_gid,
                       st.st_size, st.st_mtime_ns, st.st_ctime_ns, digest)


def reverify(executable: Executable) -> None:
    """Re-fingerprint just before spawn; ``executable_changed`` when anything differs."""
    try:
        again = fingerprint(executable.path, executable.requested, code="executable_changed")
    except ShellError as error:
        raise ShellError("executable_changed", error.message) from None
    if again != executable.fingerprint:
        raise ShellError("executable_changed",
                         f"executable {executable.path} changed after it was resolved")


class Resolver:
    """The resolver of one runtime: aliases, search path, trusted roots."""

    def __init__(self, cwd: str, aliases: Mapping[str, Alias], search_path: Sequence[str],
                 trusted_roots: Sequence[str], env_path: str | None) -> None:
        self.cwd = cwd
        self.aliases = dict(aliases)
        self.search_path = list(search_path)
        self.trusted_roots = [os.path.realpath(root) for root in trusted_roots]
        self.env_path = env_path

    def _search(self, program: str) -> str:
        if self.search_path:
            folders: Sequence[str] = self.search_path
        elif self.env_path:
            folders = self.env_path.split(":")
        else:
            folders = FALLBACK_SEARCH
        for folder in folders:
            candidate = os.path.join(folder, program)
            if os.path.exists(candidate):
                return candidate
        raise ShellError("resolution_error",
                         f"program {program} not found in {':'.join(folders)}")

    def resolve(self, program: str) -> Executable:
        if not program or "\0" in program:
            raise ShellError("resolution_error", "the program must be non-empty, without NUL")
        alias = None
        if "/" in program:
            path = os.path.normpath(os.path.join(self.cwd, program))
        elif program in self.aliases:
            alias = self.aliases[program]
            path = alias.path
        else:
            path = self._search(program)
        print_ = fingerprint(path, program)
        if alias is not None and alias.sha256 and alias.sha256.lower() != print_.sha256:
            raise ShellError("resolution_error",
                             f"executable {program} does not match its pinned sha256")
        trusted = ((alias is not None and alias.trusted)
                   or (bool(self.trusted_roots) and inside(print_.canonical, self.trusted_roots)))
        trusted = trusted and not print_.mode & 0o022
        return Executable(program, path, trusted, print_)
