"""ChatML syntax (spec section 3): source text to syntax tree, and back.

* :mod:`~chatml.syntax.tokens` -- token kinds and the keyword table;
* :mod:`~chatml.syntax.lexer` -- source text to tokens (nested comments, escapes, warnings);
* :mod:`~chatml.syntax.grammar` -- the LR grammar (ply productions) and its precedence table;
* :mod:`~chatml.syntax.parse_tables` -- the LALR tables built from the grammar, cached;
* :mod:`~chatml.syntax.parse_actions` -- the semantic actions that build :mod:`chatml.ast` nodes;
* :mod:`~chatml.syntax.parser` -- the table-driven LR driver with error recovery;
* :mod:`~chatml.syntax.parse_warnings` -- warnings the parser reports (ambiguous forms);
* :mod:`~chatml.syntax.errors` -- syntax-error diagnostics and their expected-token hints;
* :mod:`~chatml.syntax.printer` -- syntax tree back to source, ``parse(print(ast)) == ast``.
"""
