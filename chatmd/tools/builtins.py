"""The fixed built-in tools: declared name, model-visible name, schema, description (spec §6).

Declared and model-visible names are in :mod:`chatmd.tools.names`.
``read_file`` / ``get_contents`` are not here: they are declared with roots
and built by :mod:`chatmd.tools.read_file`. ``apply_patch`` is a free-form
custom tool (:mod:`chatmd.tools.apply_patch`); every other built-in is a
function tool whose parameters are exactly the table of spec §6.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from chatmd.tools import apply_patch
from chatmd.tools.names import MODEL_NAMES
from chatmd.tools.schema import (
    BOOLEAN,
    INTEGER,
    NULLABLE_STRING,
    STRING,
    STRING_ARRAY,
    JsonObject,
    function_tool,
    object_schema,
)


@attrs.frozen
class FunctionBuiltin:
    """A built-in exposed as a JSON-schema function."""

    model_name: str
    description: str
    properties: tuple[tuple[str, JsonObject], ...]
    required: tuple[str, ...]
    strict: bool

    def definition(self) -> JsonObject:
        return function_tool(self.model_name, self.description,
                             object_schema(dict(self.properties), self.required),
                             strict=self.strict)


def _function(declared: str, description: str, /, *, strict: bool,
              **properties: tuple[JsonObject, bool]) -> FunctionBuiltin:
    """``name=(schema, required)`` keyword arguments, in declaration order."""
    return FunctionBuiltin(
        model_name=MODEL_NAMES[declared],
        description=description,
        properties=tuple((name, schema) for name, (schema, _) in properties.items()),
        required=tuple(name for name, (_, needed) in properties.items() if needed),
        strict=strict,
    )


_REQ = True
_OPT = False

FUNCTION_BUILTINS: dict[str, FunctionBuiltin] = {
    "read_dir": _function(
        "read_dir",
        "List the entries of a directory. `path` is relative to the working directory.",
        strict=True, path=(STRING, _REQ)),
    "append_to_file": _function(
        "append_to_file",
        "Append `content` to the end of the file at `path` (created if missing).",
        strict=True, path=(STRING, _REQ), content=(STRING, _REQ)),
    "find_and_replace": _function(
        "find_and_replace",
        "Replace `find` with `replace` in the file at `path`: every occurrence when `all` is "
        "true, otherwise the single occurrence (it is an error if there are several).",
        strict=True, path=(STRING, _REQ), find=(STRING, _REQ), replace=(STRING, _REQ),
        all=(BOOLEAN, _REQ)),
    "webpage_to_markdown": _function(
        "webpage_to_markdown",
        "Download the web page at `url` and return it converted to Markdown.",
        strict=True, url=(STRING, _REQ)),
    "index_ocaml_code": _function(
        "index_ocaml_code",
        "Index the OCaml sources under `folder_to_index` into the vector database stored in "
        "`vector_db_folder`.",
        strict=True, folder_to_index=(STRING, _REQ), vector_db_folder=(STRING, _REQ)),
    "query_vector_db": _function(
        "query_vector_db",
        "Search the vector database in `vector_db_folder` for the `num_results` code snippets "
        "most relevant to `query`, optionally restricted to the named `index` (null for all).",
        strict=True, vector_db_folder=(STRING, _REQ), query=(STRING, _REQ),
        num_results=(INTEGER, _REQ), index=(NULLABLE_STRING, _REQ)),
    "index_markdown_docs": _function(
        "index_markdown_docs",
        "Index the Markdown documents under `root` as the search index `index_name`, described "
        "by `description`, in the vector database root `vector_db_root`.",
        strict=True, root=(STRING, _REQ), index_name=(STRING, _REQ),
        description=(STRING, _REQ), vector_db_root=(STRING, _OPT)),
    "markdown_search": _function(
        "markdown_search",
        "Search indexed Markdown documents for `query`; return the `k` best passages, "
        "optionally from one index `index_name` under `vector_db_root`.",
        strict=False, query=(STRING, _REQ), k=(INTEGER, _OPT), index_name=(STRING, _OPT),
        vector_db_root=(STRING, _OPT)),
    "odoc_search": _function(
        "odoc_search",
        "Search the indexed OCaml documentation of `package` for `query`; return the `k` best "
        "passages, optionally from the index at `index`.",
        strict=False, query=(STRING, _REQ), k=(INTEGER, _OPT), index=(STRING, _OPT),
        package=(STRING, _REQ)),
    "import_image": _function(
        "import_image",
        "Load the image file at `path` so that you can see it.",
        strict=True, path=(STRING, _REQ)),
    "meta_refine": _function(
        "meta_refine",
        "Refine the prompt `prompt` for the task `task` and return the improved prompt.",
        strict=True, prompt=(STRING, _REQ), task=(STRING, _REQ)),
    "fork": _function(
        "fork",
        "Hand a focused sub-task to a forked agent that inherits this conversation's context, "
        "so that its intermediate work stays out of this conversation: `command` states the "
        "task, `arguments` any arguments for it. Returns the forked agent's final answer.",
        strict=True, command=(STRING, _REQ), arguments=(STRING_ARRAY, _REQ)),
}

_BUILDERS: dict[str, Callable[[], JsonObject]] = {
    **{declared: spec.definition for declared, spec in FUNCTION_BUILTINS.items()},
    apply_patch.NAME: apply_patch.definition,
}


def builtin_definition(declared_name: str) -> JsonObject | None:
    """The definition of a fixed built-in, or None when ``declared_name`` is not one."""
    builder = _BUILDERS.get(declared_name)
    return builder() if builder is not None else None
