"""The ``read_file`` definition: root enum and generated description (spec §6, seed §5.1-5.2).

The roots arrive resolved (:func:`chatmd.declarations.paths.resolve_read_roots`:
host path variables, ``${source_dir}`` = the declaring file's folder, canonical
existing directories); their paths are listed in the description the model sees.
"""

from __future__ import annotations

from chatmd.declarations.paths import ResolvedRoot
from chatmd.ir import PathExpr, ReadFileTool, ReadRoot
from chatmd.provenance import Provenance
from chatmd.tools.schema import INTEGER, STRING, JsonObject, function_tool, object_schema

MODEL_NAME = "read_file"

USAGE = (
    "Read a text file and return its contents. `file` is the path to read: relative to the "
    "named `root` when `root` is given, otherwise relative to the launch directory or "
    "absolute. The optional, non-negative `offset` and `line_count` select a part of the "
    "file: read large files in chunks. The file must be an existing regular text file."
)

CONFINEMENT = (
    "Every request is checked after `..` and symbolic links are resolved: the file must lie "
    "inside one of the roots above, whether it is named relative to a root or by an absolute "
    "path. Requests outside every root are refused."
)


#: The root of a ``<tool name="read_file"/>`` declared without ``<read>`` children.
# (IR records are attrs classes built through an ``Any`` decorator, opaque to mypy)
DEFAULT_ROOTS = (ReadRoot("cwd", PathExpr("tool_dir", ""),
                          "ochat launch directory"),)


def default_read_file_tool(name: str, provenance: Provenance | None = None) -> ReadFileTool:
    """The read_file tool a bare ``<tool name="read_file|get_contents"/>`` stands for."""
    return ReadFileTool(name, DEFAULT_ROOTS, provenance=provenance)


def read_file_description(roots: list[ResolvedRoot], description: str | None) -> str:
    lines = [USAGE, "", "Roots:"]
    for root in roots:
        suffix = f" — {root.description}" if root.description else ""
        lines.append(f"- {root.id}: {root.path}{suffix}")
    lines += ["", CONFINEMENT]
    if description:
        lines += ["", description]
    return "\n".join(lines)


def read_file_schema(root_ids: list[str]) -> JsonObject:
    properties: dict[str, JsonObject] = {
        "file": STRING,
        "offset": {**INTEGER, "minimum": 0},
        "line_count": {**INTEGER, "minimum": 0},
    }
    if root_ids:
        properties["root"] = {**STRING, "enum": list(root_ids)}
    return object_schema(properties, ["file"])


def read_file_definition(tool: ReadFileTool, roots: list[ResolvedRoot]) -> JsonObject:
    """The (non-strict) function definition for ``tool`` with its resolved ``roots``."""
    return function_tool(MODEL_NAME, read_file_description(roots, tool.description),
                         read_file_schema([root.id for root in roots]), strict=False)
