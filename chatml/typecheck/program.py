"""Typechecking a whole program against a builtin surface: :func:`typecheck_program`.

The result, :class:`TypeResult`, is what later phases read:

* ``bindings`` -- the top-level ``let``/``let rec``/``module`` bindings in order
  (``val_lines()`` renders them as ``val NAME : TYPE``);
* ``diagnostics`` -- every type error (phase ``type``), in source order;
* ``binder_types`` -- the inferred type at every binder (let names, lambda
  parameters, ``let rec`` names, pattern variables, module names), keyed by the
  binder's name span; types may hold generic variables (``level == GENERIC``);
* ``field_access`` -- for every ``e.l``, whether ``e`` is a ``"record"``, a
  ``"module"`` or statically ``"either"`` (a polymorphic helper); copy-update
  bases and record patterns are always plain records (DECISIONS 6a);
* ``top_level`` -- the final type of every name the program defines at top level.

Checking runs on a helper thread with a large stack (and a raised recursion
limit) so that deeply nested programs are checked rather than crash the
interpreter; what is nested deeper still gets a ``chatml.too_deep`` diagnostic.
"""

from __future__ import annotations

import chatml.typecheck.bindings
import chatml.typecheck.expressions
import chatml.typecheck.patterns
import chatml.typecheck.records
import chatml.typecheck.type_exprs  # noqa: F401  (registers typing rules)
from chatcommon.allocation import gc_paused
from chatcommon.diagnostics import Diagnostic
from chatcommon.sources import Span
from chatml import ast
from chatml.depth import run_deep
from chatml.surfaces import Surface, alias_type, get_surface, module_type, scheme_of
from chatml.typecheck.checker import Checker
from chatml.typecheck.environment import Entry, entry_type
from chatml.typecheck.schemes import Scheme
from chatml.typecheck.statements import check_statements
from chatml.typecheck.types import (
    RECORD,
    ModuleFlavor,
    TError,
    TVar,
    Type,
    contains_generic,
    resolve,
    show_signature,
)


class Binding:
    """A top-level binding: its name, its type (a scheme's body for polymorphic ones)."""

    __slots__ = ("name", "type", "span", "is_module")

    def __init__(self, name: str, type: Type, span: Span | None, is_module: bool = False) -> None:
        self.name = name
        self.type = type
        self.span = span
        self.is_module = is_module

    def __repr__(self) -> str:
        return f"Binding({self.name!r}, {self.signature!r})"

    @property
    def signature(self) -> str:
        return show_signature(self.type)

    def line(self, signature: str | None = None) -> str:
        """``val NAME : TYPE`` (``signature``: this binding's, when already printed)."""
        return f"val {self.name} : {self.signature if signature is None else signature}"


class TypeResult:
    """Everything the typechecker found (see the module docstring).

    ``binder_types`` and ``field_access`` are given as (span, value) pairs in
    the order they were found and keyed by span on first use (a later pair
    for a span wins): hashing every span is work a caller that only wants the
    diagnostics never pays.
    """

    __slots__ = ("bindings", "diagnostics", "_binder_pairs", "_binder_types",
                 "_field_pairs", "_field_access", "top_level", "surface")

    def __init__(self, bindings: tuple[Binding, ...], diagnostics: tuple[Diagnostic, ...],
                 binders: list[tuple[Span, Type]], field_accesses: list[tuple[Span, str]],
                 top_level: dict[str, Entry], surface: str) -> None:
        self.bindings = bindings
        self.diagnostics = diagnostics
        self._binder_pairs = binders
        self._binder_types: dict[Span, Type] | None = None
        self._field_pairs = field_accesses
        self._field_access: dict[Span, str] | None = None
        self.top_level = top_level
        self.surface = surface

    @property
    def binder_types(self) -> dict[Span, Type]:
        if self._binder_types is None:
            self._binder_types = dict(self._binder_pairs)
        return self._binder_types

    @property
    def field_access(self) -> dict[Span, str]:
        if self._field_access is None:
            self._field_access = dict(self._field_pairs)
        return self._field_access

    @property
    def ok(self) -> bool:
        return not any(d.is_error for d in self.diagnostics)

    def val_lines(self) -> list[str]:
        return [binding.line() for binding in self.bindings]

    def type_of(self, name: str) -> Type | None:
        """The final type of the top-level name ``name`` (None when not defined)."""
        entry = self.top_level.get(name)
        return None if entry is None else entry_type(entry)


