"""ChatML bytecode: the compiled, serialisable form of a script.

* :mod:`chatml.bytecode.opcodes` -- the instruction set;
* :mod:`chatml.bytecode.code` -- code objects and the compiled module;
* :mod:`chatml.bytecode.serialize` -- the versioned on-disk format;
* :mod:`chatml.bytecode.cache` -- the ``.pyc``-like cache keyed by source hash.
"""
