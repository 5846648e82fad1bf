"""The ``append_to_file`` and ``find_and_replace`` built-ins: small in-place edits.

Both are confined to the workspace (``..`` and symlinks resolved first), work
on regular UTF-8 text files only, and replace the file atomically
(:func:`chatcommon.atomic.atomic_write_bytes`: a crash leaves the old or the new
file, and a symlinked path keeps its link, the target is rewritten).
"""

from __future__ import annotations

import os

from chatcommon.atomic import atomic_write_bytes
from runtime.builtin_tools.arguments import any_string, bool_arg, parse_arguments, string_arg
from runtime.builtin_tools.confinement import confine_to_workspace
from runtime.builtin_tools.failures import ToolFailure, guarded
from runtime.builtin_tools.text_files import read_text
from runtime.tools import Runner

APPEND = "append_to_file"
REPLACE = "find_and_replace"


def append_runner(workspace: str) -> Runner:
    return guarded(lambda payload: append(payload, workspace))


def replace_runner(workspace: str) -> Runner:
    return guarded(lambda payload: find_and_replace(payload, workspace))


def append(payload: str, workspace: str) -> str:
    """Append ``content`` after a newline (no newline when the file is new or empty)."""
    args = parse_arguments(payload, APPEND, ("path", "content"))
    path = string_arg(args, "path", APPEND)
    content = any_string(args, "content", APPEND)
    real = confine_to_workspace(path, workspace, APPEND)
    if os.path.lexists(real):
        old = read_text(real, path, APPEND)
    elif os.path.isdir(os.path.dirname(real)):
        old = ""
    else:
        raise ToolFailure(f"{APPEND}.not_found", f"the folder of {path} does not exist")
    new = old + "\n" + content if old else content
    atomic_write_bytes(real, new.encode("utf-8"), create_folders=False)
    size = len(content.encode("utf-8"))
    return f"appended {size} bytes to {path}" if old else f"created {path} ({size} bytes)"


def find_and_replace(payload: str, workspace: str) -> str:
    """Replace the exact substring ``find``: once (it must be unique) or every time (``all``)."""
    args = parse_arguments(payload, REPLACE, ("path", "find", "replace", "all"))
    path = string_arg(args, "path", REPLACE)
    find = string_arg(args, "find", REPLACE)
    replacement = any_string(args, "replace", REPLACE)
    every = bool_arg(args, "all", REPLACE, default=False)
    real = confine_to_workspace(path, workspace, REPLACE)
    text = read_text(real, path, REPLACE)
    count = text.count(find)
    if count == 0:
        raise ToolFailure(f"{REPLACE}.not_found", f"the text to find does not occur in {path}",
                          hint="the match is exact: whitespace and line breaks included")
    if count > 1 and not every:
        raise ToolFailure(f"{REPLACE}.multiple_matches", f"the text to find occurs {count} "
                          f"times in {path} and all is false",
                          hint="set all to true to replace every occurrence, or use apply_patch "
                          "to change one occurrence with its surrounding context")
    atomic_write_bytes(real, text.replace(find, replacement).encode("utf-8"))
    return f"replaced {count} occurrence{'s' if count > 1 else ''} in {path}"
