"""The atomic append protocol for transcripts: crash-safe without rewriting the file.

Rewriting a 10 MB transcript through a temporary file for every item would make each
append cost as much as the whole file. Instead one append (or the replacement of a
short tail, such as the empty ``<user>`` placeholder) is:

1. a *journal* beside the target (``.NAME.append-journal``) is written atomically
   (temporary file, fsync, rename): a JSON header line ``{"offset": N, "length": L}``
   followed by the L bytes to place at offset N;
2. the bytes are written to the target at N with one ``pwrite`` system call (after
   truncating it to N when a tail is replaced), then the target is fsynced;
3. the journal is removed.

SIGINT and SIGTERM are held back for the duration of one append (delivered right after
it), and a SIGKILL cannot split one ``pwrite`` to a regular file, so a process stopped at
any instant leaves the target holding the old or the new text. After a power loss the journal
finishes the job: :func:`runtime.driver.append_log.recover` (run before a transcript is read by the driver) replays
a complete journal (truncate to N, write the bytes) and discards a torn one (the target
was not touched before the journal was complete). The cost of an append depends on the
size of the appended text only.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

from chatcommon.atomic import atomic_write_bytes


def journal_path(target: str | os.PathLike[str]) -> Path:
    path = Path(target)
    return path.parent / f".{path.name}.append-journal"


def recover_journal(target: str | os.PathLike[str]) -> bool:
    journal = journal_path(target)
    try:
        data = journal.read_bytes()
    except FileNotFoundError:
        return False
    header, _, payload = data.partition(b"\n")
    try:
        fields = json.loads(header)
        offset, length = int(fields["offset"]), int(fields["length"])
    except (ValueError, KeyError, TypeError):
        journal.unlink()
        return False
    if len(payload) != length:
        journal.unlink()
        return False
    write_at(Path(target), offset, payload)
    journal.unlink()
    return True


def append_bytes(target: str | os.PathLike[str], data: bytes, *,
                 replace_from: int | None = None) -> int:
    """Append ``data`` to ``target`` (created when missing) atomically; with ``replace_from``
    the bytes from that offset on are replaced instead. Returns the new size."""
    path = Path(target)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        size = 0
    offset = size if replace_from is None else min(replace_from, size)
    header = json.dumps({"offset": offset, "length": len(data)}).encode() + b"\n"
    journal = journal_path(path)
    with no_interrupt():
        atomic_write_bytes(journal, header + data)
        try:
            write_at(path, offset, data)
        except OSError:
            with contextlib.suppress(OSError):  # disk full...: no partial element stays behind
                os.truncate(path, offset)
            raise
        finally:
            with contextlib.suppress(FileNotFoundError):
                journal.unlink()
    return offset + len(data)


@contextlib.contextmanager
def no_interrupt() -> Iterator[None]:
    """SIGINT/SIGTERM held back during one append (delivered right after it)."""
    held = {signal.SIGINT, signal.SIGTERM}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def write_at(path: Path, offset: int, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o666)
    try:
        if os.fstat(fd).st_size != offset:
            os.ftruncate(fd, offset)
        view = memoryview(data)
        position = offset
        while view:
            written = os.pwrite(fd, view, position)
            view = view[written:]
            position += written
        os.fsync(fd)
    finally:
        os.close(fd)


def tail(target: str | os.PathLike[str], count: int) -> bytes:
    """The last ``count`` bytes of ``target`` (all of it when shorter; empty when missing)."""
    try:
        with open(target, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - count))
            return handle.read()
    except FileNotFoundError:
        return b""


__all__ = ["append_bytes", "journal_path", "no_interrupt", "recover_journal", "tail", "write_at"]
