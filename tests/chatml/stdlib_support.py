"""Test helpers for the standard library: real ChatML closures for host-level tests.

:func:`closures` compiles and runs a ChatML program with the core surface and
returns its top-level bindings, so tests can hand genuine compiled closures
to builtins and to the task interpreter (instead of Python stand-ins).
:data:`BUILTINS` is the core surface's installed values by qualified name.
"""

from __future__ import annotations

from chatml.build import runtime_values
from chatml.values import Module, Value
from tests.chatml.vm_support import run_source


def closures(source: str) -> dict[str, Value]:
    """The top-level values of ``source`` after running it (it must run cleanly)."""
    outcome = run_source(source, "closures.chatml")
    errors = [d for d in outcome.diagnostics if d.is_error]
    assert not errors and outcome.program is not None, errors
    return outcome.program.top_level()


def _qualified(values: dict[str, Value]) -> dict[str, Value]:
    table: dict[str, Value] = {}
    for name, value in values.items():
        if isinstance(value, Module):
            for export, member in value.items():
                table[f"{name}.{export}"] = member
        else:
            table[name] = value
    return table


BUILTINS: dict[str, Value] = _qualified(runtime_values("core"))
"""Every core builtin by qualified name (``print``, ``String.length``...)."""
