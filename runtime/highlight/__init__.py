"""Pygments lexers for ChatMD and ChatML (registered as ``chatmd`` and ``chatml``).

They live under ``runtime`` because the ChatMD lexer highlights inline
``<script>`` bodies with the ChatML lexer, and ``chatmd``/``chatml`` never
import each other. ``pyproject.toml`` registers both through the
``pygments.lexers`` entry point, so ``pygmentize -l chatmd FILE`` works after
``pip install``. Both lexers never produce an ``Error`` token and their token
streams concatenate back to the input (``stripnl`` defaults to False).
"""

from runtime.highlight.chatmd_lexer import ChatMDLexer
from runtime.highlight.chatml_lexer import ChatMLLexer

__all__ = ["ChatMDLexer", "ChatMLLexer"]
