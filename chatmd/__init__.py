"""ChatMarkdown (ChatMD): lexer, parser, import expansion, declarations, IR, requests, writers.

It never imports ``chatml`` (checks that need both languages live in ``runtime``).
The phases, in the order data flows (:mod:`chatmd.frontend` runs them):

* text -> tokens -> tree: :mod:`~chatmd.lexer`, :mod:`~chatmd.parser`, :mod:`~chatmd.ast`,
  :mod:`~chatmd.recovery` (what a broken document still yields), :mod:`~chatmd.html_text`,
  :mod:`~chatmd.vocabulary`;
* imports: :mod:`~chatmd.imports`, :mod:`~chatmd.loading` (paths, confinement, decoding);
* ``declarations/`` -- tree to typed IR, one module per element family
  (:func:`chatmd.declarations.lower_prompt`); :mod:`~chatmd.ir`, :mod:`~chatmd.provenance`,
  :mod:`~chatmd.ir_json`, :mod:`~chatmd.ir_diagnostics`;
* ``tools/`` -- tool construction and the built-in tools' schemas (a prompt check);
* ``shell/`` -- shell runtimes in three phases: ``declare/``, ``compile/``, ``secure/``;
* requests: :mod:`~chatmd.request`, :mod:`~chatmd.request_content`,
  :mod:`~chatmd.request_context` (the Responses API body of a prompt);
* writers: :mod:`~chatmd.canonical_writer` (a prompt as canonical ChatMD) and
  :mod:`~chatmd.transcript_writer` (a conversation transcript).

Imports here are kept lazy so that ``chatmdc check`` starts fast; import the
phase modules (``chatmd.parser``, ...) directly.
"""
