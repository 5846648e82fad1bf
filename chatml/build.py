"""The ChatML build pipeline: source text to bytecode, and the runtime surface it runs with.

``build_source(text, name, surface)`` parses, typechecks (when the checker is
installed), resolves and compiles, returning a :class:`BuildResult` (the
compiled module and the warnings) or raising ``DiagnosticError`` with every
parse/type error; nothing is compiled when checking fails.
``runtime_values(surface)`` installs a surface's builtins
(:func:`chatml.install.install`). ``load_program`` turns either a source file or
a bytecode file into a loaded program, through the on-disk cache.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from chatcommon.diagnostics import Diagnostic, DiagnosticError
from chatcommon.sources import SourceFile, Span
from chatml.bytecode.code import CompiledModule
from chatml.depth import retry_deep, run_deep, too_deep
from chatml.install import install, load_standard_library
from chatml.registration import IMPLEMENTATIONS
from chatml.values import Module, Value

if TYPE_CHECKING:
    from chatml.ast import Program

DEFAULT_SURFACE = "core"

BuiltinNames = Mapping[str, "tuple[str, ...] | None"]
"""Surface names: global name -> ``None`` for a function, the export names for a module
(the resolver's input; see :mod:`chatml.resolve`)."""


@attrs.frozen
class BuildResult:
    module: CompiledModule
    warnings: tuple[Diagnostic, ...]
    source: SourceFile | None


@attrs.frozen
class _RegistrySurface:
    """The core surface as the registry knows it (used only when chatml.surfaces is absent)."""

    name: str
    globals: tuple[str, ...]
    modules: dict[str, tuple[str, ...]]


def get_surface(name: str) -> Any:
    """The surface table entry ``name`` (``chatml.surfaces``), or the registry's core."""
    try:
        from chatml.surfaces import get_surface as table_surface  # type: ignore[attr-defined]
    except ImportError:
        table_surface = None
    if table_surface is not None:
        return table_surface(name)
    if name != DEFAULT_SURFACE:
        raise KeyError(name)
    load_standard_library()
    globals_ = tuple(n for n in IMPLEMENTATIONS if "." not in n)
    modules: dict[str, list[str]] = {}
    for qualified in IMPLEMENTATIONS:
        if "." in qualified:
            module, export = qualified.split(".", 1)
            modules.setdefault(module, []).append(export)
    return _RegistrySurface(name, globals_, {m: tuple(e) for m, e in modules.items()})


def runtime_values(surface_name: str = DEFAULT_SURFACE) -> dict[str, Value]:
    """The installed builtin values of a surface."""
    return install(get_surface(surface_name))


def surface_names(surface_name: str = DEFAULT_SURFACE) -> BuiltinNames:
    """The names a surface defines (no implementations needed): what compiling needs."""
    surface = get_surface(surface_name)
    names: dict[str, tuple[str, ...] | None] = {}
    for entry in surface.globals:
        names[entry if isinstance(entry, str) else entry.name] = None
    modules = surface.modules
    items = modules.items() if isinstance(modules, Mapping) else (
        (module.name, module) for module in modules)
    for module_name, module in items:
        exports = getattr(module, "exports", module)
        names[module_name] = tuple(sorted(e if isinstance(e, str) else e.name for e in exports))
    return names


def builtin_names(values: Mapping[str, Value]) -> BuiltinNames:
    """Surface names for the resolver: ``None`` for functions, sorted exports for modules."""
    return {name: tuple(sorted(value)) if isinstance(value, Module) else None
            for name, value in values.items()}


def _typecheck(program: Any, surface_name: str) -> tuple[list[Diagnostic],
                                                          Callable[[Span], str | None] | None]:
    """Run the checker: (diagnostics, the primitive type of a binder, by its name span)."""
    from chatml.typecheck.program import typecheck_program
    from chatml.typecheck.types import Prim, resolve

    result = typecheck_program(program, surface_name)
    binder_types = result.binder_types

    def kind_of(span: Span) -> str | None:
        found = binder_types.get(span)
        if found is None:
            return None
        resolved = resolve(found)
        return resolved.name if isinstance(resolved, Prim) else None

    return list(result.diagnostics), kind_of


def build_source(text: str, name: str, *, surface: str = DEFAULT_SURFACE,
                 values: Mapping[str, Value] | None = None,
                 source: SourceFile | None = None) -> BuildResult:
    """Parse, check, resolve and compile ``text``; ``DiagnosticError`` on any error."""
    from chatml.syntax.parser import parse_program

    source = source or SourceFile(name, text)
    parsed = parse_program(text, source=source, name=name)
    warnings = [d for d in parsed.diagnostics if not d.is_error]
    diagnostics, kind_of = _typecheck(parsed.program, surface)
    errors = [d for d in diagnostics if d.is_error]
    warnings += [d for d in diagnostics if not d.is_error]
    if errors:
        raise DiagnosticError(errors + warnings)
    names = surface_names(surface) if values is None else builtin_names(values)
    module = resolve_and_compile(parsed.program, names, kind_of, name=name, text=text,
                                 surface=surface)
    return BuildResult(module, tuple(warnings), source)


def resolve_and_compile(program: Program, names: Iterable[str],
                        kind_of: Callable[[Span], str | None], *, name: str, text: str,
                        surface: str) -> CompiledModule:
    """Resolve and compile a checked ``program`` on the stack budget the checker had.

    What the checker accepted is not refused later for want of stack; deeper
    than even that budget is ``chatml.too_deep``.
    """
    from chatml.compiler import compile_program
    from chatml.resolve import resolve

    def work() -> CompiledModule:
        try:
            resolution = resolve(program, names, kind_of)
        except RecursionError:
            raise DiagnosticError(too_deep(program.span, "resolve", "resolve")) from None
        return compile_program(program, resolution, source_name=name, source_text=text,
                               surface=surface)

    return run_deep(work)


@attrs.frozen
class Artifact:
    """A compiled script ready to load: from a source file (maybe via the cache) or bytecode."""

    module: CompiledModule
    warnings: tuple[Diagnostic, ...]
    source: SourceFile | None
    from_cache: bool = False


class UnreadableInput(DiagnosticError):
    """The input file is not text the toolchain can read (``chatml`` exits 2, phase ``input``)."""


def not_utf8_message(path: str, error: UnicodeDecodeError) -> str:
    """The message for a file that is not UTF-8 (the same in every ``chatml`` subcommand)."""
    return f"cannot read {path}: not UTF-8 text (invalid byte at offset {error.start})"


def _bad_input(path: str, code: str, message: str) -> DiagnosticError:
    return DiagnosticError(Diagnostic.for_file(path, code, message, phase="parse"))


def read_bytecode(data: bytes, name: str) -> CompiledModule:
    """A bytecode file's module, every part validated: ``BytecodeFormatError`` if invalid.

    :func:`~chatml.bytecode.serialize.deserialize` checks the container, the
    constants, operand ranges and the line tables; the translator then checks
    what only a walk of the code shows (stack discipline, every code object
    ending in a return, blocks, loops, closure groups, patterns), so a file
    that reads is one that loads. A valid module nested too deeply to
    translate is not invalid: deeper than the translator's recursion allows
    is ``DiagnosticError`` (``chatml.too_deep``); blocks nested deeper than
    Python's indentation limit are returned and refused (positioned) when loaded.
    """
    from chatml.bytecode.serialize import deserialize
    from chatml.vm.translate import TooDeepToTranslate, translate

    module = deserialize(data)
    try:
        retry_deep(lambda: translate(module))
    except RecursionError:
        raise DiagnosticError(too_deep(name, "run", "compile")) from None
    except TooDeepToTranslate:
        pass  # valid as far as it goes; loading reports it as too deep, positioned
    return module


def read_cached_bytecode(data: bytes) -> CompiledModule:
    """A bytecode cache entry's module: validated like :func:`read_bytecode` (the container,
    then every code object through the verifier), ``BytecodeFormatError`` if invalid.

    Unlike a bytecode file, an entry is not translated here: it was compiled from the
    source it is cached for, and that source's uncached build does not translate either,
    so a module too deep to translate is refused when it is loaded, either way (loading
    translates it once, instead of twice).
    """
    from chatml.bytecode.serialize import deserialize
    from chatml.vm.verify import verify

    module = deserialize(data)
    verify(module)
    return module


def build_file(path: str, data: bytes, *, surface: str | None = None,
               values: Mapping[str, Value] | None = None, use_cache: bool = True) -> Artifact:
    """Compile the file ``path`` with contents ``data`` (ChatML source or bytecode).

    A bytecode file runs against the surface it was compiled for (``surface``,
    when given, must be the same). Source is compiled through the cache unless
    ``use_cache`` is false. Raises ``DiagnosticError`` for bad input.
    """
    from chatml.bytecode.cache import cache_dir, cache_key, read_entry, write_entry
    from chatml.bytecode.serialize import BytecodeFormatError, is_bytecode

    if is_bytecode(data):
        try:
            module = read_bytecode(data, path)
        except BytecodeFormatError as error:
            raise _bad_input(path, "chatml.bad_bytecode", f"invalid bytecode file: {error}"
                             ) from None
        if surface is not None and surface != module.surface:
            raise _bad_input(path, "chatml.surface_mismatch",
                             f"bytecode was compiled for surface '{module.surface}', "
                             f"not '{surface}'")
        return Artifact(module, (), None)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UnreadableInput(Diagnostic.for_file(
            path, "chatml.unreadable_file", not_utf8_message(path, error), phase="input")
        ) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    surface = surface or DEFAULT_SURFACE
    names = surface_names(surface) if values is None else builtin_names(values)
    source = SourceFile(path, text)
    folder = cache_dir() if use_cache else None
    key = cache_key(text, surface, names)
    from chatml.bytecode.code import source_hash

    cached = read_entry(folder, key, source_hash(text), surface,
                        read=read_cached_bytecode)
    if cached is not None and cached.source_name == path:
        return Artifact(cached, (), source, from_cache=True)
    result = build_source(text, path, surface=surface, values=values, source=source)
    write_entry(folder, key, result.module)
    return Artifact(result.module, result.warnings, source)
