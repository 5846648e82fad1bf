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

from chatml.calls import NUMBER_WORDS
from chatml.registration import IMPLEMENTATIONS
from chatml.surfaces import scheme_of
from chatml.surfaces.model import Export, Surface
from chatml.typecheck.types import TFun
from chatml.values import ChatMLFailure, Module, Perform, Spawn, Value, Variant, builtin


class MissingImplementations(Exception):
    """A surface names builtins that have no registered implementation."""

    def __init__(self, surface: str, names: list[str]) -> None:
        self.names = names
        super().__init__(f"surface '{surface}' has no implementation for: " + ", ".join(names))


def _arity(qualified: str) -> int | None:
    """The parameter count of an export's scheme (``None`` when it has no known scheme)."""
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


def install(surface: Surface, registry: Mapping[str, Value] | None = None) -> dict[str, Value]:
    """The runtime values of ``surface``: ``{global name: value, module name: Module}``.

    An export is its implementation in ``registry`` (default: :data:`IMPLEMENTATIONS`,
    after importing the standard library), or -- for a capability export, one with an
    ``effect`` -- a task builder. A missing implementation is
    :class:`MissingImplementations`, naming every one.
    """
    if registry is None:
        load_standard_library()
        registry = IMPLEMENTATIONS
    missing: list[str] = []

    def resolve(qualified: str, export: Export) -> Value:
        if qualified in registry:
            return registry[qualified]
        effect = export.effect
        if effect is not None:
            return task_builder(qualified, effect.kind, effect.operation, _arity(qualified),
                                effect.adapter)
        missing.append(qualified)
        return None

    values: dict[str, Value] = {export.name: resolve(export.name, export)
                                for export in surface.globals}
    for module in surface.modules:
        values[module.name] = Module(module.name, {
            export.name: resolve(f"{module.name}.{export.name}", export)
            for export in module.exports})
    if missing:
        raise MissingImplementations(surface.name, missing)
    return values


def load_standard_library() -> None:
    """Import the standard library so its ``@implements`` registrations run."""
    import chatml.stdlib  # noqa: F401
