"""Loading bytecode: translate, compile the generated Python, bind the globals.

:func:`load` returns a :class:`LoadedProgram` whose ``main`` runs the top
level. Loaded programs are registered (weakly, by the generated file name)
so that :mod:`chatml.vm.errors` can map a Python traceback back to ChatML
positions; the registration lives as long as any of the program's closures.

A program nested deeper than generated Python may nest (CPython's 100
indentation levels, its static-block and compiler limits) is not refused: it
is loaded into the reference interpreter instead (the *fallback*, whole
module; :func:`set_fallback`, installed by :mod:`chatml.vm.reference` when
:mod:`chatml.vm` is imported), which runs the same bytecode with the same
results, errors, positions, steps and memory charges.
"""

from __future__ import annotations

import itertools
import warnings
import weakref
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from chatcommon.diagnostics import Diagnostic, DiagnosticError
from chatcommon.sources import SourceFile
from chatml.bytecode.code import CompiledModule
from chatml.depth import retry_deep, too_deep
from chatml.values import Value, Variant
from chatml.vm.intrinsics import intrinsic_slots
from chatml.vm.runtime import base_namespace
from chatml.vm.translate import MAX_INDENT, TooDeepToTranslate, Translation, translate

_COUNTER = itertools.count(1)


class ProgramInfo:
    """What error mapping needs to know about one loaded program."""

    __slots__ = ("module", "line_map", "source", "convert", "__weakref__")

    def __init__(self, module: CompiledModule, line_map: tuple[tuple[int, int], ...],
                 source: SourceFile | None) -> None:
        self.module = module
        self.line_map = line_map
        self.source = source
        self.convert: Callable[[BaseException, str], Any] | None = None
        """How a failure of this program becomes a runtime error, when not by its traceback
        (the reference interpreter's frame records; see :mod:`chatml.vm.errors`)."""


PROGRAMS: weakref.WeakValueDictionary[str, ProgramInfo] = weakref.WeakValueDictionary()
"""Generated file name -> program info, while the program is alive."""


@attrs.define(eq=False)
class LoadedProgram:
    """A program ready to run: its namespace holds one Python global per global slot."""

    module: CompiledModule
    namespace: dict[str, Any]
    main: Callable[[], Value]
    info: ProgramInfo
    python_source: str
    interpreted: bool = False
    """True when the program runs on the reference interpreter (too deep to translate):
    ``python_source`` is then empty and ``namespace`` is filled when the top level ends."""

    def top_level(self) -> dict[str, Value]:
        """Top-level bindings by name (the last binding of each name; builtins excluded)."""
        builtin = {slot for slot, _ in self.module.builtin_slots}
        result: dict[str, Value] = {}
        for slot, name in enumerate(self.module.global_names):
            if slot in builtin or "." in name:
                continue
            key = f"g{slot}"
            if key in self.namespace:
                result[name] = self.namespace[key]
        return result


def bind_builtins(module: CompiledModule, builtins: Mapping[str, Value]) -> dict[int, Value]:
    """Global slot -> the builtin value it holds; ``DiagnosticError`` when one is missing."""

    def lookup(name: str) -> Value:
        if name in builtins:
            return builtins[name]
        module_name, _, export = name.partition(".")
        container = builtins.get(module_name) if export else None
        if isinstance(container, dict) and export in container:
            return container[export]
        raise KeyError(name)

    bound: dict[int, Value] = {}
    missing = []
    for slot, name in module.builtin_slots:
        try:
            bound[slot] = lookup(name)
        except KeyError:
            missing.append(name)
    if missing:
        raise DiagnosticError(Diagnostic.for_file(
            module.source_name, "chatml.surface_mismatch",
            "the runtime surface lacks builtins the script was compiled against: "
            + ", ".join(sorted(missing)[:10]), phase="runtime"))
    return bound


#: Each nested closure is a nested Python ``def`` (one more indentation level), and
#: CPython's tokenizer allows 100 levels: deeper closures cannot be translated.
MAX_CLOSURE_NESTING = 95

_FALLBACK_NOTE = " (`chatml run` runs it on the reference interpreter)"


