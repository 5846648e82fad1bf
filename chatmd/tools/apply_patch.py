"""The ``apply_patch`` built-in: a free-form custom tool constrained by the V4A patch grammar.

The model sends the patch as raw text (no JSON); the Responses API constrains
its output with :data:`V4A_PATCH_GRAMMAR`, the Lark grammar OpenAI publishes
for this patch format (``*** Begin Patch`` ... ``*** End Patch`` around add,
delete and update hunks).
"""

from __future__ import annotations

from chatmd.tools.schema import JsonObject, custom_tool

NAME = "apply_patch"

V4A_PATCH_GRAMMAR = r"""start: begin_patch hunk+ end_patch
begin_patch: "*** Begin Patch" LF
end_patch: "*** End Patch" LF?

hunk: add_hunk | delete_hunk | update_hunk
add_hunk: "*** Add File: " filename LF add_line+
delete_hunk: "*** Delete File: " filename LF
update_hunk: "*** Update File: " filename LF change_move? change?

filename: /(.+)/
add_line: "+" /(.*)/ LF -> line

change_move: "*** Move to: " filename LF
change: (change_context | change_line)+ eof_line?
change_context: ("@@" | "@@ " /(.+)/) LF
change_line: ("+" | "-" | " ") /(.*)/ LF
eof_line: "*** End of File" LF

%import common.LF
"""

DESCRIPTION = (
    "Edit files with a patch in the V4A format. Send the patch itself as the tool input "
    "(not JSON): it starts with `*** Begin Patch` and ends with `*** End Patch`. In between, "
    "`*** Add File: PATH` is followed by the new file's lines, each prefixed with `+`; "
    "`*** Delete File: PATH` removes a file; `*** Update File: PATH` (optionally followed by "
    "`*** Move to: NEW_PATH`) is followed by hunks that start with `@@` (optionally followed by "
    "a line of context such as a function header) and contain context lines prefixed with a "
    "space, removed lines prefixed with `-` and added lines prefixed with `+`. Give about three "
    "lines of context around each change. Paths are relative to the working directory."
)


def definition() -> JsonObject:
    """The model-visible definition of ``apply_patch``."""
    return custom_tool(NAME, DESCRIPTION,
                       {"type": "grammar", "syntax": "lark", "definition": V4A_PATCH_GRAMMAR})
