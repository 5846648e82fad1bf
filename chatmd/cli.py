"""The ``chatmdc`` command: a thin shell over the ChatMD library API.

Exit codes: 0 clean, 1 when any error diagnostic was reported, 2 on usage
errors or unreadable input.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from common.diagnostics import Diagnostic
from common.render import render_all_text, render_json
from common.sources import SourceFile

EXIT_OK = 0
EXIT_ERRORS = 1
EXIT_USAGE = 2


def _check_file(path: str) -> tuple[list[Diagnostic], bool]:
    """Diagnostics for one file, and whether the file could be read at all."""
    from chatmd.parser import parse

    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return [Diagnostic.for_file(path, "chatmd.unreadable_input",
                                    f"cannot read {path}: {reason}", phase="input")], False
    if text.startswith("\ufeff"):
        text = text[1:]
    result = parse(SourceFile(path, text))
    return list(result.diagnostics), True


def _cmd_check(args: argparse.Namespace) -> int:
    diagnostics: list[Diagnostic] = []
    unreadable = False
    for path in args.paths:
        found, readable = _check_file(path)
        diagnostics.extend(found)
        unreadable = unreadable or not readable
    if args.format == "json":
        sys.stdout.write(render_json(diagnostics) + "\n")
    elif diagnostics:
        sys.stderr.write(render_all_text(diagnostics))
    if unreadable:
        return EXIT_USAGE
    return EXIT_ERRORS if any(d.is_error for d in diagnostics) else EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="chatmdc", description="Check and compile ChatMD prompts.")
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help="report every diagnostic in one or more prompts")
    check.add_argument("--format", choices=("text", "json"), default="text")
    check.add_argument("paths", nargs="+", metavar="PATH")
    check.set_defaults(run=_cmd_check)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
