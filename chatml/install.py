"""Installing a surface into a run: the runtime values of its globals and modules.

:func:`install` builds the runtime values of a surface (one value per global,
one :class:`~chatml.values.Module` per module) from the registry of
:mod:`chatml.registration`, checks that every name of the surface has an
implementation (:class:`MissingImplementations` lists the missing ones), and
generates the implementation of every *capability* export of the table (effect
kind ``perform``/``spawn`` plus an operation name): a builder that returns
``Perform(op, args)`` / ``Spawn(op, args)`` (:func:`task_builder`).

Installing with the default registry imports :mod:`chatml.stdlib` first, so
its ``@implements`` registrations have run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from chatml.calls import NUMBER_WORDS
from chatml.registration import IMPLEMENTATIONS
from chatml.surfaces import scheme_of
from chatml.typecheck.types import TFun
from chatml.values import ChatMLFailure, Module, Perform, Spawn, Value, Variant, builtin


class MissingImplementations(Exception):
    """A surface names builtins that have no registered implementation."""

    def __init__(self, surface: str, names: list[str]) -> None:
        self.names = names
        super().__init__(f"surface '{surface}' has no implementation for: " + ", ".join(names))


def _effect_of(entry: Any) -> tuple[str, str, str | None] | None:
    """``(kind, operation, adapter)`` of a capability export, or ``None`` for a plain builtin."""
    effect = getattr(entry, "effect", None)
    if effect is None:
        return None
    if isinstance(effect, tuple):
        adapter = effect[2] if len(effect) > 2 else None
        return str(effect[0]), str(effect[1]), (None if adapter is None else str(adapter))
    kind = getattr(effect, "kind", None)
    kind = getattr(kind, "value", kind)
    return str(kind), str(effect.operation), getattr(effect, "adapter", None)


def _entry_arity(entry: Any, qualified: str) -> int | None:
    """The parameter count of an export's scheme (``None`` when unknown)."""
    arity = getattr(entry, "arity", None)
    if isinstance(arity, int):
        return arity
    try:
        scheme = scheme_of(qualified)
    except (KeyError, ValueError):
        return None
    return len(scheme.params) if isinstance(scheme, TFun) else None


def _json_string(text: str) -> Value:
    return Variant("String", (text,))


def _json_object(*pairs: tuple[str, Value]) -> Value:
    return Variant("Object", ([{"key": key, "value": value} for key, value in pairs],))


def input_text_message(role: str, text: str) -> Value:
    """The *input-text message* json value of stdlib spec 6.1."""
    part = _json_object(("type", _json_string("input_text")), ("text", _json_string(text)))
    return _json_object(("type", _json_string("message")), ("role", _json_string(role)),
                        ("content", Variant("Array", ([part],))))


def _adapt(adapter: str, qualified: str, operation: str, args: tuple[Value, ...]
           ) -> tuple[str, tuple[Value, ...]]:
    """Apply a capability export's argument adapter (``chatml.surfaces.model.Effect``)."""
    if adapter == "replace_or_append":
        target, item = args
        if isinstance(target, Variant) and target.tag == "None" and not target.args:
            return "Turn.append_message", (item,)
        if isinstance(target, Variant) and target.tag == "Some" and len(target.args) == 1:
            if not isinstance(target.args[0], str):
                raise ChatMLFailure(f"{qualified}.some: expected a string argument")
            return operation, (target.args[0], item)
        raise ChatMLFailure(f"{qualified}: expected `None or `Some(string)")
    if adapter == "append_notice":
        (text,) = args
        if not isinstance(text, str):
            raise ChatMLFailure(f"{qualified}: expected a string argument")
        return operation, ({"id": "system:" + text, "value": input_text_message("system", text)},)
    if adapter == "text_payload":
        recipe, text = args
        if not isinstance(recipe, str) or not isinstance(text, str):
            raise ChatMLFailure(f"{qualified}: expected a string argument")
        return operation, (recipe, _json_string(text))
    raise ChatMLFailure(f"{qualified}: unknown argument adapter '{adapter}'")


def task_builder(qualified_name: str, kind: str, operation: str,
                 arity: int | None = None, adapter: str | None = None) -> Callable[..., Value]:
    """The implementation of a capability export: it only builds a task node.

    ``adapter`` names the argument transformation of the table's ``Effect``
    (``replace_or_append``, ``append_notice``, ``text_payload``).
    """
    node = Spawn if kind == "spawn" else Perform
    short = qualified_name.rsplit(".", 1)[-1]

    @builtin(qualified_name)
    def build(*args: Value) -> Value:
        if arity is not None and len(args) != arity:
            words = NUMBER_WORDS.get(arity, f"exactly {arity} arguments")
            raise ChatMLFailure(f"{short}: expected {words}")
        if adapter is None:
            return node(operation, args)
        op, arguments = _adapt(adapter, qualified_name, operation, args)
        return node(op, arguments)

    build.__name__ = build.__qualname__ = qualified_name.replace(".", "_")
    return build


def _names(items: Any) -> list[tuple[str, Any]]:
    if isinstance(items, Mapping):
        return list(items.items())
    result = []
    for item in items:
        if isinstance(item, str):
            result.append((item, None))
        else:
            result.append((item.name, item))
    return result


def _module_exports(module: Any) -> Any:
    for attribute in ("exports", "members", "entries"):
        if hasattr(module, attribute):
            return getattr(module, attribute)
    return module


def install(surface: Any, registry: Mapping[str, Value] | None = None) -> dict[str, Value]:
    """The runtime values of ``surface``: ``{global name: value, module name: Module}``.

    ``surface`` is a surface of :mod:`chatml.surfaces` (anything with
    ``globals`` and ``modules``: mappings or sequences of named entries, an
    entry's ``effect`` marking a capability export). ``registry`` defaults to
    :data:`IMPLEMENTATIONS` after importing the standard library.
    """
    if registry is None:
        load_standard_library()
        registry = IMPLEMENTATIONS
    values: dict[str, Value] = {}
    missing: list[str] = []

    def resolve(qualified: str, entry: Any) -> Value:
        effect = _effect_of(entry)
        if qualified in registry:
            return registry[qualified]
        if effect is not None:
            return task_builder(qualified, effect[0], effect[1], _entry_arity(entry, qualified),
                                effect[2])
        missing.append(qualified)
        return None

    for name, entry in _names(surface.globals):
        values[name] = resolve(name, entry)
    for module_name, module in _names(surface.modules):
        exports = {}
        for export, entry in _names(_module_exports(module)):
            exports[export] = resolve(f"{module_name}.{export}", entry)
        values[module_name] = Module(module_name, exports)
    if missing:
        raise MissingImplementations(getattr(surface, "name", "?"), missing)
    return values


def load_standard_library() -> None:
    """Import the standard library so its ``@implements`` registrations run."""
    import chatml.stdlib  # noqa: F401
