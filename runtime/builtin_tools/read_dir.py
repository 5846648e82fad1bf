"""The ``read_dir`` built-in (model name ``read_directory``): a confined, non-recursive listing.

Argument ``path`` (relative to the workspace, or absolute inside it). The
output is the directory's entry names, sorted, one per line; directories end
with ``/``. ``..`` and symbolic links are resolved before the workspace check.
"""

from __future__ import annotations

import os

from runtime.builtin_tools.arguments import parse_arguments, string_arg
from runtime.builtin_tools.confinement import confine_to_workspace
from runtime.builtin_tools.failures import ToolFailure, guarded
from runtime.builtin_tools.text_files import clip
from runtime.tools import Runner

TOOL = "read_directory"


def read_dir_runner(workspace: str) -> Runner:
    return guarded(lambda payload: list_directory(payload, workspace))


def list_directory(payload: str, workspace: str) -> str:
    path = string_arg(parse_arguments(payload, TOOL, ("path",)), "path", TOOL)
    real = confine_to_workspace(path, workspace, TOOL)
    if not os.path.exists(real):
        raise ToolFailure(f"{TOOL}.not_found", f"{path} does not exist")
    if not os.path.isdir(real):
        raise ToolFailure(f"{TOOL}.not_a_directory", f"{path} is not a directory",
                          hint="read a file with read_file")
    try:
        with os.scandir(real) as entries:
            names = sorted(entry.name + ("/" if entry.is_dir() else "") for entry in entries)
    except PermissionError:
        raise ToolFailure(f"{TOOL}.permission_denied", f"{path} cannot be listed: permission "
                          "denied") from None
    return clip("\n".join(names))
