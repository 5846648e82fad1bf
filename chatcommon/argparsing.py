"""The argument parser class of the command-line tools (``chatmdc``, ``chatml``).

It is :class:`argparse.ArgumentParser` with one change: its help formatter finds
the terminal width without importing :mod:`shutil`. argparse builds a formatter
for every ``add_argument`` call, and the stock one imports shutil (and with it
bz2, lzma and more) to ask for the width, a few percent of a ``chatmdc check``
that never prints help. The width is the one ``shutil.get_terminal_size()``
gives: ``$COLUMNS`` when it is a positive number, else the width of the
terminal on standard output, else 80. Subparsers made with
``add_subparsers().add_parser`` are of the same class, so the whole command
tree uses the formatter.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

__all__ = ["ArgumentParser", "HelpFormatter", "terminal_columns"]

_FALLBACK_COLUMNS = 80


def terminal_columns() -> int:
    """The terminal width, as ``shutil.get_terminal_size().columns`` computes it."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        stdout = sys.__stdout__
        try:
            columns = os.get_terminal_size(stdout.fileno()).columns if stdout is not None else 0
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or _FALLBACK_COLUMNS


class HelpFormatter(argparse.HelpFormatter):
    """argparse's default formatter, sized by :func:`terminal_columns`."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        if width is None:
            width = terminal_columns() - 2  # as argparse does
        super().__init__(prog, indent_increment, max_help_position, width)


class ArgumentParser(argparse.ArgumentParser):
    """An :class:`argparse.ArgumentParser` whose help formatter defaults to :class:`HelpFormatter`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)
