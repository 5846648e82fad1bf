"""The library API for checking ChatML: source text in, types and diagnostics out.

::

    from chatml.check import check_source, check_file

    result = check_source("let f x = x + 1", surface="core")
    result.ok                 # no errors (warnings allowed)
    result.val_lines()        # ["val f : int -> int"]
    result.diagnostics        # parse warnings/errors and type errors, in source order
    result.types              # the TypeResult (None when parsing failed)

Both functions never raise for bad input: lexical and syntax errors, type
errors and an unreadable file all come back as diagnostics. ``surface`` is a
name of :data:`chatml.surfaces.SURFACE_NAMES` or a
:class:`~chatml.surfaces.Surface`. Pass ``source`` (a
:class:`~chatcommon.sources.SourceFile`) to check a script embedded in another
file, so positions are reported in that file.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from chatcommon.allocation import gc_paused
from chatcommon.diagnostics import Diagnostic, DiagnosticError
from chatcommon.sources import SourceFile
from chatml.ast import Program

if TYPE_CHECKING:
    from chatml.surfaces import Surface
    from chatml.typecheck.program import Binding, TypeResult

__all__ = ["CheckResult", "check_file", "check_source"]


class CheckResult:
    """The outcome of checking one ChatML source.

    ``types`` is the :class:`chatml.typecheck.TypeResult` when the source
    parsed (None otherwise); ``readable`` is False when the file could not be read.
    """

    __slots__ = ("source", "program", "types", "diagnostics", "readable")

    def __init__(self, source: SourceFile | None, program: Program | None,
                 types: TypeResult | None,
                 diagnostics: tuple[Diagnostic, ...], readable: bool = True) -> None:
        self.source = source
        self.program = program
        self.types = types
        self.diagnostics = diagnostics
        self.readable = readable

    @property
    def ok(self) -> bool:
        return self.readable and not any(d.is_error for d in self.diagnostics)

    def val_lines(self) -> list[str]:
        return [] if self.types is None else self.types.val_lines()

    @property
    def bindings(self) -> tuple[Binding, ...]:
        return () if self.types is None else self.types.bindings


def _sorted(diagnostics: list[Diagnostic]) -> tuple[Diagnostic, ...]:
    return tuple(sorted(diagnostics, key=lambda d: (d.line, d.column)))


def check_source(text: str, *, name: str = "<string>", surface: str | Surface = "core",
                 source: SourceFile | None = None) -> CheckResult:
    """Parse and typecheck ``text`` against ``surface`` (stages 1-2 of :mod:`chatml.pipeline`)."""
    from chatml.pipeline import check, parse

    if source is None:
        source = SourceFile(name, text)
    # One pause of the cyclic collector for both phases: the syntax tree and the
    # types are built in one go, so collecting young objects in between is wasted work.
    with gc_paused():
        try:
            parsed = parse(source)
        except DiagnosticError as error:
            return CheckResult(source, None, None, _sorted(error.diagnostics))
        checked = check(parsed, surface)
    return CheckResult(source, parsed.program, checked.types, _sorted(list(checked.diagnostics)))


def check_file(path: str | os.PathLike[str], *,
               surface: str | Surface = "core") -> CheckResult:
    """Read ``path`` (UTF-8) and check it; an unreadable file gives ``readable=False``."""
    display = os.fspath(path)
    try:
        with open(display, encoding="utf-8") as handle:
            text = handle.read()
    except UnicodeDecodeError as error:
        from chatml.build import not_utf8_message

        diagnostic = Diagnostic.for_file(display, "chatml.unreadable_file",
                                         not_utf8_message(display, error), phase="input")
        return CheckResult(None, None, None, (diagnostic,), readable=False)
    except OSError as error:
        reason = error.strerror or str(error)
        diagnostic = Diagnostic.for_file(display, "chatml.unreadable_file",
                                         f"cannot read {display}: {reason}", phase="input")
        return CheckResult(None, None, None, (diagnostic,), readable=False)
    if text.startswith("\ufeff"):
        text = text[1:]
    return check_source(text, name=display, surface=surface)
