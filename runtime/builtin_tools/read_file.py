"""The ``read_file`` built-in (declared ``read_file`` or ``get_contents``): confined text reads.

Arguments ``file`` (alias ``path``), optional ``root`` (a declared root id),
``offset`` (0-based first line) and ``line_count``. With ``root`` the file is
relative to that root and must lie inside it; without, a relative file is
relative to the launch directory (``${tool_dir}``) and the canonical target
must lie inside one of the roots. The roots are resolved exactly as the
request's description lists them (:func:`chatmd.declarations.paths.resolve_read_roots`).
At most :data:`~runtime.builtin_tools.text_files.MAX_OUTPUT_BYTES` bytes are
returned, then ``---`` and ``[File truncated]``.
"""

from __future__ import annotations

from typing import BinaryIO

import attrs

from chatmd.declarations.paths import ResolvedRoot, resolve_read_roots
from chatmd.ir import ReadFileTool
from runtime.builtin_tools.arguments import (
    optional_count,
    optional_string,
    parse_arguments,
    string_arg,
)
from runtime.builtin_tools.confinement import confine
from runtime.builtin_tools.failures import ToolFailure, guarded
from runtime.builtin_tools.text_files import (
    MAX_OUTPUT_BYTES,
    SNIFF_BYTES,
    decode_text,
    open_regular,
    refuse_binary,
    truncated,
)
from runtime.tools import Runner

TOOL = "read_file"
ARGUMENTS = ("file", "path", "root", "offset", "line_count")
_PIECE = 1 << 16


@attrs.frozen
class Request:
    file: str
    root: str | None
    offset: int
    line_count: int | None


def read_file_runner(tool: ReadFileTool, variables: dict[str, str]) -> Runner:
    """The runner of ``tool`` with its roots resolved against the host ``variables``."""
    roots, _problems = resolve_read_roots(tool, variables)  # problems: reported at setup
    launch_dir = variables["tool_dir"]
    return guarded(lambda payload: read(_request(payload), roots, launch_dir))


def _request(payload: str) -> Request:
    args = parse_arguments(payload, TOOL, ARGUMENTS)
    return Request(file=string_arg(args, "file", TOOL, aliases=("path",)),
                   root=optional_string(args, "root", TOOL),
                   offset=optional_count(args, "offset", TOOL) or 0,
                   line_count=optional_count(args, "line_count", TOOL))


def read(request: Request, roots: list[ResolvedRoot], launch_dir: str) -> str:
    """The text of the requested slice; a :class:`ToolFailure` for every refusal."""
    real = _target(request, roots, launch_dir)
    with open_regular(real, request.file, TOOL) as handle:
        refuse_binary(handle.read(SNIFF_BYTES), request.file, TOOL)
        handle.seek(0)
        skipped = _skip_lines(handle, request.offset)
        if skipped < request.offset:
            raise ToolFailure(f"{TOOL}.offset_past_end", f"offset {request.offset} is past the "
                              f"end of {request.file}, which has {skipped} lines",
                              hint="offset is the 0-based index of the first line to read")
        data, cut = _take_lines(handle, request.line_count, MAX_OUTPUT_BYTES)
    text = decode_text(data, request.file, TOOL, final=not cut)
    return truncated(text) if cut else text


def _target(request: Request, roots: list[ResolvedRoot], launch_dir: str) -> str:
    if not roots:
        raise ToolFailure(f"{TOOL}.no_roots", "no read_file root is available on this host")
    if request.root is None:
        return confine(request.file, launch_dir, [root.path for root in roots],
                       code=f"{TOOL}.outside_roots", what="every read_file root")
    for root in roots:
        if root.id == request.root:
            return confine(request.file, root.path, [root.path], code=f"{TOOL}.outside_roots",
                           what=f"the root `{root.id}` ({root.path})")
    raise ToolFailure(f"{TOOL}.unknown_root", f"there is no root `{request.root}`",
                      hint="roots: " + ", ".join(f"{root.id} ({root.path})" for root in roots))


def _skip_lines(handle: BinaryIO, count: int) -> int:
    """Skip ``count`` lines (a last line without LF counts); the number skipped."""
    skipped = 0
    while skipped < count:
        piece = handle.readline(_PIECE)
        if not piece:
            break
        if piece.endswith(b"\n") or len(piece) < _PIECE:
            skipped += 1
    return skipped


def _take_lines(handle: BinaryIO, count: int | None, limit: int) -> tuple[bytes, bool]:
    """Up to ``count`` lines (all when None) and at most ``limit`` bytes; (data, cut short)."""
    out = bytearray()
    taken = 0
    while count is None or taken < count:
        room = limit - len(out)
        piece = handle.readline(room + 1)
        if not piece:
            break
        if len(piece) > room:
            out += piece[:room]
            return bytes(out), True
        out += piece  # a whole line: it ends with LF, or the file ends before `room` bytes
        taken += 1
    return bytes(out), False
