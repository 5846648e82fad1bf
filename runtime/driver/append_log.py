"""Appending to a transcript item by item: atomic always, durable per turn or per item.

Two levels, chosen per run (``CHATMD_DURABLE_APPENDS=1`` selects the second):

* **atomic appends, durable turns** (the default): every append changes the target with a
  single ``pwrite`` while SIGINT/SIGTERM are held back, so a process stopped at any
  instant leaves the old or the new text; :meth:`AppendLog.checkpoint` fsyncs the target at
  the end of every turn, on a background thread (off the turn's critical path; the next
  checkpoint and :meth:`AppendLog.close` wait for it). After a power loss the items of the turn in flight may be missing
  (never half-written: the file system commits a write's new size after its data).
* **durable appends**: the write-ahead log below makes each item durable as it is
  appended, at the cost of one flush per item (about 3 ms on this project's machines).

:func:`runtime.driver.append.append_bytes` makes one append durable by itself (a journal
written through a rename, the target fsynced): three metadata-changing fsyncs, a few
milliseconds each. A driver turn appends several items, so :class:`AppendLog` amortises:

In durable mode:

* the log ``.NAME.wal`` beside the target is created once per run at a fixed size
  (:data:`LOG_BYTES`, zero-filled and fsynced, so later writes inside it change no
  metadata); its first line holds the current *epoch*;
* an append writes one record ``{"epoch", "offset", "length", "sha256"}`` + LF + the bytes
  into the log and ``fdatasync`` s it (a data-only flush), then writes the bytes to the target
  at the offset with one ``pwrite`` (after truncating to it when a tail is replaced). The
  target is not fsynced here;
* :meth:`AppendLog.checkpoint` (end of each turn, and on close) fsyncs the target and starts a
  new epoch, which retires every record;
* after a power loss, :func:`recover_log` replays the current epoch's records in order (each
  checked by its length and hash; the first bad one ends the log): appends the disk lost
  come back, and replaying one that survived writes the same bytes again.

Against a process being stopped at any instant (Ctrl-C, SIGTERM, SIGKILL) each append is
atomic on its own: SIGINT and SIGTERM are held back during the append, and the target
changes through a single ``pwrite`` (a truncation then a write when a tail is replaced,
where the intermediate state -- the tail removed -- is itself a valid transcript). A record
that does not fit in the log's free space first triggers a checkpoint; one larger than
the whole log goes through :func:`~runtime.driver.append.append_bytes`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from pathlib import Path

from runtime.driver.append import append_bytes, no_interrupt, recover_journal, write_at

LOG_BYTES = 1 << 20
HEADER_BYTES = 64
DURABLE_VARIABLE = "CHATMD_DURABLE_APPENDS"


def log_path(target: str | os.PathLike[str]) -> Path:
    path = Path(target)
    return path.parent / f".{path.name}.wal"


def _records(data: bytes) -> tuple[int, list[tuple[int, bytes]]]:
    """The epoch and its valid records ``(offset, payload)`` in a log's bytes."""
    try:
        epoch = int(json.loads(data[:HEADER_BYTES].rstrip(b"\0 \n"))["epoch"])
    except (ValueError, KeyError, TypeError):
        return -1, []
    records: list[tuple[int, bytes]] = []
    position = HEADER_BYTES
    while position < len(data) and data[position:position + 1] == b"{":
        end = data.find(b"\n", position)
        if end < 0:
            break
        try:
            fields = json.loads(data[position:end])
            offset, length = int(fields["offset"]), int(fields["length"])
            record_epoch, digest = int(fields["epoch"]), str(fields["sha256"])
        except (ValueError, KeyError, TypeError):
            break
        payload = data[end + 1:end + 1 + length]
        if record_epoch != epoch or len(payload) != length or \
                hashlib.sha256(payload).hexdigest() != digest:
            break
        records.append((offset, payload))
        position = end + 1 + length
    return epoch, records


def recover_log(target: str | os.PathLike[str]) -> int:
    """Replay the current epoch of ``target``'s log (see the module docstring), fsync the
    target and remove the log; the number of records replayed."""
    log = log_path(target)
    try:
        data = log.read_bytes()
    except FileNotFoundError:
        return 0
    _, records = _records(data)
    path = Path(target)
    size = path.stat().st_size if path.exists() else 0
    replayed = 0
    if records and size >= records[0][0]:  # the checkpointed prefix is intact
        for offset, payload in records:
            write_at(path, offset, payload)
            replayed += 1
    log.unlink()
    return replayed


