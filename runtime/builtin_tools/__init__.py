"""The built-in tools' runners: what runs when the model calls a declared built-in.

The frontend (:mod:`chatmd.tools`) owns the declarations and the
model-visible definitions; this package owns execution. :func:`builtin_runner`
maps a prompt's ``ReadFileTool`` / ``BuiltinTool`` node to a
:data:`runtime.tools.Runner`; every runner turns every failure (bad
arguments, missing file, refused path) into an output string starting with a
stable code (:mod:`~runtime.builtin_tools.failures`), never an exception.

===================== ====================== ==========================================
declared              model name             module
===================== ====================== ==========================================
read_file/get_contents read_file             :mod:`~runtime.builtin_tools.read_file`
read_dir              read_directory         :mod:`~runtime.builtin_tools.read_dir`
apply_patch           apply_patch (custom)   :mod:`~runtime.builtin_tools.apply_patch`
append_to_file        append_to_file         :mod:`~runtime.builtin_tools.edit_files`
find_and_replace      find_and_replace       :mod:`~runtime.builtin_tools.edit_files`
import_image          import_image           :mod:`~runtime.builtin_tools.import_image`
webpage_to_markdown   webpage_to_markdown    :mod:`~runtime.builtin_tools.webpage`
===================== ====================== ==========================================

The other declarable built-ins (``fork``, the vector-search and indexing
tools, ``meta_refine``) have no runner here: :func:`builtin_runner` raises
``KeyError`` for them.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import attrs

from chatmd.ir import BuiltinTool, ReadFileTool
from chatmd.tools.host import PathVariables
from chatmd.tools.read_file import default_read_file_tool
from runtime.tools import Runner


@attrs.frozen
class ToolEnv:
    """Where built-ins run: the workspace (launch directory), the prompt's folder, network."""

    workspace: Path
    prompt_dir: Path
    allow_network: bool = False

    def path_variables(self) -> dict[str, str]:
        """The ``${...}`` path variables, as request conversion resolves them for this host."""
        return attrs.asdict(PathVariables.for_host(self.prompt_dir, cwd=self.workspace))

    def real_workspace(self) -> str:
        return os.path.realpath(self.workspace)


def _read_file(tool: ReadFileTool, env: ToolEnv) -> Runner:
    from runtime.builtin_tools.read_file import read_file_runner

    return read_file_runner(tool, env.path_variables())


def _read_dir(env: ToolEnv) -> Runner:
    from runtime.builtin_tools.read_dir import read_dir_runner

    return read_dir_runner(env.real_workspace())


def _apply_patch(env: ToolEnv) -> Runner:
    from runtime.builtin_tools.apply_patch import apply_patch_runner

    return apply_patch_runner(env.real_workspace())


def _append(env: ToolEnv) -> Runner:
    from runtime.builtin_tools.edit_files import append_runner

    return append_runner(env.real_workspace())


def _replace(env: ToolEnv) -> Runner:
    from runtime.builtin_tools.edit_files import replace_runner

    return replace_runner(env.real_workspace())


def _import_image(env: ToolEnv) -> Runner:
    from runtime.builtin_tools.import_image import import_image_runner

    return import_image_runner(env.real_workspace())


def _webpage(env: ToolEnv) -> Runner:
    from runtime.builtin_tools.webpage import webpage_runner

    return webpage_runner(env.allow_network)


#: Declared built-in name -> runner factory (read_file / get_contents are handled apart).
FACTORIES: dict[str, Callable[[ToolEnv], Runner]] = {
    "read_dir": _read_dir,
    "apply_patch": _apply_patch,
    "append_to_file": _append,
    "find_and_replace": _replace,
    "import_image": _import_image,
    "webpage_to_markdown": _webpage,
}


def builtin_runner(tool: ReadFileTool | BuiltinTool, env: ToolEnv) -> Runner:
    """The runner of a declared built-in; ``KeyError`` when this host does not implement it."""
    if isinstance(tool, ReadFileTool):
        return _read_file(tool, env)
    if tool.name in ("read_file", "get_contents"):
        return _read_file(default_read_file_tool(tool.name, tool.provenance), env)
    factory = FACTORIES.get(tool.name)
    if factory is None:
        raise KeyError(tool.name)
    return factory(env)


__all__ = ["FACTORIES", "ToolEnv", "builtin_runner"]