SurfaceEntries = tuple[dict[str, Entry], dict[str, Type]]

_installed: dict[int, tuple[Surface, dict[str, Entry], dict[str, Type]]] = {}


def install_surface(ck: Checker, surface: Surface, entries: SurfaceEntries | None = None) -> None:
    """Put the surface's globals, modules and aliases into the checker's environments.

    The entries of a builtin surface are built once per process and shared by
    every run (their compiled instantiation templates included). ``entries``
    (values, type names) replaces them for a surface with host values.
    """
    if entries is not None:
        ck.env.values.update(entries[0])
        ck.type_names.update(entries[1])
        return
    cached = _installed.get(id(surface))
    if cached is None or cached[0] is not surface:
        values: dict[str, Entry] = {}
        for export in surface.globals:
            scheme = scheme_of(export.name)
            values[export.name] = Scheme(scheme) if contains_generic(scheme) else scheme
        for module in surface.modules:
            record = module_type(module.name)
            values[module.name] = Scheme(record) if contains_generic(record) else record
        type_names = {alias.name: alias_type(alias.name) for alias in surface.aliases}
        cached = _installed[id(surface)] = (surface, values, type_names)
    ck.env.values.update(cached[1])
    ck.type_names.update(cached[2])


def typecheck_program(program: ast.Program, surface: str | Surface = "core", *,
                      entries: SurfaceEntries | None = None) -> TypeResult:
    """Typecheck ``program`` against ``surface`` (a name of ``SURFACE_NAMES`` or a Surface).

    ``entries`` gives the checker's initial environment for a surface that is
    not one of the builtin ones (a host surface): the value entries (types or
    :class:`~chatml.typecheck.schemes.Scheme` s) and the type names.
    """
    resolved_surface = get_surface(surface) if isinstance(surface, str) else surface

    def check() -> TypeResult:
        with gc_paused():
            return _check(program, resolved_surface, entries)

    return run_deep(check)


def _check(program: ast.Program, resolved_surface: Surface,
           entries: SurfaceEntries | None = None) -> TypeResult:
    ck = Checker()
    install_surface(ck, resolved_surface, entries)
    builtins = set(ck.env.values)
    check_statements(ck, program.statements)
    bindings: list[Binding] = []
    for name, entry, span in ck.top_bindings:
        body = entry.body if type(entry) is Scheme else entry  # entry_type, inlined
        resolved = resolve(body) if type(body) is TVar and body.link is not None else body
        if type(resolved) is not TError:
            bindings.append(Binding(name, body, span, name[:1].isupper()))  # (is_module)
    diagnostics = tuple(sorted(ck.diagnostics, key=lambda d: (d.file, d.line, d.column)))
    bound_here = {name for name, _, _ in ck.top_bindings}
    top_level = dict(ck.env.values)  # then without the builtins the program did not rebind
    for name in builtins - bound_here:
        del top_level[name]
    field_access: list[tuple[Span, str]] = []
    for span, flavor in ck.field_flavors:  # the base's flavor, named as it is now
        if type(flavor) is TVar and flavor.link is not None:
            flavor = resolve(flavor)
        if flavor is RECORD:
            field_access.append((span, "record"))
        elif type(flavor) is ModuleFlavor:
            field_access.append((span, "module"))
        else:
            field_access.append((span, "either"))
    return TypeResult(tuple(bindings), diagnostics, ck.binders, field_access, top_level,
                      resolved_surface.name)
