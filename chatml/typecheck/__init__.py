"""The ChatML typechecker (spec section 4): HM inference with levels, rows and modules.

Public API (imported lazily, so that importing a submodule stays cheap)::

    typecheck_program(program, surface="core") -> TypeResult
    TypeResult, Binding

Modules, one concern each:

* :mod:`~chatml.typecheck.types` -- the type graph and its printer;
* :mod:`~chatml.typecheck.unify` -- unification (rows, recursive types, flavors);
* :mod:`~chatml.typecheck.schemes` -- type schemes and their instantiation;
* :mod:`~chatml.typecheck.contracts` -- the host contract of a script kind (moderator,
  shell hooks): the entry points a host calls, and their types;
* :mod:`~chatml.typecheck.checker` -- state, instantiation, generalisation, errors;
* :mod:`~chatml.typecheck.environment` -- value environment with scoped undo;
* :mod:`~chatml.typecheck.expressions` -- the expression rules of spec 4.5;
* :mod:`~chatml.typecheck.records` -- literals, field access, copy-update, join, reopening;
* :mod:`~chatml.typecheck.patterns` / :mod:`~chatml.typecheck.exhaustiveness` -- ``match``;
* :mod:`~chatml.typecheck.equality` -- what ``==`` accepts;
* :mod:`~chatml.typecheck.exactness` -- whether a record type may still gain fields;
* :mod:`~chatml.typecheck.pattern_display` -- patterns shown in diagnostics;
* :mod:`~chatml.typecheck.bindings` -- value restriction and ``let rec``;
* :mod:`~chatml.typecheck.type_exprs` -- annotations and ``type`` declarations;
* :mod:`~chatml.typecheck.modules` -- modules, ``open``, initialisation order;
* :mod:`~chatml.typecheck.statements` -- the statement loop with error recovery;
* :mod:`~chatml.typecheck.errors` -- the catalogue of diagnostic codes;
* :mod:`~chatml.typecheck.program` -- :func:`typecheck_program` and its result.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Binding", "TypeResult", "typecheck_program"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from chatml.typecheck import program

        return getattr(program, name)
    raise AttributeError(f"module 'chatml.typecheck' has no attribute {name!r}")
