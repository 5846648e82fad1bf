"""The ChatML embedding API: compile scripts for a host, give them host functions, run them.

* :mod:`chatml.engine.api` -- :class:`Engine` (surface, host values, limits,
  output sink) and :class:`Script` (run, call, read bindings, run tasks);
* :mod:`chatml.engine.host_surface` -- a builtin surface extended with typed
  host values, as the typechecker and the runtime see it;
* :mod:`chatml.engine.convert` -- Python values <-> ChatML values by type.

See the README section "Standard library and embedding" for an example.
"""

from __future__ import annotations

from chatml.engine.api import Engine, Script
from chatml.engine.convert import ChatMLFunction, ConversionError
from chatml.engine.host_surface import HostRegistrationError

__all__ = ["ChatMLFunction", "ConversionError", "Engine", "HostRegistrationError", "Script"]
