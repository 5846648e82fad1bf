"""The ``chatml`` command line: a thin layer over the library APIs.

Subcommands register themselves: this module defines ``check`` and asks each
module of :data:`SUBCOMMAND_MODULES` to ``register(subparsers)``; a
subcommand sets ``handler`` (``args -> exit status``) with ``set_defaults``.
Adding a subcommand is one line in :data:`SUBCOMMAND_MODULES`. A run imports
only the module of the subcommand it names (``check`` imports none of them:
the REPL's and the runner's imports would be a large share of its start-up);
``--help`` and an unknown command import them all, so every subcommand is listed.
Run as a program (``argv`` None), ``check`` is a one-shot batch job and runs
without the cyclic garbage collector (:func:`chatcommon.allocation.one_shot_process`),
and a plain ``check`` command line is read without argparse
(:mod:`chatcommon.quick_args`, same meaning).

``chatml check [--format text|json] [--surface NAME] [--full-types] FILE``
parses and typechecks FILE against a builtin surface (default ``core``) and
prints ``val NAME : TYPE`` for every top-level binding on standard output.
A printed type is cut short past 2,000 characters (saying how much was left
out) unless ``--full-types`` is given or the format is JSON.
Text diagnostics (and a one-line summary) go to standard error; with
``--format json`` standard output is one JSON document
``{"bindings": [{"name", "type"}], "diagnostics": [...]}``.
Exit status: 0 without errors (warnings allowed), 1 when any error was
reported, 2 on a usage error or an unreadable file. An exception escaping any
subcommand is a bug; it is reported as one ``chatml.internal_error``
diagnostic at the input's position (exit 1), never as a traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from chatcommon.quick_args import CommandSpec, ParsedArgs, quick_parse

if TYPE_CHECKING:
    import argparse

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2

#: Modules that add subcommands through ``register(subparsers)``, with the subcommands each adds.
SUBCOMMAND_MODULES: dict[str, tuple[str, ...]] = {
    "chatml.cli_run": ("run", "compile", "dis"),
    "chatml.repl": ("repl",),
}

#: Surface names ``--surface`` accepts (kept in step with chatml.surfaces.SURFACE_NAMES,
#: which is not imported here so that ``--help`` stays cheap).
SURFACE_CHOICES = (
    "core", "moderator", "ui_moderator", "shell_matcher", "shell_reviewer",
    "shell_before_interceptor", "shell_after_interceptor", "shell_effect_analyzer",
    "shell_audit_filter",
)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def summary_line(diagnostics: Sequence[Any], file: str) -> str:
    """``chatml: 2 errors, 1 warning in script.chatml``."""
    errors = sum(1 for d in diagnostics if d.is_error)
    warnings = len(diagnostics) - errors
    return f"chatml: {_plural(errors, 'error')}, {_plural(warnings, 'warning')} in {file}"


def check_command(args: argparse.Namespace) -> int:
    """``chatml check``: print the top-level types and every diagnostic."""
    from chatml.check import check_file
    from chatml.typecheck.types import TYPE_LENGTH_LIMIT, type_length_limited

    full = args.format == "json" or args.full_types
    with type_length_limited(None if full else TYPE_LENGTH_LIMIT):
        result = check_file(args.file, surface=args.surface)
        # each type printed once (a type can take a while: see docs/types-and-speed.md)
        signatures = [b.signature for b in result.bindings]
        bindings = [{"name": b.name, "type": signature}
                    for b, signature in zip(result.bindings, signatures, strict=True)]
        val_lines = [b.line(signature)
                     for b, signature in zip(result.bindings, signatures, strict=True)]
    if args.format == "json":
        from chatcommon.render import render_json

        sys.stdout.write(render_json(result.diagnostics, bindings=bindings) + "\n")
    else:
        for line in val_lines:
            sys.stdout.write(line + "\n")
        sys.stdout.flush()
        if result.diagnostics:
            from chatcommon.render import render_all_text

            sys.stderr.write(render_all_text(result.diagnostics))
            sys.stderr.write("\n" + summary_line(result.diagnostics, args.file) + "\n")
    if not result.readable:
        return EXIT_USAGE
    return EXIT_OK if result.ok else EXIT_ERROR


def _register_check(subparsers: Any) -> None:
    check = subparsers.add_parser(
        "check", help="parse and typecheck a ChatML file; print its top-level types",
        description="Parse and typecheck FILE against a builtin surface and print "
                    "`val NAME : TYPE` for each top-level binding.")
    check.add_argument("file", metavar="FILE", help="the ChatML source file")
    check.add_argument("--format", choices=("text", "json"), default="text",
                       help="text: types on stdout, diagnostics on stderr; "
                            "json: one document on stdout")
    check.add_argument("--surface", choices=SURFACE_CHOICES, default="core",
                       help="the builtin surface to check against (default: core)")
    check.add_argument("--full-types", action="store_true",
                       help="print types in full (by default a type longer than 2,000 "
                            "characters is cut short, saying how much was left out)")
    check.set_defaults(handler=check_command)


#: ``chatml check`` as :func:`_register_check` declares it, for :func:`quick_parse`.
CHECK_SPEC = CommandSpec("check", {"--format": ("text", "json"), "--surface": SURFACE_CHOICES,
                                   "--full-types": None},
                         "file", many=False,
                         defaults={"format": "text", "surface": "core", "full_types": False,
                                   "handler": check_command})


def _modules_for(command: str | None) -> list[str]:
    """The subcommand modules to register for a command line whose first word is ``command``."""
    if command == "check":
        return []
    owners = [module for module, commands in SUBCOMMAND_MODULES.items() if command in commands]
    return owners or list(SUBCOMMAND_MODULES)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; with ``command``, only what that subcommand needs is imported."""
    import importlib

    from chatcommon.argparsing import ArgumentParser

    parser = ArgumentParser(prog="chatml", description="The ChatML toolchain.")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _register_check(subparsers)
    for module_name in _modules_for(command):
        importlib.import_module(module_name).register(subparsers)
    return parser


