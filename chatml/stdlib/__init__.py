"""The ChatML core standard library: the implementations of the core surface's builtins.

Importing this package registers every implementation with
:func:`chatml.registration.implements` under its qualified name (``"print"``,
``"String.length"``...); :func:`chatml.install.install` then builds a surface's
runtime values from the registry. One module per builtin module:

* :mod:`~chatml.stdlib.globals` -- ``print``, ``to_string``, ``length``, ...;
* :mod:`~chatml.stdlib.string`, :mod:`~chatml.stdlib.array`,
  :mod:`~chatml.stdlib.option`, :mod:`~chatml.stdlib.hashtbl`,
  :mod:`~chatml.stdlib.task`, :mod:`~chatml.stdlib.json`;

plus the shared pieces :mod:`~chatml.stdlib.render` (``show``,
``fmt_float``), :mod:`~chatml.stdlib.equality` (runtime ``==``) and
:mod:`~chatml.stdlib.checks` (shape errors, budgets, callbacks).
"""

from __future__ import annotations

from chatml.stdlib import array, globals, hashtbl, json, option, string, task

CORE_MODULES = {
    "String": string,
    "Array": array,
    "Json": json,
    "Task": task,
    "Option": option,
    "Hashtbl": hashtbl,
}
"""The core surface's modules, in the reference's order, and the Python module implementing each."""

__all__ = ["CORE_MODULES", "globals"]
