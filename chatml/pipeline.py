"""The ChatML build pipeline: source -> parsed -> checked -> resolved -> compiled.

Every tool that turns ChatML text into something (``chatml check``, ``chatml
compile``/``run``, the REPL, :class:`chatml.engine.Engine`, the moderator
registry, the script checks of ``chatmdc check``) goes through these stages, each
a function from the previous stage's value::

    parse(source)                  -> Parsed     DiagnosticError on a syntax error
    check(parsed, surface)         -> Checked    never raises for type errors
    resolve(checked, names)        -> Resolved   DiagnosticError when checked has errors
    compile_resolved(resolved)     -> Compiled   bytecode and every warning

:func:`finish` runs the last two on the stack budget the checker had (a program
the checker accepted is not refused later for want of stack; deeper than even
that is ``chatml.too_deep``) and :func:`build` runs all four. ``names`` is what
the resolver needs of a surface: :func:`surface_names` for a builtin surface,
:func:`builtin_names` for installed values (a host surface).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, TypeAlias

import attrs

from chatcommon.allocation import gc_paused
from chatcommon.diagnostics import Diagnostic, DiagnosticError
from chatcommon.sources import SourceFile, Span
from chatml.ast import Program
from chatml.depth import run_deep, too_deep

if TYPE_CHECKING:
    from chatml.bytecode.code import CompiledModule
    from chatml.resolve import Resolution
    from chatml.surfaces import Surface
    from chatml.typecheck.program import TypeResult
    from chatml.values import Value

__all__ = [
    "DEFAULT_SURFACE",
    "BuiltinNames",
    "Checked",
    "Compiled",
    "Parsed",
    "Resolved",
    "build",
    "builtin_names",
    "check",
    "compile_resolved",
    "finish",
    "parse",
    "resolve",
    "surface_names",
]

DEFAULT_SURFACE = "core"

BuiltinNames: TypeAlias = Mapping[str, "tuple[str, ...] | None"]
"""Surface names: global name -> ``None`` for a function, the sorted export names for a
module (the resolver's input; see :mod:`chatml.resolve`)."""


@attrs.frozen
class Parsed:
    """Stage 1: the syntax tree of ``source`` and the parser's warnings."""

    source: SourceFile
    program: Program
    warnings: tuple[Diagnostic, ...] = ()


@attrs.frozen
class Checked:
    """Stage 2: the typechecker's result for a parsed program, against one surface.

    ``diagnostics`` are the parse warnings then the checker's diagnostics, in the
    order found.
    """

    parsed: Parsed
    types: TypeResult
    surface_name: str

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        return self.parsed.warnings + self.types.diagnostics

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.types.diagnostics if d.is_error)

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        """The parse warnings, then the checker's warnings."""
        return self.parsed.warnings + tuple(d for d in self.types.diagnostics if not d.is_error)

    def kind_of(self, span: Span) -> str | None:
        """The primitive type name of the binder at ``span`` (the compiler unboxes those)."""
        from chatml.typecheck.types import Prim
        from chatml.typecheck.types import resolve as resolve_type

        found = self.types.binder_types.get(span)
        if found is None:
            return None
        resolved = resolve_type(found)
        return resolved.name if isinstance(resolved, Prim) else None


@attrs.frozen
class Resolved:
    """Stage 3: every name of a checked program bound to a slot, a capture or a global."""

    checked: Checked
    resolution: Resolution


@attrs.frozen
class Compiled:
    """Stage 4: the bytecode module and every warning of the earlier stages."""

    module: CompiledModule
    checked: Checked

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        return self.checked.warnings

    @property
    def source(self) -> SourceFile:
        return self.checked.parsed.source


def parse(source: SourceFile) -> Parsed:
    """Stage 1: parse ``source``; ``DiagnosticError`` (errors, then warnings) if it does not."""
    from chatml.syntax.parser import parse_source

    result = parse_source(source)
    return Parsed(source, result.program, tuple(result.diagnostics))


def check(parsed: Parsed, surface: str | Surface = DEFAULT_SURFACE) -> Checked:
    """Stage 2: typecheck against ``surface`` (a name of ``SURFACE_NAMES`` or a Surface)."""
    from chatml.typecheck.program import typecheck_program

    types = typecheck_program(parsed.program, surface)
    return Checked(parsed, types, surface if isinstance(surface, str) else surface.name)


def resolve(checked: Checked, names: BuiltinNames) -> Resolved:
    """Stage 3: resolve the names of a program that checked without errors.

    Raises ``DiagnosticError`` with the errors then the warnings when it did not
    (nothing is resolved or compiled then), or ``chatml.too_deep``.
    """
    from chatml.resolve import resolve as resolve_names

    if checked.errors:
        raise DiagnosticError([*checked.errors, *checked.warnings])
    program = checked.parsed.program
    try:
        resolution = resolve_names(program, names, checked.kind_of)
    except RecursionError:
        raise DiagnosticError(too_deep(program.span, "resolve", "resolve")) from None
    return Resolved(checked, resolution)


def compile_resolved(resolved: Resolved) -> Compiled:
    """Stage 4: bytecode for a resolved program (positions from its source)."""
    from chatml.compiler import compile_program

    checked = resolved.checked
    source = checked.parsed.source
    module = compile_program(checked.parsed.program, resolved.resolution,
                             source_name=source.name, source_text=source.text,
                             surface=checked.surface_name)
    return Compiled(module, checked)


def finish(checked: Checked, names: BuiltinNames) -> Compiled:
    """Stages 3 and 4 on a large stack (see the module docs); ``DiagnosticError`` on errors."""
    return run_deep(lambda: compile_resolved(resolve(checked, names)))


def build(source: SourceFile, *, surface: str = DEFAULT_SURFACE,
          names: BuiltinNames | None = None) -> Compiled:
    """All four stages; ``DiagnosticError`` with every parse or type error (and the warnings).

    ``names`` defaults to the builtin surface's :func:`surface_names`.
    """
    with gc_paused():
        parsed = parse(source)
        checked = check(parsed, surface)
    return finish(checked, surface_names(surface) if names is None else names)


def surface_names(surface_name: str = DEFAULT_SURFACE) -> BuiltinNames:
    """The names a builtin surface defines (no implementations needed): what resolving needs."""
    from chatml.surfaces import get_surface

    surface = get_surface(surface_name)
    names: dict[str, tuple[str, ...] | None] = dict.fromkeys(surface.global_names)
    for module in surface.modules:
        names[module.name] = tuple(sorted(export.name for export in module.exports))
    return names


def builtin_names(values: Mapping[str, Value]) -> BuiltinNames:
    """The names installed ``values`` define: ``None`` for functions, sorted module exports."""
    from chatml.values import Module

    return {name: tuple(sorted(value)) if isinstance(value, Module) else None
            for name, value in values.items()}
