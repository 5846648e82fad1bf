"""ChatMarkdown (ChatMD): lexer, parser, import expansion, declarations, IR, requests, writer.

Imports here are kept lazy so that ``chatmdc check`` starts fast; import the
phase modules (``chatmd.parser``, ...) directly.
"""
