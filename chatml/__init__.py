"""ChatML: the statically typed scripting language of ChatMD moderators and shell hooks.

Phases live in their own modules and are imported on demand, so importing this
package is cheap. It never imports ``chatmd``. :mod:`chatml.pipeline` is the one
build pipeline every tool uses (parse -> check -> resolve -> compile); the phases:

* ``syntax/`` -- tokens, lexer, grammar, LR parser, syntax errors, printer;
  :mod:`~chatml.ast` is the tree they build;
* ``typecheck/`` -- HM inference with rows and modules, the types, unification and
  the host contracts; ``surfaces/`` -- the builtin surfaces (one table for the
  checker and the runtime);
* :mod:`~chatml.resolve` (names to slots) and :mod:`~chatml.compiler` (tree to bytecode);
* ``bytecode/`` -- opcodes, code objects, the file format and the on-disk cache;
* ``vm/`` -- bytecode translated to Python and run under :mod:`~chatml.limits`;
  :mod:`~chatml.calls` and ``stdlib/`` -- the builtins; :mod:`~chatml.values`,
  :mod:`~chatml.tasks`, :mod:`~chatml.snapshot`, :mod:`~chatml.json_text`,
  :mod:`~chatml.json_values`;
* ``engine/`` -- the embedding API (:class:`chatml.engine.Engine`);
* the command line: :mod:`~chatml.cli`, :mod:`~chatml.cli_run`, :mod:`~chatml.check`,
  :mod:`~chatml.build`, :mod:`~chatml.repl`, :mod:`~chatml.disassembler`,
  :mod:`~chatml.reference_format` (diagnostics in the reference's text format).
"""