class AppendLog:
    """Appends to one target through a write-ahead log (see the module docstring)."""

    def __init__(self, target: str | os.PathLike[str], *, durable: bool | None = None) -> None:
        self.durable = (os.environ.get(DURABLE_VARIABLE, "") not in ("", "0")
                        if durable is None else durable)
        self.target = Path(target)
        recover_log(self.target)
        self.path = log_path(self.target)
        self.epoch = 0
        self.position = HEADER_BYTES
        self._log_fd = -1
        self._target_fd = -1
        self.dirty = False
        self._syncing: threading.Thread | None = None
        self.sync_error: OSError | None = None

    def _open(self) -> None:
        if self._target_fd >= 0:
            return
        self._target_fd = os.open(self.target, os.O_WRONLY | os.O_CREAT, 0o666)
        if not self.durable:
            return
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
        os.write(fd, b"\0" * LOG_BYTES)
        self._log_fd = fd
        self._write_header()
        os.fsync(fd)
        directory = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)

    def _write_header(self) -> None:
        header = json.dumps({"epoch": self.epoch}).encode().ljust(HEADER_BYTES - 1) + b"\n"
        os.pwrite(self._log_fd, header, 0)

    def size(self) -> int:
        return os.fstat(self._target_fd).st_size if self._target_fd >= 0 else \
            (self.target.stat().st_size if self.target.exists() else 0)

    def append(self, data: bytes, *, replace_from: int | None = None) -> int:
        """Append ``data`` (or replace the tail from ``replace_from``); the new size."""
        self._open()
        size = self.size()
        offset = size if replace_from is None else min(replace_from, size)
        header = json.dumps({"epoch": self.epoch, "offset": offset, "length": len(data),
                             "sha256": hashlib.sha256(data).hexdigest()}).encode() + b"\n"
        record = header + data
        if self.durable and self.position + len(record) > LOG_BYTES:
            self.checkpoint()
        if self.durable and HEADER_BYTES + len(record) > LOG_BYTES:
            return append_bytes(self.target, data, replace_from=replace_from)
        with no_interrupt():
            if self.durable:
                os.pwrite(self._log_fd, record, self.position)
                os.fdatasync(self._log_fd)
                self.position += len(record)
            if size != offset:
                os.ftruncate(self._target_fd, offset)
            view = memoryview(data)
            position = offset
            while view:
                written = os.pwrite(self._target_fd, view, position)
                view = view[written:]
                position += written
            self.dirty = True
        return offset + len(data)

    def checkpoint(self) -> None:
        """Make every append so far durable in the target and retire the log's records.

        In the default mode the fsync runs on a background thread (it overlaps the wait for
        the next model answer); the next checkpoint and :meth:`close` wait for it first.
        """
        if self._target_fd < 0 or not self.dirty:
            return
        self.wait()
        if self._log_fd < 0:
            self.dirty = False
            self._syncing = threading.Thread(target=self._background_sync,
                                             args=(self._target_fd,), name="transcript-fsync",
                                             daemon=True)
            self._syncing.start()
            return
        with no_interrupt():
            os.fsync(self._target_fd)
            self.dirty = False
            self.epoch += 1
            self._write_header()
            os.fdatasync(self._log_fd)
            self.position = HEADER_BYTES

    def _background_sync(self, fd: int) -> None:
        try:
            os.fsync(fd)
        except OSError as problem:  # reported by wait(): the data stay in the page cache
            self.sync_error = problem

    def wait(self) -> None:
        """Wait for a background fsync in flight."""
        if self._syncing is not None:
            self._syncing.join()
            self._syncing = None

    def close(self) -> None:
        """Checkpoint, wait for the fsync, close, remove the log."""
        if self._target_fd < 0:
            return
        self.checkpoint()
        self.wait()
        os.close(self._target_fd)
        self._target_fd = -1
        if self._log_fd >= 0:
            os.close(self._log_fd)
            self._log_fd = -1
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()



def recover(target: str | os.PathLike[str]) -> bool:
    """Finish (or discard) an interrupted append to ``target`` -- its journal
    (:mod:`runtime.driver.append`), then its write-ahead log; True when anything was replayed."""
    replayed = recover_journal(target)
    return recover_log(target) > 0 or replayed


__all__ = ["recover", "LOG_BYTES", "AppendLog", "log_path", "recover_log"]
