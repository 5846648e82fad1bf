"""The shape of the builtin table: exports, modules, aliases and surfaces (stdlib spec 2).

A :class:`Surface` bundles the global builtins, builtin modules and type
aliases a script is checked against and run with. Everything here is plain,
immutable data: type schemes are strings in the builtin type language
(:mod:`chatml.surfaces.schemes` parses them), and capability exports say which
task node they build (:class:`Effect`), so the typechecker's view and the
runtime's view are generated from the same rows. (Rows are named tuples:
immutable, comparable, and cheap to define -- the table is loaded by every
``chatml check``.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import NamedTuple, TypeVar

PERFORM = "perform"
SPAWN = "spawn"


class Effect(NamedTuple):
    """The task node a capability export builds (stdlib spec 1.2, 7, 10.4).

    ``kind`` is :data:`PERFORM` or :data:`SPAWN`; ``operation`` the operation
    name stored in the node (``"Log.info"``; note ``Turn.append_item`` records
    ``"Turn.append_message"``). ``adapter`` is None when the node's arguments
    are exactly the call's arguments; otherwise it names the one argument
    transformation the runtime applies first:

    * ``"replace_or_append"`` -- ``(`Some(id), item)`` performs
      ``Turn.replace_message [id, item]``, ``(`None, item)`` performs
      ``Turn.append_message [item]`` (``operation`` is the former);
    * ``"append_notice"`` -- ``(text)`` performs ``Turn.append_message`` with
      the item ``{id = "system:" ++ text; value = <system input-text message>}``;
    * ``"text_payload"`` -- ``(recipe, text)`` checks both strings and passes
      ``[recipe, `String(text)]``.
    """

    kind: str
    operation: str
    adapter: str | None = None


class Export(NamedTuple):
    """One builtin value: a global, or a module export (``name`` is then the short name)."""

    name: str
    scheme: str
    effect: Effect | None = None


class ModuleSpec(NamedTuple):
    """A builtin module: its exports in the reference's order."""

    name: str
    exports: tuple[Export, ...]

    def export(self, name: str) -> Export | None:
        for export in self.exports:
            if export.name == name:
                return export
        return None


class AliasSpec(NamedTuple):
    """A builtin type alias, e.g. ``json``; ``definition`` is in the builtin type language."""

    name: str
    definition: str


class Surface(NamedTuple):
    """Globals, modules and aliases installed together (stdlib spec 2.1)."""

    name: str
    globals: tuple[Export, ...]
    modules: tuple[ModuleSpec, ...]
    aliases: tuple[AliasSpec, ...]

    def module(self, name: str) -> ModuleSpec | None:
        for module in self.modules:
            if module.name == name:
                return module
        return None

    def qualified_exports(self) -> Iterator[tuple[str, Export]]:
        """Every value of the surface with its qualified name (``print``, ``String.length``)."""
        for export in self.globals:
            yield export.name, export
        for module in self.modules:
            for export in module.exports:
                yield f"{module.name}.{export.name}", export

    @property
    def global_names(self) -> tuple[str, ...]:
        return tuple(e.name for e in self.globals)

    @property
    def module_names(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.modules)

    @property
    def alias_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.aliases)


T = TypeVar("T")


def _first_of(items: Sequence[T], key: Callable[[T], str]) -> tuple[T, ...]:
    seen: set[str] = set()
    kept = []
    for item in items:
        if key(item) not in seen:
            seen.add(key(item))
            kept.append(item)
    return tuple(kept)


def merge(name: str, *parts: Surface, without_globals: tuple[str, ...] = ()) -> Surface:
    """Left-biased merge: concatenate each list and keep the first entry of every name."""
    globals_ = [g for part in parts for g in part.globals if g.name not in without_globals]
    modules = [m for part in parts for m in part.modules]
    aliases = [a for part in parts for a in part.aliases]
    return Surface(
        name=name,
        globals=_first_of(globals_, lambda e: e.name),
        modules=_first_of(modules, lambda m: m.name),
        aliases=_first_of(aliases, lambda a: a.name),
    )
