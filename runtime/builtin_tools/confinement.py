"""Path confinement: a requested path, resolved with ``realpath``, must lie inside a fence.

``..`` segments and symbolic links are resolved *before* the check, on the
fence folders and on the target alike, so neither can escape. A path that
does not exist yet (a file a patch adds) is resolved as far as it exists.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from runtime.builtin_tools.failures import ToolFailure


def inside(real_path: str, real_folder: str) -> bool:
    """Whether the canonical ``real_path`` is ``real_folder`` or lies beneath it."""
    try:
        return os.path.commonpath([real_path, real_folder]) == real_folder
    except ValueError:  # different drives / mixed absolute and relative
        return False


def resolve(path: str, base: str) -> str:
    """``path`` (relative to ``base`` unless absolute) with ``..`` and symlinks resolved."""
    if "\x00" in path:
        raise ToolFailure("tool.invalid_path", "the path contains a NUL character")
    return os.path.realpath(os.path.join(base, os.path.expanduser(path)))


def confine(path: str, base: str, fences: Sequence[str], *, code: str, what: str) -> str:
    """The canonical target of ``path``; a ``code`` failure when it lies outside every fence.

    ``fences`` are canonical folders; ``what`` names them in the message
    ("the workspace", "every read_file root").
    """
    real = resolve(path, base)
    if any(inside(real, fence) for fence in fences):
        return real
    raise ToolFailure(code, f"{path} resolves to {real}, which is outside {what}",
                      hint="allowed: " + ", ".join(fences))


def confine_to_workspace(path: str, workspace: str, tool: str) -> str:
    """The canonical target of ``path`` (relative to the workspace), inside the workspace."""
    return confine(path, workspace, [workspace], code=f"{tool}.outside_workspace",
                   what="the workspace")
