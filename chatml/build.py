"""Building ChatML files for the command line: source or bytecode to a loadable module.

``build_source(text, name, surface)`` runs the one pipeline (:mod:`chatml.pipeline`)
and returns a :class:`BuildResult` (the compiled module and the warnings) or raises
``DiagnosticError`` with every parse/type error; nothing is compiled when checking
fails. ``runtime_values(surface)`` installs a surface's builtins
(:func:`chatml.install.install`). ``build_file`` turns either a source file or a
bytecode file into a loadable module, through the on-disk cache.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping

import attrs

from chatcommon.diagnostics import Diagnostic, DiagnosticError
from chatcommon.sources import SourceFile
from chatml.bytecode.code import CompiledModule
from chatml.depth import retry_deep
from chatml.install import install
from chatml.pipeline import DEFAULT_SURFACE, build, builtin_names, surface_names
from chatml.values import Value

__all__ = ["DEFAULT_SURFACE", "Artifact", "BuildResult", "UnreadableInput", "build_file",
           "build_source", "not_utf8_message", "read_bytecode", "runtime_values"]


@attrs.frozen
class BuildResult:
    module: CompiledModule
    warnings: tuple[Diagnostic, ...]
    source: SourceFile | None


def runtime_values(surface_name: str = DEFAULT_SURFACE) -> dict[str, Value]:
    """The installed builtin values of a builtin surface."""
    from chatml.surfaces import get_surface

    return install(get_surface(surface_name))


def build_source(text: str, name: str, *, surface: str = DEFAULT_SURFACE,
                 values: Mapping[str, Value] | None = None,
                 source: SourceFile | None = None) -> BuildResult:
    """Parse, check, resolve and compile ``text``; ``DiagnosticError`` on any error."""
    source = source or SourceFile(name, text)
    names = None if values is None else builtin_names(values)
    compiled = build(source, surface=surface, names=names)
    return BuildResult(compiled.module, compiled.warnings, source)


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
    translate is not invalid: it is returned (the verifier checked all of it)
    and loading runs it on the reference interpreter (``chatml.vm.loader``).
    """
    from chatml.bytecode.serialize import deserialize
    from chatml.vm.translate import TooDeepToTranslate, translate

    module = deserialize(data)
    # verified as a whole before translating: too deep for Python is still valid
    with contextlib.suppress(RecursionError, TooDeepToTranslate):
        retry_deep(lambda: translate(module))
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
    if not result.warnings:  # a cache hit reports no warnings: only warning-free builds are kept
        write_entry(folder, key, result.module)
    return Artifact(result.module, result.warnings, source)
