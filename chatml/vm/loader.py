"""Loading bytecode: translate, compile the generated Python, bind the globals.

:func:`load` returns a :class:`LoadedProgram` whose ``main`` runs the top
level. Loaded programs are registered (weakly, by the generated file name)
so that :mod:`chatml.vm.errors` can map a Python traceback back to ChatML
positions; the registration lives as long as any of the program's closures.
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

    __slots__ = ("module", "line_map", "source", "__weakref__")

    def __init__(self, module: CompiledModule, line_map: tuple[tuple[int, int], ...],
                 source: SourceFile | None) -> None:
        self.module = module
        self.line_map = line_map
        self.source = source


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
#: CPython's tokenizer allows 100 levels: a deeper program can never be loaded.
MAX_CLOSURE_NESTING = 95


def _check_closure_nesting(module: CompiledModule) -> None:
    """``chatml.too_deep`` at the first closure nested deeper than Python allows (cheap, early)."""
    codes = module.codes
    for code in codes:
        depth, parent = 0, code.parent
        while 0 <= parent < len(codes) and depth <= MAX_CLOSURE_NESTING:
            depth, parent = depth + 1, codes[parent].parent
        if depth > MAX_CLOSURE_NESTING and code.positions:
            line, column, end_line, end_column = code.positions[0]
            raise DiagnosticError(Diagnostic(
                code="chatml.too_deep", file=module.source_name, line=line, column=column,
                end_line=end_line, end_column=end_column, phase="compile",
                message=f"functions are nested more than {MAX_CLOSURE_NESTING} deep: "
                        "too deep to run",
                hint="define the inner functions at top level (or as separate bindings)"))


def _too_deep_at(module: CompiledModule, where: tuple[int, int]) -> Diagnostic:
    """``chatml.too_deep`` at the instruction whose translation nested too deeply."""
    index, pc = where
    positions = module.codes[index].positions
    if not 0 <= pc < len(positions):
        return too_deep(module.source_name, "run", "compile")
    line, column, end_line, end_column = positions[pc]
    return Diagnostic(
        code="chatml.too_deep", file=module.source_name, line=line, column=column,
        end_line=end_line, end_column=end_column, phase="compile",
        message="program is nested too deeply to run: blocks nest more than "
                f"{MAX_INDENT} deep here",
        hint="split deeply nested expressions into separate bindings")


def _translation(module: CompiledModule, bound: Mapping[int, Value], range_analysis: bool,
                 batch_charges: bool) -> Translation:
    intrinsics = intrinsic_slots(module.builtin_slots, bound)
    _check_closure_nesting(module)
    try:
        return retry_deep(lambda: translate(module, range_analysis=range_analysis,
                                            intrinsics=intrinsics, batch_charges=batch_charges))
    except RecursionError:
        raise DiagnosticError(too_deep(module.source_name, "run", "compile")) from None
    except TooDeepToTranslate as error:
        raise DiagnosticError(_too_deep_at(module, error.where)) from None


def translation_for(module: CompiledModule, builtins: Mapping[str, Value]) -> Translation:
    """The generated Python :func:`load` would run for ``module`` with these builtins (what
    ``chatml dis --python`` shows); the same errors as :func:`load`."""
    return _translation(module, bind_builtins(module, builtins), True, True)


def load(module: CompiledModule, builtins: Mapping[str, Value],
         source: SourceFile | None = None, *, range_analysis: bool = True,
         batch_charges: bool = True) -> LoadedProgram:
    """Prepare ``module`` to run with the given builtin values (by surface name).

    Raises ``DiagnosticError`` when a builtin the module needs is missing or
    the program is too deeply nested for the host, and
    ``BytecodeFormatError`` for malformed bytecode. ``range_analysis=False``
    translates without leaving out provably redundant range checks, and
    ``batch_charges=False`` charges every allocation on its own (see
    :func:`~chatml.vm.translate.translate`; both for testing).
    """
    bound = bind_builtins(module, builtins)
    translation = _translation(module, bound, range_analysis, batch_charges)
    namespace = base_namespace()
    for name, value in translation.constants.items():
        if isinstance(value, tuple) and value[:1] == ("variant",):
            namespace[name] = Variant(value[1], ())
        else:
            namespace[name] = value
    for slot, value in bound.items():
        namespace[f"g{slot}"] = value
    filename = f"<chatml {module.source_name} #{next(_COUNTER)}>"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)  # e.g. `5['x']` in hand-made bytecode
            code = retry_deep(lambda: compile(translation.source, filename, "exec"))
    except (SyntaxError, RecursionError, MemoryError) as error:
        raise DiagnosticError(Diagnostic.for_file(
            module.source_name, "chatml.too_deep",
            f"program is nested too deeply to run ({type(error).__name__})",
            phase="compile",
            hint="split deeply nested expressions into separate bindings")) from None
    info = ProgramInfo(module, translation.line_map, source)
    namespace["__chatml_info__"] = info
    namespace["__chatml_source__"] = translation.source
    PROGRAMS[filename] = info
    exec(code, namespace)
    return LoadedProgram(module, namespace, namespace["_c0"], info, translation.source)
