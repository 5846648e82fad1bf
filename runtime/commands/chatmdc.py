"""The ``chatmdc`` command: a thin shell over :mod:`runtime.prompt_checks`.

It lives above both languages because ``check`` runs the ChatML script checks
too. ``chatmdc check [--format text|json] [--confine] PATH...`` reports every
diagnostic of the full frontend (parse, imports, declarations, ChatMD's checks
and the ChatML script checks). ``chatmdc compile PATH [--emit ir|request|chatmd] [-o OUT]`` checks
the same way and, when there is no error, writes the chosen artefact to
standard output or (atomically) to ``OUT``.

Exit codes: 0 clean (warnings allowed), 1 when any error diagnostic was
reported (an exception escaping a command is a bug, reported as the one
diagnostic ``chatmd.internal_error`` at the input's position, exit 1), 2 on usage errors, unreadable input, or an emit mode that is not
available. Text diagnostics and the one-line summary go to standard error;
``check --format json`` prints ``{"diagnostics": [...], "summary": {...}}`` to
standard output (``compile --format json`` prints it to standard error, since
standard output carries the artefact); with ``--format json`` every command
writes exactly one JSON document, and types in its messages are not cut short.

Heavy modules (cattrs for ``--emit ir``) are imported only by the command
that needs them, so ``chatmdc check`` starts fast; a plain ``check`` command
line is read without argparse (:mod:`chatcommon.quick_args`, same meaning). Run as a program (``argv``
None), every command is a one-shot batch job and runs without the cyclic
garbage collector (:func:`chatcommon.allocation.one_shot_process`); ``check`` then ends
without freeing what it built object by object (:func:`chatcommon.allocation.end_one_shot_process`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from chatcommon.quick_args import CommandSpec, ParsedArgs, quick_parse
from runtime.commands.summary import clean_summary_line, summary_counts, summary_line

if TYPE_CHECKING:
    import argparse

    from chatcommon.diagnostics import Diagnostic
    from chatcommon.sources import SourceRegistry
    from chatmd.frontend import CheckResult

EXIT_OK = 0
EXIT_ERRORS = 1
EXIT_USAGE = 2

EMIT_MODES = ("ir", "request", "chatmd")


def _report(diagnostics: Sequence[Diagnostic], registry: SourceRegistry, files: int,
            output_format: str, *, json_to_stdout: bool) -> None:
    from chatcommon.render import render_all_text, render_json

    if output_format == "json":
        stream = sys.stdout if json_to_stdout else sys.stderr
        stream.write(render_json(diagnostics, summary=summary_counts(diagnostics, files)) + "\n")
    elif diagnostics:
        sys.stderr.write(render_all_text(diagnostics, registry))
        sys.stderr.write("\n" + summary_line(diagnostics, files) + "\n")


def _exit_status(diagnostics: Sequence[Diagnostic], readable: bool) -> int:
    if not readable:
        return EXIT_USAGE
    return EXIT_ERRORS if any(d.is_error for d in diagnostics) else EXIT_OK


def _cmd_check(args: argparse.Namespace) -> int:
    from chatcommon.allocation import hold_until_exit
    from chatcommon.sources import SourceRegistry
    from runtime.prompt_checks import check_prompt

    diagnostics: list[Diagnostic] = []
    registry = SourceRegistry()
    readable = True
    for index, path in enumerate(args.paths):
        try:
            result = check_prompt(path, confine=args.confine)
        except Exception as error:  # a bug: reported for this file, the others still checked
            diagnostics.append(_internal(path, error))
            continue
        if index == len(args.paths) - 1:  # (earlier trees are freed: memory stays one file's)
            hold_until_exit(result)  # a one-shot process drops it at exit, not object by object
        diagnostics.extend(result.diagnostics)
        for source in result.sources:
            registry.register(source)
        readable = readable and result.readable
    _report(diagnostics, registry, len(args.paths), args.format, json_to_stdout=True)
    if not diagnostics and args.format == "text" and not args.quiet:
        sys.stderr.write(clean_summary_line(len(args.paths)) + "\n")
    return _exit_status(diagnostics, readable)


# ----------------------------------------------------------------------------- compile

#: ``--emit`` mode → function producing the artefact text from a clean CheckResult.
#: A function may instead raise :class:`EmitUnavailable` (exit status 2).
#: An emitter returns the text, or the text and warnings found while building it; it
#: raises :class:`~chatcommon.diagnostics.DiagnosticError` when errors prevent the artefact.
Emitted: TypeAlias = "str | tuple[str, Sequence[Diagnostic]]"
Emitter: TypeAlias = Callable[["CheckResult", "argparse.Namespace"], Emitted]


class EmitUnavailable(Exception):
    """The chosen ``--emit`` mode cannot run; the message says why."""


def _emit_ir(result: CheckResult, args: argparse.Namespace) -> str:
    from chatmd.declarations.shell_validation import with_compiled_shell
    from chatmd.ir_json import ir_to_json_text

    assert result.prompt is not None
    return ir_to_json_text(with_compiled_shell(result.prompt)) + "\n"


def _emit_request(result: CheckResult, args: argparse.Namespace) -> Emitted:
    """The Responses request body; local files only unless --allow-network; no agents."""
    import json

    from chatcommon.diagnostics import DiagnosticError
    from chatmd.declarations.shell_validation import ShellDefinitions
    from chatmd.request import compile_request
    from chatmd.request_context import ConversionContext

    assert result.prompt is not None
    context = ConversionContext.local(result.prompt.prompt_dir, allow_network=args.allow_network,
                                      shell_definer=ShellDefinitions(), confine=args.confine)
    compiled = compile_request(result.prompt, context)
    if compiled.request is None:
        raise DiagnosticError(compiled.diagnostics)
    body = json.dumps(compiled.request, ensure_ascii=False, indent=2, allow_nan=False)
    return body + "\n", compiled.diagnostics


def _emit_chatmd(result: CheckResult, args: argparse.Namespace) -> Emitted:
    from chatmd.canonical_writer import write_prompt

    assert result.prompt is not None
    return write_prompt(result.prompt)


EMITTERS: dict[str, Emitter] = {
    "ir": _emit_ir,
    "request": _emit_request,
    "chatmd": _emit_chatmd,
}


def _cmd_compile(args: argparse.Namespace) -> int:
    from chatcommon.diagnostics import DiagnosticError
    from runtime.prompt_checks import check_prompt

    result = check_prompt(args.path, confine=args.confine)
    diagnostics = list(result.diagnostics)
    registry = result.sources
    status = _exit_status(diagnostics, result.readable)
    if status != EXIT_OK or result.prompt is None:
        _report(diagnostics, registry, 1, args.format, json_to_stdout=False)
        return status
    try:
        emitted = EMITTERS[args.emit](result, args)
    except EmitUnavailable as exc:
        if args.format == "json":  # one document: the reason is one more diagnostic
            from chatcommon.diagnostics import Diagnostic as Found

            diagnostics.append(Found.for_file(args.path, "chatmd.emit_unavailable", str(exc),
                                              phase="input"))
        _report(diagnostics, registry, 1, args.format, json_to_stdout=False)
        if args.format != "json":
            sys.stderr.write(f"chatmdc: {exc}\n")
        return EXIT_USAGE
    except DiagnosticError as exc:  # the artefact could not be built (e.g. a missing <doc>)
        diagnostics += exc.diagnostics
        _report(diagnostics, registry, 1, args.format, json_to_stdout=False)
        return EXIT_ERRORS
    text, extra = (emitted, ()) if isinstance(emitted, str) else emitted
    diagnostics += extra
    if args.output is None:
        _report(diagnostics, registry, 1, args.format, json_to_stdout=False)
        sys.stdout.write(text)
        return EXIT_OK
    from chatcommon.atomic import atomic_write_text
    from chatcommon.output import unwritable_output

    try:
        atomic_write_text(args.output, text, create_folders=False)
    except OSError as exc:
        diagnostics.append(unwritable_output(args.output, exc, "chatmd.unwritable_output"))
        _report(diagnostics, registry, 1, args.format, json_to_stdout=False)
        return EXIT_USAGE
    _report(diagnostics, registry, 1, args.format, json_to_stdout=False)
    return EXIT_OK


def _cmd_lsp(args: argparse.Namespace) -> int:
    from runtime.lsp.server import serve  # lazy: only the lsp command pays for pygls

    return serve()


#: ``chatmdc check`` as :func:`build_parser` declares it, for :func:`chatcommon.quick_args.quick_parse`.
CHECK_SPEC = CommandSpec("check", {"--format": ("text", "json"), "--confine": None,
                                   "--quiet": None}, "paths",
                         many=True, defaults={"format": "text", "confine": False, "quiet": False,
                                              "run": _cmd_check})


def build_parser() -> argparse.ArgumentParser:
    from chatcommon.argparsing import ArgumentParser

    parser = ArgumentParser(prog="chatmdc", description="Check and compile ChatMD prompts.")
    commands = parser.add_subparsers(dest="command", required=True)

    check = commands.add_parser("check", help="report every diagnostic in one or more prompts")
    check.add_argument("--format", choices=("text", "json"), default="text",
                       help="diagnostics as compiler-style text (stderr) or JSON (stdout)")
    check.add_argument("--confine", action="store_true",
                       help="pinned prompt: imports and script src must stay beneath the "
                       "prompt's folder (symlinks and .. resolved); absolute paths refused")
    check.add_argument("--quiet", action="store_true",
                       help="print nothing for a clean prompt (no summary line)")
    check.add_argument("paths", nargs="+", metavar="PATH")
    check.set_defaults(run=_cmd_check)

    compile_ = commands.add_parser("compile", help="check a prompt, then emit its IR, request "
                                   "body or canonical ChatMD")
    compile_.add_argument("path", metavar="PATH")
    compile_.add_argument("--emit", choices=EMIT_MODES, default="ir",
                          help="ir: JSON of the typed prompt (default); request: the Responses "
                          "API request body; chatmd: canonical ChatMD text")
    compile_.add_argument("-o", "--output", metavar="OUT",
                          help="write the result to OUT (atomically) instead of standard output")
    compile_.add_argument("--format", choices=("text", "json"), default="text",
                          help="how diagnostics are printed on standard error")
    compile_.add_argument("--confine", action="store_true",
                          help="pinned prompt: see `chatmdc check --confine`")
    compile_.add_argument("--allow-network", action="store_true",
                          help="--emit request: fetch remote <doc> sources over HTTP(S) "
                          "(by default only local files are read)")
    compile_.set_defaults(run=_cmd_compile)

    register_commands(commands)
    return parser


def register_commands(commands: Any) -> None:
    """The registration point of the subcommands beyond ``check`` and ``compile``.

    One import and one call per command module; each adds its parser(s) to
    ``commands`` (an argparse subparsers object) with ``set_defaults(run=...)``.
    Called only when argparse is needed, so ``chatmdc check`` does not import them.
    """
    from chatmd.shell.cli import add_shell_command
    from runtime.shell.commands import add_exec_commands

    shell_commands = add_shell_command(commands)  # chatmdc shell explain
    add_exec_commands(shell_commands)  # chatmdc shell exec, chatmdc shell audit verify
    commands.add_parser("lsp", help="run the language server over stdio (ChatMD and ChatML)"
                        ).set_defaults(run=_cmd_lsp)
    from runtime.commands.driver import register as register_driver

    register_driver(commands)  # chatmdc run, chatmdc chat (the chat driver)


def _internal(path: str, error: Exception) -> Diagnostic:
    from chatcommon.internal_errors import internal_error

    return internal_error("chatmd", path, error)


def _guarded(args: argparse.Namespace | ParsedArgs) -> int:
    """``args.run(args)``; an exception escaping it is ``chatmd.internal_error``, exit 1."""
    try:
        return int(args.run(args))
    except Exception as error:
        from chatcommon.render import render_all_text, render_json

        paths = getattr(args, "paths", None) or [getattr(args, "path", "<input>")]
        diagnostic = _internal(paths[0], error)
        if getattr(args, "format", "text") == "json":
            stream = sys.stdout if args.run is _cmd_check else sys.stderr
            stream.write(render_json([diagnostic], summary=summary_counts([diagnostic], 1)) + "\n")
        else:
            sys.stdout.flush()
            sys.stderr.write(render_all_text([diagnostic]))
            sys.stderr.write("\n" + summary_line([diagnostic], 1) + "\n")
        return EXIT_ERRORS


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:
        from chatcommon.allocation import one_shot_process

        one_shot_process()
    args: argparse.Namespace | ParsedArgs | None = quick_parse(
        sys.argv[1:] if argv is None else argv, CHECK_SPEC)
    if args is None:
        try:
            args = build_parser().parse_args(argv)
        except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
            return int(exc.code or 0)
    if getattr(args, "format", "text") != "json":
        status = _guarded(args)
    else:
        from chatcommon.type_length import type_length_limited

        with type_length_limited(None):  # machine-readable output holds types in full
            status = _guarded(args)
    if args.run is _cmd_check:  # run as a program: ends here, without the teardown
        from chatcommon.allocation import end_one_shot_process

        return end_one_shot_process(status)
    return status


if __name__ == "__main__":
    sys.exit(main())
