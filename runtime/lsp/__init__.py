"""The ChatMD/ChatML language server (``chatmdc lsp``), built on pygls.

Modules, one job each: :mod:`~runtime.lsp.server` (pygls wiring and
publishing), :mod:`~runtime.lsp.analysis` (running the check pipeline on a
buffer), :mod:`~runtime.lsp.diagnostics` (diagnostics as LSP diagnostics),
:mod:`~runtime.lsp.positions` (position encodings), :mod:`~runtime.lsp.chatml_index`
(ChatML scopes), :mod:`~runtime.lsp.chatmd_locate` (what is under the cursor),
:mod:`~runtime.lsp.vocabulary_table` (tag and attribute descriptions), and the
features :mod:`~runtime.lsp.hover`, :mod:`~runtime.lsp.definition`,
:mod:`~runtime.lsp.completion`, :mod:`~runtime.lsp.symbols`. Importing this
package imports none of them (``chatmdc`` imports it lazily).
"""
