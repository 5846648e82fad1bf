"""Parsing a V4A patch (the ``apply_patch`` custom tool's input) into file operations.

Format (``chatmd.tools.apply_patch.V4A_PATCH_GRAMMAR``)::

    *** Begin Patch
    *** Add File: PATH        then lines "+text"
    *** Delete File: PATH
    *** Update File: PATH     then optional "*** Move to: NEW_PATH", then hunks:
    @@ [header]               a hunk; lines " context", "-removed", "+added",
    *** End of File           optionally, the hunk ends at the end of the file
    *** End Patch

Lenient where models commonly slip and the meaning is plain: CRLF line ends,
blank lines around the patch, an empty line inside a hunk (an empty context
line) or an added file (an empty added line), and a first hunk without
``@@``. Anything else is ``apply_patch.invalid_patch`` naming the line.
"""

from __future__ import annotations

import attrs

from runtime.builtin_tools.failures import ToolFailure

INVALID = "apply_patch.invalid_patch"
BEGIN, END = "*** Begin Patch", "*** End Patch"
ADD, DELETE, UPDATE = "*** Add File: ", "*** Delete File: ", "*** Update File: "
MOVE, END_OF_FILE = "*** Move to: ", "*** End of File"


@attrs.frozen
class Hunk:
    """One ``@@`` hunk: ``lines`` are (kind, text) with kind ``' '``, ``'-'`` or ``'+'``."""

    header: str | None
    lines: tuple[tuple[str, str], ...]
    end_of_file: bool = False

    @property
    def old(self) -> list[str]:
        return [text for kind, text in self.lines if kind != "+"]

    @property
    def new(self) -> list[str]:
        return [text for kind, text in self.lines if kind != "-"]

    @property
    def first_context(self) -> str:
        """The line that names the hunk in errors: first context line, else header, else first."""
        for kind, text in self.lines:
            if kind == " ":
                return text
        if self.header:
            return self.header
        return self.lines[0][1] if self.lines else ""


@attrs.frozen
class AddFile:
    path: str
    lines: tuple[str, ...]


@attrs.frozen
class DeleteFile:
    path: str


@attrs.frozen
class UpdateFile:
    path: str
    move_to: str | None
    hunks: tuple[Hunk, ...]


Operation = AddFile | DeleteFile | UpdateFile


def _fail(number: int, message: str) -> ToolFailure:
    return ToolFailure(INVALID, f"line {number} of the patch: {message}",
                       hint="a patch is `*** Begin Patch`, then `*** Add File: P`, "
                       "`*** Delete File: P` or `*** Update File: P` sections, then "
                       "`*** End Patch`")


class _Parser:
    def __init__(self, text: str) -> None:
        self.lines = [line.removesuffix("\r") for line in text.strip().split("\n")]
        self.index = 0

    @property
    def number(self) -> int:
        return self.index + 1

    def peek(self) -> str | None:
        return self.lines[self.index] if self.index < len(self.lines) else None

    def take(self) -> str:
        line = self.lines[self.index]
        self.index += 1
        return line

    def parse(self) -> list[Operation]:
        if self.peek() is None or self.take().strip() != BEGIN:
            raise _fail(1, f"expected `{BEGIN}`")
        operations: list[Operation] = []
        while True:
            line = self.peek()
            if line is None:
                raise _fail(self.number, f"the patch ends without `{END}`")
            if line.strip() == END:
                if self.index + 1 != len(self.lines):
                    raise _fail(self.number + 1, f"unexpected text after `{END}`")
                break
            operations.append(self.operation())
        if not operations:
            raise _fail(self.number, "the patch changes no file")
        return operations

    def path(self, line: str, prefix: str) -> str:
        path = line[len(prefix):].strip()
        if not path:
            raise _fail(self.number - 1, f"`{prefix.strip()}` needs a path")
        return path

    def operation(self) -> Operation:
        line = self.take()
        if line.startswith(ADD):
            return AddFile(self.path(line, ADD), tuple(self.added_lines()))
        if line.startswith(DELETE):
            return DeleteFile(self.path(line, DELETE))
        if line.startswith(UPDATE):
            path = self.path(line, UPDATE)
            move_to = None
            following = self.peek()
            if following is not None and following.startswith(MOVE):
                move_to = self.path(self.take(), MOVE)
            hunks = self.hunks()
            if not hunks and move_to is None:
                raise _fail(self.number, f"`*** Update File: {path}` has no hunk")
            return UpdateFile(path, move_to, tuple(hunks))
        raise _fail(self.number - 1, f"expected `{ADD}PATH`, `{DELETE}PATH`, `{UPDATE}PATH` or "
                    f"`{END}`, found `{line[:80]}`")

    def added_lines(self) -> list[str]:
        lines = []
        while (line := self.peek()) is not None and not line.startswith("***"):
            if line and not line.startswith("+"):
                raise _fail(self.number, "every line of an added file starts with `+`")
            lines.append(self.take()[1:])
        return lines

    def hunks(self) -> list[Hunk]:
        hunks: list[Hunk] = []
        header: str | None = None
        lines: list[tuple[str, str]] = []
        started = False
        while (line := self.peek()) is not None:
            if line.strip() == END_OF_FILE:
                self.take()
                hunks.append(Hunk(header, tuple(lines), end_of_file=True))
                header, lines, started = None, [], False
                continue
            if line.startswith("***"):
                break
            self.take()
            if line.startswith("@@"):
                if started:
                    hunks.append(Hunk(header, tuple(lines)))
                header, lines, started = line[2:].strip() or None, [], True
            elif line == "" or line[0] in " -+":
                kind = line[0] if line else " "
                lines.append((kind, line[1:]))
                started = True
            else:
                raise _fail(self.number - 1, "a hunk line starts with ` ` (context), `-` "
                            f"(removed) or `+` (added), found `{line[:80]}`")
        if started:
            hunks.append(Hunk(header, tuple(lines)))
        return hunks


def parse_patch(text: str) -> list[Operation]:
    """The operations of a V4A patch, in order; ``apply_patch.invalid_patch`` when malformed."""
    return _Parser(text).parse()
