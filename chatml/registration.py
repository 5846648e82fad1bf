"""The registry of builtin implementations: qualified name -> Python function.

Every global and module export of a surface is implemented by a Python
function registered under its qualified name (``"print"``, ``"String.length"``)::

    @implements("String.length")
    def string_length(s: str) -> int: ...

Implementations take the ChatML arguments as positional parameters. A
fixed-arity implementation gets the spec's arity message for free when a host
calls it with the wrong count (``length: expected exactly one argument``, short
name); one declared with ``*args`` checks its own.

``implements(name, inline=KIND)`` also marks the implementation as one the VM
may inline (``chatml_inline = KIND``, see :mod:`chatml.vm.intrinsics`): the
loader inlines a builtin slot only when the value bound to it carries the
mark, so a host's own ``to_string`` is always called.

This module is a leaf (it imports only :mod:`chatml.values`): the standard
library registers itself here, and :mod:`chatml.install` builds a surface's
runtime values from the registry.
"""

from __future__ import annotations

from collections.abc import Callable

from chatml.values import Value, builtin, is_builtin

IMPLEMENTATIONS: dict[str, Value] = {}
"""The default registry: qualified name -> implementation (filled by ``@implements``)."""


def register(name: str, value: Value, registry: dict[str, Value] | None = None) -> Value:
    """Register ``value`` as the implementation of ``name`` (marking it a builtin)."""
    if callable(value) and not is_builtin(value):
        builtin(name)(value)
    (IMPLEMENTATIONS if registry is None else registry)[name] = value
    return value


def implements(name: str, registry: dict[str, Value] | None = None, *, inline: str | None = None
               ) -> Callable[[Callable[..., Value]], Callable[..., Value]]:
    """Decorator: register the decorated function as the implementation of ``name``
    (``inline``: the intrinsic kind the VM may inline it as)."""

    def decorate(function: Callable[..., Value]) -> Callable[..., Value]:
        register(name, function, registry)
        if inline is not None:
            function.chatml_inline = inline  # type: ignore[attr-defined]  # a mark on the function object
        return function

    return decorate
