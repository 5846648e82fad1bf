"""The builtin surfaces of ChatML: ONE table for the typechecker and the runtime.

Public API::

    SURFACE_NAMES                      the surfaces, in a stable order
    get_surface(name) -> Surface       globals / modules / aliases of a surface
    scheme_of("String.length") -> Type the parsed type scheme of an export (cached)
    alias_type("json") -> Type         a builtin type alias (shared object)
    module_type("String") -> Type      a builtin module as the checker sees it: the
                                       closed record of its exports' schemes
    all_exports()                      every (qualified name, Export) of every surface
    SCRIPT_KIND_SURFACE                the surface a ChatMD ``<script kind>`` is checked with

The rows live in :mod:`chatml.surfaces.core`, :mod:`chatml.surfaces.moderator`
and :mod:`chatml.surfaces.shell` (data only, see :mod:`chatml.surfaces.model`
for the row types). Runtime implementations are keyed by the same qualified
names (``"print"``, ``"String.length"``); an export with an
:class:`~chatml.surfaces.model.Effect` builds a ``Perform``/``Spawn`` task
node and can be generated from its row.
"""

from __future__ import annotations

from chatml.surfaces.model import (
    PERFORM,
    SPAWN,
    AliasSpec,
    Effect,
    Export,
    ModuleSpec,
    Surface,
)
from chatml.surfaces.schemes import AliasLookup, SchemeSyntaxError, parse_scheme
from chatml.typecheck.types import ROW_EMPTY, ModuleFlavor, TRecord, Type, make_row

__all__ = [
    "PERFORM",
    "SCRIPT_KIND_SURFACE",
    "SPAWN",
    "SURFACE_NAMES",
    "AliasSpec",
    "Effect",
    "Export",
    "ModuleSpec",
    "SchemeSyntaxError",
    "Surface",
    "alias_type",
    "all_exports",
    "get_surface",
    "module_type",
    "scheme_of",
]

SURFACE_NAMES: tuple[str, ...] = (
    "core",
    "moderator",
    "ui_moderator",
    "shell_matcher",
    "shell_reviewer",
    "shell_before_interceptor",
    "shell_after_interceptor",
    "shell_effect_analyzer",
    "shell_audit_filter",
)

#: The surface a ChatMD ``<script kind="...">`` is typechecked against.
SCRIPT_KIND_SURFACE: dict[str, str] = {
    "moderator": "moderator",
    "shell_matcher": "shell_matcher",
    "shell_reviewer": "shell_reviewer",
    "shell_before_interceptor": "shell_before_interceptor",
    "shell_after_interceptor": "shell_after_interceptor",
    "shell_effect_analyzer": "shell_effect_analyzer",
    "shell_audit_filter": "shell_audit_filter",
}

_surfaces: dict[str, Surface] | None = None
_exports: dict[str, Export] | None = None
_modules: dict[str, ModuleSpec] | None = None
_alias_lookup: AliasLookup | None = None
_schemes: dict[str, Type] = {}
_module_types: dict[str, Type] = {}


def _load() -> dict[str, Surface]:
    global _surfaces, _exports, _modules, _alias_lookup
    if _surfaces is None:
        from chatml.surfaces import core, moderator, shell

        table = (core.CORE, moderator.MODERATOR, moderator.UI_MODERATOR, shell.SHELL_MATCHER,
                 shell.SHELL_REVIEWER, shell.SHELL_BEFORE_INTERCEPTOR,
                 shell.SHELL_AFTER_INTERCEPTOR, shell.SHELL_EFFECT_ANALYZER,
                 shell.SHELL_AUDIT_FILTER)
        surfaces = {s.name: s for s in table}
        exports: dict[str, Export] = {}
        modules: dict[str, ModuleSpec] = {}
        aliases: dict[str, str] = {}
        for surface in table:
            for qualified, export in surface.qualified_exports():
                exports.setdefault(qualified, export)
            for module in surface.modules:
                modules.setdefault(module.name, module)
            for alias in surface.aliases:
                aliases.setdefault(alias.name, alias.definition)
        _exports, _modules = exports, modules
        _alias_lookup = AliasLookup(aliases)
        _surfaces = surfaces
    return _surfaces


def get_surface(name: str) -> Surface:
    """The surface called ``name`` (one of :data:`SURFACE_NAMES`); KeyError otherwise."""
    surfaces = _load()
    if name not in surfaces:
        raise KeyError(f"unknown ChatML surface {name!r}; expected one of "
                       + ", ".join(SURFACE_NAMES))
    return surfaces[name]


def all_exports() -> dict[str, Export]:
    """Every export of every surface by qualified name (``print``, ``Log.info``)."""
    _load()
    assert _exports is not None
    return dict(_exports)


def scheme_of(qualified_name: str) -> Type:
    """The type scheme of the export ``qualified_name``, parsed once and shared.

    Quantified variables are generic (:data:`chatml.typecheck.types.GENERIC`); instantiate
    before unifying.
    """
    cached = _schemes.get(qualified_name)
    if cached is not None:
        return cached
    _load()
    assert _exports is not None and _alias_lookup is not None
    export = _exports.get(qualified_name)
    if export is None:
        raise KeyError(f"no builtin named {qualified_name!r}")
    parsed = parse_scheme(export.scheme, _alias_lookup)
    _schemes[qualified_name] = parsed
    return parsed


def alias_type(name: str) -> Type:
    """The builtin alias ``name`` (``json``, ``item``, ``shell_context``...)."""
    _load()
    assert _alias_lookup is not None
    return _alias_lookup(name)


def module_type(name: str) -> Type:
    """The builtin module ``name`` as a closed record of its exports' schemes."""
    cached = _module_types.get(name)
    if cached is not None:
        return cached
    _load()
    assert _modules is not None
    module = _modules[name]
    fields = {export.name: scheme_of(f"{name}.{export.name}") for export in module.exports}
    record = TRecord(make_row(fields, ROW_EMPTY), ModuleFlavor(name))
    _module_types[name] = record
    return record
