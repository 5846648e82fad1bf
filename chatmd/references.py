"""File references named in a prompt: refused before the file system sees them when malformed.

Every file a prompt names (``<import src>``, ``<script src>``, and ``<doc src>``,
``<img src>``, ``<agent src>``, ``<tool agent=...>`` with ``local``) goes through :func:`reference_problem`
before it is resolved, confined or opened. The operating system cannot take a
path holding a NUL byte (Python raises ``ValueError``), one that is not valid
UTF-8 once encoded (a lone surrogate from a character reference such as
``&#xD800;``), or one longer than the system's limits; each of these is one
positioned diagnostic, ``chatmd.invalid_path``, at the attribute instead.

:func:`check_local_reference` adds the ``--confine`` rule for references read
from disk (:class:`chatmd.loading.Confinement`: ``..``, absolute paths and
symlinks are resolved first).
"""

from __future__ import annotations

import os

from chatmd.loading import Confinement

INVALID_PATH = "chatmd.invalid_path"
OUTSIDE = "chatmd.path_outside_prompt_dir"

#: A path may hold at most this many bytes (Linux ``PATH_MAX`` less the terminating NUL).
MAX_PATH_BYTES = 4095
#: One path segment (a file or folder name) may hold at most this many bytes (``NAME_MAX``).
MAX_NAME_BYTES = 255
#: Shown of a refused reference in a message (the rest is elided).
_SHOWN = 80


def shown(reference: str) -> str:
    """``reference`` for a message: control characters escaped, at most ~80 characters."""
    text = reference if len(reference) <= _SHOWN else reference[:_SHOWN] + "..."
    return text.encode("unicode_escape").decode("ascii") if not text.isprintable() else text


def reference_problem(reference: str) -> str | None:
    """Why ``reference`` cannot name a file (None when it can)."""
    if "\0" in reference:
        return "it contains a NUL byte"
    try:
        data = reference.encode("utf-8")
    except UnicodeEncodeError as error:
        return (f"it is not valid UTF-8 (code point U+{ord(reference[error.start]):04X} "
                f"at offset {error.start})")
    if len(data) > MAX_PATH_BYTES:
        return f"it is {len(data)} bytes long; a path may have at most {MAX_PATH_BYTES}"
    for segment in data.replace(b"\\", b"/").split(b"/"):
        if len(segment) > MAX_NAME_BYTES:
            return (f"one of its names is {len(segment)} bytes long; a file or folder name "
                    f"may have at most {MAX_NAME_BYTES}")
    return None


def invalid_message(what: str, reference: str, problem: str) -> str:
    """``invalid <doc> src "...": it contains a NUL byte``."""
    return f"invalid {what} \"{shown(reference)}\": {problem}"


def confinement_problem(confinement: Confinement | None, reference: str,
                        folder: str) -> str | None:
    """Why the local ``reference`` (relative to ``folder``) escapes a pinned prompt's folder."""
    if confinement is None:
        return None
    return confinement.violation(reference, os.path.join(folder, reference))
