"""ChatML: the statically typed scripting language of ChatMD moderators and shell hooks.

Phases live in their own modules and are imported on demand, so importing this
package is cheap. The syntax phase: :mod:`chatml.syntax.tokens` and :mod:`chatml.syntax.lexer`
(tokens), :mod:`chatml.ast` (the source tree), :mod:`chatml.syntax.parser`
(``parse_program``), :mod:`chatml.syntax.printer` (tree back to source) and
:mod:`chatml.reference_format` (diagnostics in the reference's text format).
"""
