"""The built-in tool names: each declarable name and the function name the model sees (spec §6).

A plain table with no imports, so that the checks ``chatmdc check`` runs on
every prompt cost nothing to load; :mod:`chatmd.tools.builtins` holds the
schemas.
"""

from __future__ import annotations

#: Declared built-in name -> model-visible name.
MODEL_NAMES: dict[str, str] = {
    "apply_patch": "apply_patch",
    "read_dir": "read_directory",
    "append_to_file": "append_to_file",
    "find_and_replace": "find_and_replace",
    "webpage_to_markdown": "webpage_to_markdown",
    "index_ocaml_code": "index_ocaml_code",
    "query_vector_db": "query_vector_db",
    "index_markdown_docs": "index_markdown_docs",
    "markdown_search": "markdown_search",
    "odoc_search": "odoc_search",
    "import_image": "import_image",
    "meta_refine": "meta_refine",
    "fork": "fork",
    "read_file": "read_file",
    "get_contents": "read_file",
}


def is_known(declared_name: str) -> bool:
    return declared_name in MODEL_NAMES
