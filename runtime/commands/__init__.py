"""Command-line programs that need both languages (they sit above ``chatmd`` and ``chatml``).

- :mod:`runtime.commands.chatmdc` -- the ``chatmdc`` command (``check``, ``compile``,
  ``shell explain``): ChatMD prompts checked with ChatMD's own checks and the ChatML
  script checks (:mod:`runtime.prompt_checks`). Its subcommands are registered in
  one place, :func:`runtime.commands.chatmdc.register_commands`.
- :mod:`runtime.commands.driver` -- the parsers of ``chatmdc run`` and ``chatmdc chat``
  (flags in :mod:`runtime.commands.flags`); :mod:`runtime.commands.run` and
  :mod:`runtime.commands.chat` run them.

Importing this package imports nothing: ``chatmdc check`` start-up stays fast.
"""