#: Commands that run one batch job and exit, without running the user's program (whose
#: values may form cycles for as long as it runs): the cyclic collector stays off for
#: them (:func:`chatcommon.allocation.one_shot_process`).
_ONE_SHOT_COMMANDS = frozenset({"check", "compile", "dis"})


def main(argv: Sequence[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    command = words[0] if words else None
    if argv is None and command in _ONE_SHOT_COMMANDS:
        from chatcommon.allocation import one_shot_process

        one_shot_process()
    args: argparse.Namespace | ParsedArgs | None = quick_parse(words, CHECK_SPEC)
    if args is None:
        try:
            args = build_parser(command).parse_args(argv)
        except SystemExit as exit_:  # argparse reports usage errors with status 2
            return int(exit_.code or 0)
    return guarded(args)


def guarded(args: argparse.Namespace | ParsedArgs) -> int:
    """``args.handler(args)``; an exception escaping it is ``chatml.internal_error``, exit 1."""
    try:
        return int(args.handler(args))
    except Exception as error:
        from chatcommon.internal_errors import internal_error
        from chatcommon.render import render_all_text, render_json

        file = getattr(args, "file", "<input>")
        diagnostic = internal_error("chatml", file, error)
        sys.stdout.flush()
        if getattr(args, "format", "text") == "json":
            stream = sys.stdout if args.handler is check_command else sys.stderr
            extra: dict[str, Any] = {"bindings": []} if args.handler is check_command else {}
            stream.write(render_json([diagnostic], **extra) + "\n")
        else:
            sys.stderr.write(render_all_text([diagnostic]))
            sys.stderr.write("\n" + summary_line([diagnostic], file) + "\n")
        return EXIT_ERROR


if __name__ == "__main__":
    raise SystemExit(main())
