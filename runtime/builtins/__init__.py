"""Runtime implementations of the moderator surface's pure helper modules (stdlib spec 6).

Importing this package registers ``Item.*``, ``Tool_call.*`` and ``Context.*``
with :func:`chatml.registration.implements`, so that :func:`chatml.install.install`
can build the moderator and UI-moderator surfaces (the capability modules --
``Turn``, ``Tool``, ``Model``... -- only build task nodes, which ``install``
generates from the surface table; their *handlers* live in
:mod:`runtime.operations`). :mod:`runtime.registry` imports this package
before it compiles a moderator.
"""

from __future__ import annotations

from runtime.builtins import context, item, tool_call

__all__ = ["context", "item", "tool_call"]
