"""``chatmdc shell explain PATH [RUNTIME_ID]``: explain a prompt's effective shell runtimes.

:func:`add_shell_command` registers the ``shell`` command group on the
``chatmdc`` parser (:mod:`runtime.commands.chatmdc`); :func:`explain_prompt` is the
library side: load the prompt, compile its shell (:mod:`chatmd.shell.integration`)
and render it (:mod:`chatmd.shell.explanation`). It lives here, in the command layer,
because it loads a prompt through :mod:`chatmd.frontend`, which the shell layer must
not import (the frontend's checks import the shell layer).
Exit status: 0 when the runtime(s) were explained and compile; 1 when they
were explained but do not compile (the problems are listed in the summary),
or when the prompt has errors that stop the shell layer (printed on standard
error); 2 when the file cannot be read or names no such runtime. With
``--format json`` standard error holds exactly one JSON document
``{"diagnostics": [...]}`` (an unknown runtime is ``chatmd.unknown_runtime``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chatcommon.diagnostics import Diagnostic

import attrs

from chatcommon.diagnostics import Diagnostic

EXIT_OK = 0
EXIT_ERRORS = 1
EXIT_USAGE = 2


def add_shell_command(commands: Any) -> Any:
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
    explain.add_argument("--format", choices=("text", "json"), default="text",
                         help="diagnostics as text, or as one JSON document "
                              "{\"diagnostics\": [...]} (both on standard error)")
    explain.set_defaults(run=run_explain)
    return actions


def run_explain(args: argparse.Namespace) -> int:
    result = explain_prompt(args.path, args.runtime, platform=args.platform)
    if result.error is not None:
        status = EXIT_USAGE
        _report(args, [], result.error)
    elif not result.text:
        unreadable = any(d.code == "chatmd.unreadable_input" for d in result.diagnostics)
        status = EXIT_USAGE if unreadable else EXIT_ERRORS
        _report(args, result.diagnostics, None)
    else:
        sys.stdout.write(result.text)
        sys.stdout.flush()
        status = EXIT_ERRORS if any(d.is_error for d in result.diagnostics) else EXIT_OK
        if args.format == "json":  # (as text, the explanation's summary lists them)
            _report(args, result.diagnostics, None)
    return status


def _report(args: argparse.Namespace, diagnostics: Sequence[Diagnostic],
            usage: str | None) -> None:
    """Text: the diagnostics or the usage message. JSON: exactly one document of both."""
    if args.format != "json":
        if usage is not None:
            sys.stderr.write(f"chatmdc: {usage}\n")
        else:
            from chatcommon.render import render_all_text

            sys.stderr.write(render_all_text(diagnostics))
        return
    from chatcommon.diagnostics import Diagnostic as Found
    from chatcommon.render import render_json

    found = list(diagnostics)
    if usage is not None:
        found.append(Found.for_file(args.path, "chatmd.unknown_runtime", usage, phase="input"))
    sys.stderr.write(render_json(found) + "\n")


@attrs.frozen
class Explanation:
    """What ``chatmdc shell explain`` prints.

    ``text`` is the summary (empty when nothing could be explained);
    ``diagnostics`` the problems found (errors that stop the shell layer when
    ``text`` is empty, else the compile diagnostics, already listed in the
    summary); ``error`` a usage problem such as an unknown runtime id.
    """

    text: str
    diagnostics: tuple[Diagnostic, ...]
    error: str | None = None


def explain_prompt(path: str | os.PathLike[str], runtime_id: str | None = None, *,
                   platform: str | None = None) -> Explanation:
    """The effective runtime(s) of the prompt file ``path``, even when it does not compile.

    Errors that stop the shell layer before compilation (syntax, imports,
    declarations) are returned as diagnostics with an empty text.
    """
    from chatmd.frontend import check_prompt
    from chatmd.shell.explanation import UnknownRuntimeError, explain
    from chatmd.shell.integration import compile_declared_shell

    result = check_prompt(path, checks=())
    if result.prompt is None:
        return Explanation("", result.errors)
    compiled = compile_declared_shell(result.prompt, platform=platform)
    try:
        return Explanation(explain(compiled, runtime_id), compiled.diagnostics)
    except UnknownRuntimeError as error:
        return Explanation("", (), str(error))