class Untranslatable(Exception):
    """A valid module nested too deeply for generated Python; ``diagnostic`` says where."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


Fallback = Callable[[CompiledModule, Mapping[str, Value], SourceFile | None], LoadedProgram]
_FALLBACK: list[Fallback] = []


def set_fallback(fallback: Fallback) -> None:
    """Install how an untranslatable module is loaded (the reference interpreter does)."""
    _FALLBACK[:] = [fallback]


def _closure_nesting(module: CompiledModule) -> None:
    """:class:`Untranslatable` at the first closure nested deeper than Python allows
    (cheap, early)."""
    codes = module.codes
    for code in codes:
        depth, parent = 0, code.parent
        while 0 <= parent < len(codes) and depth <= MAX_CLOSURE_NESTING:
            depth, parent = depth + 1, codes[parent].parent
        if depth > MAX_CLOSURE_NESTING and code.positions:
            line, column, end_line, end_column = code.positions[0]
            raise Untranslatable(Diagnostic(
                code="chatml.too_deep", file=module.source_name, line=line, column=column,
                end_line=end_line, end_column=end_column, phase="compile",
                message=f"functions are nested more than {MAX_CLOSURE_NESTING} deep: "
                        "too deep to translate to Python" + _FALLBACK_NOTE,
                hint="define the inner functions at top level (or as separate bindings)"))


def _too_deep_at(module: CompiledModule, where: tuple[int, int]) -> Diagnostic:
    """``chatml.too_deep`` at the instruction whose translation nested too deeply."""
    index, pc = where
    positions = module.codes[index].positions
    if not 0 <= pc < len(positions):
        return too_deep(module.source_name, "translate to Python", "compile")
    line, column, end_line, end_column = positions[pc]
    return Diagnostic(
        code="chatml.too_deep", file=module.source_name, line=line, column=column,
        end_line=end_line, end_column=end_column, phase="compile",
        message="program is nested too deeply to translate to Python: blocks nest more than "
                f"{MAX_INDENT} deep here" + _FALLBACK_NOTE,
        hint="split deeply nested expressions into separate bindings")


def _translation(module: CompiledModule, bound: Mapping[int, Value], range_analysis: bool,
                 batch_charges: bool) -> Translation:
    """The generated Python of ``module``; :class:`Untranslatable` when it nests too deeply."""
    intrinsics = intrinsic_slots(module.builtin_slots, bound)
    _closure_nesting(module)
    try:
        return retry_deep(lambda: translate(module, range_analysis=range_analysis,
                                            intrinsics=intrinsics, batch_charges=batch_charges))
    except RecursionError:
        raise Untranslatable(too_deep(module.source_name, "translate to Python",
                                      "compile")) from None
    except TooDeepToTranslate as error:
        raise Untranslatable(_too_deep_at(module, error.where)) from None


def _compiled(module: CompiledModule, source: str, filename: str) -> Any:
    """``compile`` of the generated source; :class:`Untranslatable` past CPython's limits
    (static blocks, the compiler's own recursion)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)  # e.g. `5['x']` in hand-made bytecode
            return retry_deep(lambda: compile(source, filename, "exec"))
    except (SyntaxError, RecursionError, MemoryError) as error:
        raise Untranslatable(Diagnostic.for_file(
            module.source_name, "chatml.too_deep",
            f"program is nested too deeply to translate to Python ({type(error).__name__})"
            + _FALLBACK_NOTE, phase="compile",
            hint="split deeply nested expressions into separate bindings")) from None


def translation_for(module: CompiledModule, builtins: Mapping[str, Value]) -> Translation:
    """The generated Python :func:`load` would run for ``module`` with these builtins (what
    ``chatml dis --python`` shows). ``DiagnosticError`` (``chatml.too_deep``) for a module
    nested too deeply to translate (which :func:`load` runs on the reference interpreter)."""
    try:
        return _translation(module, bind_builtins(module, builtins), True, True)
    except Untranslatable as error:
        raise DiagnosticError(error.diagnostic) from None


def load(module: CompiledModule, builtins: Mapping[str, Value],
         source: SourceFile | None = None, *, range_analysis: bool = True,
         batch_charges: bool = True) -> LoadedProgram:
    """Prepare ``module`` to run with the given builtin values (by surface name).

    Raises ``DiagnosticError`` when a builtin the module needs is missing and
    ``BytecodeFormatError`` for malformed bytecode. A module nested too deeply
    to translate (see :class:`Untranslatable`) is loaded into the reference
    interpreter (``interpreted`` is then true). ``range_analysis=False``
    translates without leaving out provably redundant range checks, and
    ``batch_charges=False`` charges every allocation on its own (see
    :func:`~chatml.vm.translate.translate`; both for testing).
    """
    bound = bind_builtins(module, builtins)
    filename = f"<chatml {module.source_name} #{next(_COUNTER)}>"
    try:
        translation = _translation(module, bound, range_analysis, batch_charges)
        code = _compiled(module, translation.source, filename)
    except Untranslatable as error:
        if not _FALLBACK:
            raise DiagnosticError(error.diagnostic) from None
        return _FALLBACK[0](module, builtins, source)
    namespace = base_namespace()
    for name, value in translation.constants.items():
        if isinstance(value, tuple) and value[:1] == ("variant",):
            namespace[name] = Variant(value[1], ())
        else:
            namespace[name] = value
    for slot, value in bound.items():
        namespace[f"g{slot}"] = value
    info = ProgramInfo(module, translation.line_map, source)
    namespace["__chatml_info__"] = info
    namespace["__chatml_source__"] = translation.source
    PROGRAMS[filename] = info
    exec(code, namespace)
    return LoadedProgram(module, namespace, namespace["_c0"], info, translation.source)
