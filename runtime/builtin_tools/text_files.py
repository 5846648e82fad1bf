"""Opening and reading regular UTF-8 text files, refusing everything else.

Files are opened with ``O_NOFOLLOW | O_NONBLOCK`` and checked with ``fstat``
on the open descriptor: a FIFO never blocks the tool, a device or directory is
refused, and a symlink swapped in after confinement is not followed.
"Binary-like" means a NUL byte in the first 8 KiB (or in the text read) or
bytes that are not UTF-8.
"""

from __future__ import annotations

import codecs
import os
import stat
from typing import BinaryIO

from runtime.builtin_tools.failures import ToolFailure

#: The most a tool output carries (read_file, read_directory, webpage_to_markdown).
MAX_OUTPUT_BYTES = 380_928
TRUNCATION_MARK = "---\n[File truncated]"
#: The largest file the editing tools load into memory.
MAX_EDIT_BYTES = 16 * 1024 * 1024
SNIFF_BYTES = 8192

_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | \
    getattr(os, "O_CLOEXEC", 0)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def open_regular(real_path: str, shown: str, tool: str) -> BinaryIO:
    """``real_path`` opened for binary reading; a failure unless it is an existing regular file."""
    try:
        fd = os.open(real_path, _FLAGS)
    except FileNotFoundError:
        raise ToolFailure(f"{tool}.not_found", f"{shown} does not exist") from None
    except IsADirectoryError:
        raise ToolFailure(f"{tool}.not_a_file", f"{shown} is a directory, not a file") from None
    except PermissionError:
        raise ToolFailure(f"{tool}.permission_denied", f"{shown} cannot be read: permission "
                          "denied") from None
    except OSError as error:
        raise ToolFailure(f"{tool}.not_a_file", f"{shown} cannot be opened: "
                          f"{error.strerror}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise ToolFailure(f"{tool}.not_a_file", f"{shown} is {_kind(mode)}; only regular text "
                          "files can be used")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def refuse_binary(data: bytes, shown: str, tool: str) -> None:
    if b"\x00" in data:
        raise ToolFailure(f"{tool}.binary_file", f"{shown} looks like a binary file (it "
                          "contains NUL bytes); only UTF-8 text files can be used")


def decode_text(data: bytes, shown: str, tool: str, *, final: bool = True) -> str:
    """``data`` as UTF-8; with ``final=False`` an incomplete character at the end is dropped."""
    refuse_binary(data, shown, tool)
    try:
        return codecs.getincrementaldecoder("utf-8")().decode(data, final=final)
    except UnicodeDecodeError as error:
        raise ToolFailure(f"{tool}.not_text", f"{shown} is not UTF-8 text (invalid byte at "
                          f"offset {error.start})") from None


def read_text(real_path: str, shown: str, tool: str) -> str:
    """The whole text of a regular UTF-8 file of at most :data:`MAX_EDIT_BYTES` bytes."""
    with open_regular(real_path, shown, tool) as handle:
        data = handle.read(MAX_EDIT_BYTES + 1)
    if len(data) > MAX_EDIT_BYTES:
        raise ToolFailure(f"{tool}.file_too_large", f"{shown} is larger than {MAX_EDIT_BYTES} "
                          "bytes")
    return decode_text(data, shown, tool)


def truncated(text: str) -> str:
    """``text`` followed by the truncation mark on its own lines."""
    return text + ("" if text.endswith("\n") or not text else "\n") + TRUNCATION_MARK


def clip(text: str) -> str:
    """``text`` cut to :data:`MAX_OUTPUT_BYTES` UTF-8 bytes (then the mark) when longer."""
    data = text.encode("utf-8")
    if len(data) <= MAX_OUTPUT_BYTES:
        return text
    head = codecs.getincrementaldecoder("utf-8")().decode(data[:MAX_OUTPUT_BYTES], final=False)
    return truncated(head)
