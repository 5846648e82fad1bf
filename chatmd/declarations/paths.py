"""Path expressions (spec §4.8) and the resolution of read_file roots against host folders.

Syntax, checked at parse time: empty or NUL → error; ``/...`` → absolute;
``${NAME}`` at the very start → that variable (``workspace source_dir
prompt_dir tool_dir session_dir cache_dir home``; anything else is an error
naming it), followed by ``/`` or the end of the value; any other value is
relative to a base variable the caller picks (``tool_dir`` for read roots).

Existence is a tool-construction concern: :func:`resolve_read_roots` resolves a
tool's roots against a host-supplied variable map, canonicalises them with
``realpath`` and checks that each is an existing directory (and, optionally,
inside a confining folder). The runtime calls it before the first request.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import NamedTuple

from chatcommon.diagnostics import Diagnostic
from chatmd.ir import Location, PathExpr, ReadFileTool

PATH_VARIABLES = ("workspace", "source_dir", "prompt_dir", "tool_dir", "session_dir",
                  "cache_dir", "home")
_VARIABLES = frozenset(PATH_VARIABLES)


class PathExprError(ValueError):
    """A path expression that does not parse; the message says what was expected."""


def parse_path_expr(value: str, *, relative_base: str = "tool_dir") -> PathExpr:
    """Parse ``value``; a relative value is anchored at ``${relative_base}``."""
    if value == "":
        raise PathExprError("path is empty")
    if "\x00" in value:
        raise PathExprError("path contains a NUL character")
    if value.startswith("/"):
        return PathExpr(None, value)
    if value.startswith("${"):
        close = value.find("}")
        if close >= 0:
            name = value[2:close]
            if name not in _VARIABLES:
                raise PathExprError(f"unknown path variable ${{{name}}}: expected one of "
                                    + ", ".join(f"${{{v}}}" for v in PATH_VARIABLES))
            rest = value[close + 1:]
            if rest and not rest.startswith("/"):
                raise PathExprError(f"${{{name}}} must be followed by `/` or end the path, "
                                    f"not `{rest[0]}`")
            return PathExpr(name, rest[1:])
    return PathExpr(relative_base, value)


def resolve_path_expr(expr: PathExpr, variables: Mapping[str, str]) -> str:
    """The native path ``expr`` stands for; KeyError names a variable the host did not supply."""
    if expr.base is None:
        return expr.rest
    base = variables[expr.base]
    return os.path.join(base, expr.rest) if expr.rest else base


class ResolvedRoot(NamedTuple):
    """A read_file root as the runtime uses it: canonical (``realpath``) existing directory."""

    id: str
    path: str
    description: str | None


def resolve_read_roots(tool: ReadFileTool, variables: Mapping[str, str], *,
                       confine_to: str | None = None,
                       phase: str = "tools") -> tuple[list[ResolvedRoot], list[Diagnostic]]:
    """Resolve every root of ``tool``; diagnostics for unknown variables, missing folders, escapes.

    ``variables`` supplies the host folders; ``source_dir`` and ``prompt_dir``
    default to the tool's provenance when absent. With ``confine_to`` every
    root must lie beneath that folder after ``realpath``.
    """
    supplied = dict(variables)
    if tool.provenance is not None:
        supplied.setdefault("source_dir", tool.provenance.source_dir)
        supplied.setdefault("prompt_dir", tool.provenance.prompt_dir)
    fence = os.path.realpath(confine_to) if confine_to is not None else None
    roots: list[ResolvedRoot] = []
    diagnostics: list[Diagnostic] = []

    def report(root_location: Location | None, code: str, message: str) -> None:
        where = root_location
        if where is None and tool.provenance is not None:
            where = Location(tool.provenance.file, tool.provenance.line, tool.provenance.column)
        file, line, column = (where.file, where.line, where.column) if where else ("<prompt>", 1, 1)
        diagnostics.append(Diagnostic(code=code, message=message, file=file, line=line,
                                      column=column, phase=phase))

    for root in tool.roots:
        try:
            native = resolve_path_expr(root.path, supplied)
        except KeyError:
            report(root.location, "read_file.unknown_variable",
                   f"root `{root.id}` uses ${{{root.path.base}}}, which this host does not supply")
            continue
        real = os.path.realpath(native)
        if not os.path.isdir(real):
            report(root.location, "read_file.root_unavailable",
                   f"root `{root.id}` ({root.path} = {native}) is not an existing directory")
            continue
        if fence is not None and os.path.commonpath([real, fence]) != fence:
            report(root.location, "chatmd.path_outside_prompt_dir",
                   f"root `{root.id}` resolves to {real}, outside {fence}")
            continue
        roots.append(ResolvedRoot(root.id, real, root.description))
    return roots, diagnostics
