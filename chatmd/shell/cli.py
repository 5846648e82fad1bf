"""``chatmdc shell explain PATH [RUNTIME_ID]``: the command-line side of :func:`explain_prompt`.

:func:`add_shell_command` registers the ``shell`` command group on the
``chatmdc`` parser; the work is done by :mod:`chatmd.shell.integration`.
Exit status: 0 when the runtime(s) were explained and compile; 1 when they
were explained but do not compile (the problems are listed in the summary),
or when the prompt has errors that stop the shell layer (printed on standard
error); 2 when the file cannot be read or names no such runtime.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

EXIT_OK = 0
EXIT_ERRORS = 1
EXIT_USAGE = 2


def add_shell_command(commands: Any) -> None:
    """Add ``shell explain`` to the ``chatmdc`` subcommands (an argparse subparsers object)."""
    shell = commands.add_parser("shell", help="inspect a prompt's shell runtimes")
    actions = shell.add_subparsers(dest="shell_command", required=True)
    explain = actions.add_parser(
        "explain", help="print the effective, merged runtime: which profile granted what, "
        "which ancestor set each setting")
    explain.add_argument("path", metavar="PATH")
    explain.add_argument("runtime", nargs="?", metavar="RUNTIME_ID",
                         help="the runtime to explain (qualified id); all runtimes by default")
    explain.add_argument("--platform", choices=("linux", "macos", "any"),
                         help="compile platform (default: this host's)")
    explain.set_defaults(run=run_explain)
    _add_runtime_commands(actions)


def _add_runtime_commands(actions: Any) -> None:
    """``shell exec`` and ``shell audit verify`` live in ``runtime.shell.commands``.

    The frontend never imports the runtime: the module is located by name
    (and only when ``chatmdc`` builds its parser), and absent when the runtime
    package is not installed.
    """
    import importlib

    try:
        module = importlib.import_module("runtime.shell.commands")
    except ImportError:
        return
    module.add_exec_commands(actions)


def run_explain(args: argparse.Namespace) -> int:
    from chatcommon.render import render_all_text
    from chatmd.shell.integration import explain_prompt

    result = explain_prompt(args.path, args.runtime, platform=args.platform)
    if result.error is not None:
        sys.stderr.write(f"chatmdc: {result.error}\n")
        return EXIT_USAGE
    if not result.text:
        sys.stderr.write(render_all_text(result.diagnostics))
        unreadable = any(d.code == "chatmd.unreadable_input" for d in result.diagnostics)
        return EXIT_USAGE if unreadable else EXIT_ERRORS
    sys.stdout.write(result.text)
    return EXIT_ERRORS if any(d.is_error for d in result.diagnostics) else EXIT_OK
