"""Shell phase 2, compile: typed declarations to one canonical manifest (spec section 6).

The driver (:mod:`~chatmd.shell.compile.compiler`), the defaults runtime and built-in
profiles, inheritance and merge, validation, script references, feature gating, legacy
desugaring, the manifest and its digest, compile-phase reporting, the model-visible tool
schemas (:mod:`~chatmd.shell.compile.schema`) and the command-chain grammar
(:mod:`~chatmd.shell.compile.chain`, also used when executing chain tools).
"""
