"""The shell audit log (shell spec §8.13): JSONL, one atomic append per record, hash-chained.

:class:`AuditLog` writes each record with a single ``write`` on a file opened
``O_APPEND`` (and fsyncs it), under a thread lock and an ``flock`` so that
concurrent writers never interleave. Chained sinks add
``previous_event_sha256`` and ``event_sha256`` (SHA-256 of the canonical
record without ``event_sha256``); the sequence continues from the last record
of an existing file. :func:`verify` walks a file and reports the first broken
link. Records pass through the runtime's :class:`~runtime.shell.secrets.Redactor`
before they are written, so secret values never reach the file.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

SCHEMA_VERSION = "ochat-shell-audit-v1"
GENESIS = "0" * 64


def _canonical(record: Mapping[str, Any]) -> bytes:
    return json.dumps(record, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False).encode("utf-8")


def event_digest(record: Mapping[str, Any]) -> str:
    body = {key: value for key, value in record.items() if key != "event_sha256"}
    return hashlib.sha256(_canonical(body)).hexdigest()


def _last_record(path: str) -> Mapping[str, Any] | None:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            block = min(size, 1 << 16)
            handle.seek(size - block)
            tail = handle.read()
    except OSError:
        return None
    for line in reversed(tail.splitlines()):
        if line.strip():
            try:
                value = json.loads(line)
            except ValueError:
                return None
            return value if isinstance(value, dict) else None
    return None


class AuditWriteError(Exception):
    pass


class AuditLog:
    """One audit sink: ``jsonl``/``session`` (file, chained) or ``stderr`` (unchained)."""

    def __init__(self, path: str | None, *, chained: bool = True,
                 redact: Callable[[str], str] = lambda s: s, rotate_bytes: int | None = None,
                 keep: int = 5) -> None:
        self.path = path
        self.rotate_bytes = rotate_bytes
        self.keep = keep
        self.chained = chained and path is not None
        self.redact = redact
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._tail: tuple[tuple[int, int, int], Mapping[str, Any]] | None = None
        """(device, inode, size) of the file after our last append, and that record."""

    def write(self, record: dict[str, Any], *, sync: bool = False) -> None:
        """Append one record (redacted, sequenced, chained) with one ``write``;
        ``sync`` also fsyncs the file. Raises AuditWriteError."""
        with self._lock:
            try:
                if self.path is None:
                    sys.stderr.write(self._line(record, None).decode("utf-8"))
                    return
                fd = self._descriptor()
                fcntl.flock(fd, fcntl.LOCK_EX)
                try:
                    self._append(fd, record, sync)
                finally:
                    fcntl.flock(fd, fcntl.LOCK_UN)
            except OSError as error:
                raise AuditWriteError(f"audit write failed: {error.strerror}") from None

    def _descriptor(self) -> int:
        """The open append descriptor, reopened when the path now names another file."""
        assert self.path is not None
        if self._fd is not None:
            try:
                current = os.stat(self.path)
                mine = os.fstat(self._fd)
                if (current.st_dev, current.st_ino) == (mine.st_dev, mine.st_ino):
                    return self._fd
            except OSError:
                pass
            os.close(self._fd)
            self._fd = None
        os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC,
                           0o600)
        return self._fd

    def _rotate(self) -> int:
        """``path`` -> ``path.1`` -> ... -> ``path.KEEP`` (dropped); a fresh ``path``, locked.

        The chain continues into the new file: its first record links to the
        last record of the rotated one."""
        assert self.path is not None
        for index in range(self.keep - 1, 0, -1):
            older = f"{self.path}.{index}"
            if os.path.exists(older):
                os.replace(older, f"{self.path}.{index + 1}")
        os.replace(self.path, f"{self.path}.1")
        old = self._fd
        fd = self._descriptor()
        fcntl.flock(fd, fcntl.LOCK_EX)
        if old is not None and old != fd:
            fcntl.flock(old, fcntl.LOCK_UN)
        return fd

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def __del__(self) -> None:
        fd = getattr(self, "_fd", None)
        if fd is not None:
            os.close(fd)

    def _append(self, fd: int, record: dict[str, Any], sync: bool) -> None:
        """Under the file lock: chain onto the last record (cached while nobody else wrote)."""
        assert self.path is not None
        st = os.fstat(fd)
        identity = (st.st_dev, st.st_ino, st.st_size)
        if self._tail is not None and self._tail[0] == identity:
            last: Mapping[str, Any] | None = self._tail[1]
        else:
            last = _last_record(self.path)
        line = self._line(record, last)
        if self.rotate_bytes is not None and st.st_size and (
                st.st_size + len(line) > self.rotate_bytes):
            fd = self._rotate()
            st = os.fstat(fd)
        written = os.write(fd, line)
        if written != len(line):
            raise OSError(5, "short write to the audit file")
        if sync:
            os.fsync(fd)
        self._tail = ((st.st_dev, st.st_ino, st.st_size + written), json.loads(line))

    def _line(self, record: dict[str, Any], last: Mapping[str, Any] | None) -> bytes:
        if getattr(self.redact, "secrets", True):
            body = json.loads(self.redact(json.dumps(record, ensure_ascii=False)))
        else:
            body = dict(record)
        sequence = int(last.get("sequence", 0)) + 1 if last else 1
        body = {"schema_version": SCHEMA_VERSION, "sequence": sequence,
                "timestamp": time.time(), **body}
        if self.chained:
            previous = str(last.get("event_sha256", GENESIS)) if last else GENESIS
            body["previous_event_sha256"] = previous
            body["event_sha256"] = event_digest(body)
        return _canonical(body) + b"\n"


@dataclass(frozen=True)
class Verification:
    records: int
    broken_line: int | None
    problem: str


def _predecessor(path: str) -> str:
    """The file rotated out just before ``path``: ``x.jsonl`` -> ``x.jsonl.1`` -> ``x.jsonl.2``."""
    base, _, suffix = path.rpartition(".")
    if suffix.isdigit() and base:
        return f"{base}.{int(suffix) + 1}"
    return f"{path}.1"


def _chain_start(path: str, first: Mapping[str, Any], continuation: bool) -> str:
    """The hash the first record must link to: the genesis, or the last record of the
    rotated predecessor file (or, with ``continuation``, whatever the record says)."""
    sequence = first.get("sequence")
    if sequence == 1 or not isinstance(sequence, int):
        return GENESIS
    last = _last_record(_predecessor(path))
    if last is not None and last.get("sequence") == sequence - 1:
        return str(last.get("event_sha256"))
    return str(first.get("previous_event_sha256")) if continuation else GENESIS


def verify(path: str, *, continuation: bool = False) -> Verification:
    """Walk a chained audit file; ``broken_line`` is the first line whose link breaks.

    A file that does not start at sequence 1 must link to its rotated
    predecessor (``PATH.1``, ``PATH.2``...); ``continuation`` accepts its first
    link as written (the predecessor was rotated away)."""
    previous: str | None = None
    sequence = 0
    count = 0
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, 1):
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
            except ValueError:
                return Verification(count, number, "the line is not JSON")
            if not isinstance(record, dict):
                return Verification(count, number, "the line is not a JSON object")
            if previous is None:
                previous = _chain_start(path, record, continuation)
                if previous != GENESIS:
                    sequence = int(record["sequence"]) - 1
            if record.get("previous_event_sha256") != previous:
                return Verification(count, number, "previous_event_sha256 does not match the "
                                    "previous record")
            if record.get("event_sha256") != event_digest(record):
                return Verification(count, number, "event_sha256 does not match the record")
            if record.get("sequence") != sequence + 1:
                return Verification(count, number, "the sequence number is not consecutive")
            previous = str(record["event_sha256"])
            sequence += 1
            count += 1
    return Verification(count, None, "")
