"""The ChatML VM: loads bytecode and runs it.

* :mod:`chatml.vm.verify` -- checks a module's bytecode (stack discipline,
  blocks, operands, constants) and records its block structure;
* :mod:`chatml.vm.translate` -- bytecode to Python source (one function per
  code object), with a map from generated lines back to instructions;
* :mod:`chatml.vm.intervals` -- the integer-range analysis the translator
  uses to leave out range checks that cannot fail;
* :mod:`chatml.vm.charges` -- batched memory charges;
* :mod:`chatml.vm.intrinsics` -- inline forms of a few hot builtins;
* :mod:`chatml.vm.runtime` -- the helpers and constants generated code uses;
* :mod:`chatml.vm.loader` -- compiles the generated source and binds the globals;
* :mod:`chatml.vm.errors` -- Python exceptions to positioned runtime diagnostics
  with a ChatML stack trace;
* :mod:`chatml.vm.run` -- the run boundary: limits, transactions, host calls;
* :mod:`chatml.vm.reference` -- a plain interpreter of the opcode table, the
  reference the translated VM is tested against.

Importing this package loads :mod:`chatml.vm.run`, which gives
:func:`chatml.calls.apply` its boundary for calls made outside a run, and
:mod:`chatml.vm.reference`, which gives :func:`chatml.vm.loader.load` its
fallback for modules nested too deeply to translate.
"""

from chatml.vm import reference as _reference  # noqa: F401  (installs load's fallback)
from chatml.vm import run as _run  # noqa: F401  (installs calls.apply's outside-run boundary)
