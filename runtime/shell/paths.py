"""Path expressions and root containment (shell spec §2 path expressions, §8.5).

:class:`HostDirs` holds the host-supplied folders behind ``${workspace}``,
``${prompt_dir}``... :func:`resolve_path_expr` turns a manifest path record
(``{"base", "path", "source_dir"?}``) into an absolute path. :func:`canonical`
resolves symlinks and ``..`` even for paths that do not exist yet (deepest
existing ancestor, then the rest), and :func:`inside` tests containment on
canonical paths, so a symlink escaping a root is outside it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class HostDirs:
    """The folders path variables resolve against (all absolute)."""

    workspace: str
    prompt_dir: str
    session_dir: str
    cache_dir: str
    home: str
    tool_dir: str

    def variable(self, name: str, source_dir: str | None) -> str:
        if name == "source_dir":
            return source_dir or self.prompt_dir
        return str(getattr(self, name))


def resolve_path_expr(record: Mapping[str, Any], dirs: HostDirs,
                      source_dir: str | None = None) -> str:
    """The absolute path of a manifest path expression (not canonicalised)."""
    base = record.get("base")
    path = str(record.get("path") or "")
    own_source = record.get("source_dir") or source_dir
    if base is None:
        root = "" if path.startswith("/") else (own_source or dirs.prompt_dir)
    else:
        root = dirs.variable(str(base), own_source)
    joined = os.path.join(root, path) if path else root
    return os.path.normpath(joined)


def canonical(path: str) -> str:
    """``path`` with every symlink and ``..`` resolved; missing tails are appended as written."""
    absolute = os.path.abspath(path)
    return os.path.realpath(absolute)


def inside(path: str, roots: Iterable[str]) -> bool:
    """Whether canonical ``path`` equals or lies below one of the canonical ``roots``."""
    for root in roots:
        if path == root or path.startswith(root.rstrip("/") + "/") or root == "/":
            return True
    return False
