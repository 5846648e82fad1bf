"""The ChatML VM: loads bytecode and runs it.

* :mod:`chatml.vm.translate` -- bytecode to Python source (one function per
  code object), with a map from generated lines back to instructions;
* :mod:`chatml.vm.runtime` -- the helpers and constants generated code uses;
* :mod:`chatml.vm.loader` -- compiles the generated source and binds the globals;
* :mod:`chatml.vm.errors` -- Python exceptions to positioned runtime diagnostics
  with a ChatML stack trace;
* :mod:`chatml.vm.run` -- the run boundary: limits, transactions, host calls.
"""
