"""The chat driver's commands, ``chatmdc run`` and ``chatmdc chat``: their parsers.

:func:`register` adds both to the ``chatmdc`` parser; it imports only the flag
definitions (:mod:`runtime.commands.flags`), the command modules
(:mod:`runtime.commands.run`, :mod:`runtime.commands.chat`, each with ``run(args) -> int``)
are imported when their command runs.
"""

from __future__ import annotations

import argparse
import os
from typing import Any


def _lazy(module: str) -> Any:
    def run(args: argparse.Namespace) -> int:
        import importlib

        code = int(importlib.import_module(module).run(args))
        _exit_now_if_tools_linger(code)
        return code

    return run


def _is_program() -> bool:
    """True when ``chatmdc`` is the process (not a library call or a test in-process)."""
    import sys

    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if spec is not None and spec.name.rpartition(".")[2] == "chatmdc":  # python -m ...
        return True
    return os.path.basename(str(getattr(main, "__file__", ""))) == "chatmdc"


def _exit_now_if_tools_linger(code: int) -> None:
    """Tool calls abandoned by a cancelled turn (a hung nested request...) would keep the
    process alive until they end: everything is written by now, so the program ends."""
    import sys
    import threading

    lingering = [thread for thread in threading.enumerate()
                 if thread.name.startswith("tool_") and not thread.daemon
                 and thread.is_alive()]
    if lingering and _is_program():
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def add_run_parser(subparsers: Any) -> argparse.ArgumentParser:
    from runtime.commands.flags import add_driver_flags, positive_int

    parser: argparse.ArgumentParser = subparsers.add_parser(
        "run", help="run a prompt against the model, appending the transcript")
    add_driver_flags(parser)
    parser.add_argument("--max-turns", type=positive_int, metavar="N",
                        help="stop (exit 5) after N model requests")
    parser.set_defaults(run=_lazy("runtime.commands.run"))
    return parser


def add_chat_parser(subparsers: Any) -> argparse.ArgumentParser:
    from runtime.commands.flags import add_driver_flags

    parser: argparse.ArgumentParser = subparsers.add_parser(
        "chat", help="talk with the model interactively, appending the transcript")
    add_driver_flags(parser)
    parser.set_defaults(run=_lazy("runtime.commands.chat"))
    return parser


def register(subparsers: Any) -> None:
    """Add ``run`` and ``chat`` to a ``chatmdc`` subparsers object."""
    add_run_parser(subparsers)
    add_chat_parser(subparsers)


__all__ = ["add_chat_parser", "add_run_parser", "register"]
