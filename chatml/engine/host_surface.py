"""A builtin surface extended with host values: what the typechecker and the runtime see.

A :class:`HostSurface` starts from one of the builtin surfaces
(:mod:`chatml.surfaces`) and adds host *globals* and host *modules*, each
value with its ChatML type. It produces

* the :class:`~chatml.surfaces.Surface` row table for a compile (builtin rows
  plus host rows, so compiled bytecode records every name it was checked
  against), together with the checker's entries for it (builtin schemes from
  the table, host types as given) -- see :meth:`checking`;
* the runtime values (:meth:`runtime_values`): the installed builtins of the
  base surface plus the host values.

Host names may not shadow builtin names (an error at registration). A type is
given either as a scheme string in the builtin type language
(``"string -> int"``, ``"'a array -> 'a"``, ``"json -> bool"``) or as a
checker type (the REPL hands over the inferred types of earlier inputs).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import attrs

from chatml.install import install
from chatml.surfaces import (
    AliasSpec,
    Export,
    ModuleSpec,
    Surface,
    alias_type,
    get_surface,
    module_type,
    scheme_of,
)
from chatml.surfaces.schemes import SchemeSyntaxError, parse_scheme
from chatml.typecheck.schemes import Scheme
from chatml.typecheck.types import (
    ROW_EMPTY,
    ModuleFlavor,
    TRecord,
    Type,
    contains_generic,
    make_row,
)
from chatml.values import Module, Value

Entry = Type | Scheme
"""What the checker binds a name to: a type, or a scheme with generic variables."""


_VALUE_NAME = re.compile(r"[a-z_][A-Za-z0-9_']*")
_MODULE_NAME = re.compile(r"[A-Z][A-Za-z0-9_']*")


class HostRegistrationError(ValueError):
    """A host value that cannot be added (a name clash, an unparsable type)."""


@attrs.frozen
class HostValue:
    """One host value: its checker entry, its runtime value and how its type reads."""

    entry: Entry
    value: Value
    type_text: str


class _BuiltinAliases:
    """Alias lookup for host schemes: the builtin aliases (``json``...), shared with the table."""

    def __call__(self, name: str) -> Type:
        try:
            return alias_type(name)
        except (KeyError, SchemeSyntaxError):
            raise SchemeSyntaxError(f"unknown type name {name!r}") from None


def parse_type(text: str) -> Entry:
    """A scheme string as a checker entry; :class:`HostRegistrationError` when it does not parse."""
    try:
        parsed = parse_scheme(text, _BuiltinAliases())
    except SchemeSyntaxError as error:
        raise HostRegistrationError(f"cannot read the ChatML type {text!r}: {error}") from None
    return Scheme(parsed) if contains_generic(parsed) else parsed


def entry_body(entry: Entry) -> Type:
    return entry.body if isinstance(entry, Scheme) else entry


class HostSurface:
    """A builtin surface plus host globals and modules."""

    def __init__(self, base: str = "core") -> None:
        self.base: Surface = get_surface(base)
        self.globals: dict[str, HostValue] = {}
        self.modules: dict[str, dict[str, HostValue]] = {}
        self._builtin_values: dict[str, Value] | None = None
        self._builtin_names = set(self.base.global_names) | set(self.base.module_names)

    @property
    def name(self) -> str:
        return self.base.name if not (self.globals or self.modules) else f"{self.base.name}+host"

    def _check_free(self, name: str, pattern: re.Pattern[str], what: str) -> None:
        if not pattern.fullmatch(name):
            raise HostRegistrationError(f"{name!r} is not a valid ChatML {what} name")
        if name in self._builtin_names:
            raise HostRegistrationError(
                f"the host value {name!r} would shadow the builtin {name!r} of the "
                f"{self.base.name} surface")

    def add_global(self, name: str, host: HostValue, *, shadow: bool = False) -> None:
        """Add a global; with ``shadow`` it may hide a builtin of the same name (the REPL's
        definitions do, as a ``let`` does in a script)."""
        if not shadow:
            self._check_free(name, _VALUE_NAME, "value")
        self.modules.pop(name, None)
        self.globals[name] = host

    def add_module(self, name: str, exports: Mapping[str, HostValue]) -> None:
        if not name[:1].isupper():
            raise HostRegistrationError(f"module names start with a capital letter: {name!r}")
        self._check_free(name, _MODULE_NAME, "module")
        for export in exports:
            if not _VALUE_NAME.fullmatch(export):
                raise HostRegistrationError(f"{name}.{export}: {export!r} is not a valid ChatML "
                                            "value name")
        self.globals.pop(name, None)
        self.modules[name] = dict(exports)

    def copy(self) -> HostSurface:
        clone = HostSurface.__new__(HostSurface)
        clone.base = self.base
        clone.globals = dict(self.globals)
        clone.modules = {name: dict(exports) for name, exports in self.modules.items()}
        clone._builtin_values = self._builtin_values
        clone._builtin_names = self._builtin_names
        return clone

    # ----------------------------------------------------------------- the checker's view

    def surface(self) -> Surface:
        """The row table of this surface (host rows carry their type text)."""
        host_globals = tuple(Export(name, host.type_text) for name, host in self.globals.items())
        host_modules = tuple(
            ModuleSpec(name, tuple(Export(export, host.type_text)
                                   for export, host in exports.items()))
            for name, exports in self.modules.items())
        hidden = set(self.globals) | set(self.modules)
        return Surface(self.name,
                       tuple(e for e in self.base.globals if e.name not in hidden) + host_globals,
                       tuple(m for m in self.base.modules if m.name not in hidden) + host_modules,
                       self.base.aliases)

    def checker_entries(self) -> tuple[dict[str, Entry], dict[str, Type]]:
        """The checker's initial value environment and type names for this surface."""
        values: dict[str, Entry] = {}
        for export in self.base.globals:  # host values added later win over these
            scheme = scheme_of(export.name)
            values[export.name] = Scheme(scheme) if contains_generic(scheme) else scheme
        for module in self.base.modules:
            record = module_type(module.name)
            values[module.name] = Scheme(record) if contains_generic(record) else record
        for name, host in self.globals.items():
            values[name] = host.entry
        for name, exports in self.modules.items():
            fields = {export: entry_body(host.entry) for export, host in exports.items()}
            record = TRecord(make_row(fields, ROW_EMPTY), ModuleFlavor(name))
            values[name] = Scheme(record) if contains_generic(record) else record
        type_names = {alias.name: alias_type(alias.name) for alias in self.base.aliases}
        return values, type_names

    @contextmanager
    def checking(self) -> Iterator[Surface]:
        """A surface the typechecker accepts, for the duration of one check.

        The checker installs a surface's entries from the builtin table;
        host entries are handed to its per-surface cache here and removed
        afterwards. (A public hook in ``chatml.typecheck.program`` for
        surfaces with their own entries would make this unnecessary.)
        """
        from chatml.typecheck import program as checker_program

        surface = self.surface()
        values, type_names = self.checker_entries()
        cache: dict[int, Any] = checker_program._installed
        cache[id(surface)] = (surface, values, type_names)
        try:
            yield surface
        finally:
            cache.pop(id(surface), None)

    # ----------------------------------------------------------------- the runtime's view

    def runtime_values(self) -> dict[str, Value]:
        """Name -> runtime value: the base surface's builtins, then the host values."""
        if self._builtin_values is None:
            self._builtin_values = install(self.base)
        values = dict(self._builtin_values)
        for name, host in self.globals.items():
            values[name] = host.value
        for name, exports in self.modules.items():
            values[name] = Module(name, {export: host.value for export, host in exports.items()})
        return values


__all__ = ["AliasSpec", "Entry", "HostRegistrationError", "HostSurface", "HostValue",
           "entry_body", "parse_type"]
