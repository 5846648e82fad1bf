"""The ``chatml run``, ``chatml compile`` and ``chatml dis`` subcommands (thin over the library).

``run FILE [--max-steps N] [--max-memory MB] [--max-depth N] [--format text|json]
[--surface NAME] [--no-cache]`` runs a source or bytecode file. Exit status: 0
success, 1 parse/type error or invalid bytecode (nothing runs), 3 runtime
error (after flushing what the script printed), 2 usage error or unreadable
file. ``compile FILE -o OUT`` writes the bytecode (atomically); ``dis FILE
[--python] [--code N]`` prints the bytecode listing (``--python``: the Python the
VM generates, each line with the instruction it comes from; ``--code N``: one code object). Diagnostics go to stderr, as text or, with
``--format json``, as one JSON document.

:func:`register` adds the three subcommands to an ``argparse`` subparser set
(``chatml/cli.py`` calls it); :func:`run_command`, :func:`compile_command` and
:func:`dis_command` take the parsed arguments and return the exit status.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from chatcommon.numbers import abbreviate_digits, parse_int

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_RUNTIME = 3


def _positive(text: str) -> int:
    try:
        value = parse_int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value is None:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got "
                                         f"{abbreviate_digits(text)!r}: too large")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a ChatML source file or a compiled bytecode file")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="how diagnostics are printed on stderr")
    parser.add_argument("--surface", default=None,
                        help="builtin surface to compile against (default: core)")
    parser.add_argument("--no-cache", action="store_true",
                        help="do not read or write the bytecode cache")


def register(subparsers: Any) -> None:
    """Add ``run``, ``compile`` and ``dis`` to ``subparsers`` (from ``add_subparsers``)."""
    from chatml.limits import DEFAULT_MAX_DEPTH, DEFAULT_MAX_MEMORY, DEFAULT_MAX_STEPS

    run = subparsers.add_parser("run", help="run a ChatML program (source or bytecode)")
    _common(run)
    run.add_argument("--max-steps", type=_positive, default=DEFAULT_MAX_STEPS,
                     help=f"step budget (default {DEFAULT_MAX_STEPS})")
    run.add_argument("--max-memory", type=_positive, default=DEFAULT_MAX_MEMORY // 2**20,
                     metavar="MB",
                     help=f"allocation budget in MB (default {DEFAULT_MAX_MEMORY // 2**20})")
    run.add_argument("--max-depth", type=_positive, default=DEFAULT_MAX_DEPTH,
                     help=f"nested non-tail calls allowed (default {DEFAULT_MAX_DEPTH})")
    run.set_defaults(handler=run_command)

    compile_ = subparsers.add_parser("compile", help="compile a ChatML program to bytecode")
    _common(compile_)
    compile_.add_argument("-o", "--output", required=True, help="where to write the bytecode")
    compile_.set_defaults(handler=compile_command)

    dis = subparsers.add_parser("dis", help="print the bytecode of a ChatML program")
    _common(dis)
    dis.add_argument("--python", action="store_true",
                     help="print the Python the VM generates instead of the bytecode")
    dis.add_argument("--code", type=_index, default=None, metavar="N",
                     help="only code object N (0 is the top level)")
    dis.set_defaults(handler=dis_command)


def _report(diagnostics: Sequence[Any], fmt: str) -> None:
    from chatcommon.render import render_all_text, render_json

    if not diagnostics:
        return
    if fmt == "json":
        sys.stderr.write(render_json(diagnostics) + "\n")
    else:
        sys.stderr.write(render_all_text(diagnostics))
    sys.stderr.flush()


def _read(path: str, fmt: str) -> bytes | None:
    from chatcommon.diagnostics import Diagnostic

    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as error:
        _report([Diagnostic.for_file(path, "chatml.unreadable_file",
                                     f"cannot read {path}: {error.strerror or error}",
                                     phase="input")], fmt)
        return None


def _build(args: argparse.Namespace) -> tuple[Any, int]:
    """(artifact, 0) or (None, exit status)."""
    from chatcommon.diagnostics import DiagnosticError
    from chatml.build import UnreadableInput, build_file
    from chatml.install import MissingImplementations

    data = _read(args.file, args.format)
    if data is None:
        return None, EXIT_USAGE
    try:
        artifact = build_file(args.file, data, surface=args.surface,
                              use_cache=not args.no_cache)
    except KeyError as error:
        sys.stderr.write(f"chatml: unknown surface {error}\n")
        return None, EXIT_USAGE
    except MissingImplementations as error:
        sys.stderr.write(f"chatml: cannot run with this surface: {error}\n")
        return None, EXIT_USAGE
    except UnreadableInput as error:
        _report(error.diagnostics, args.format)
        return None, EXIT_USAGE
    except DiagnosticError as error:
        _report(error.diagnostics, args.format)
        return None, EXIT_ERROR
    return artifact, EXIT_OK


def run_command(args: argparse.Namespace) -> int:
    from chatcommon.diagnostics import Diagnostic, DiagnosticError
    from chatml.build import runtime_values
    from chatml.bytecode.serialize import BytecodeFormatError
    from chatml.calls import ChatMLRuntimeError
    from chatml.limits import Limits
    from chatml.vm.loader import load
    from chatml.vm.run import on_large_stack, run_program

    artifact, status = _build(args)
    if artifact is None:
        return status
    _report(artifact.warnings, args.format)
    limits = Limits(max_steps=args.max_steps, max_memory=args.max_memory * 2**20,
                    max_depth=args.max_depth)
    from chatml.install import MissingImplementations

    try:
        program = load(artifact.module, runtime_values(artifact.module.surface), artifact.source)
    except MissingImplementations as error:
        sys.stderr.write(f"chatml: cannot run with this surface: {error}\n")
        return EXIT_USAGE
    except DiagnosticError as error:
        _report(error.diagnostics, args.format)
        return EXIT_ERROR
    except BytecodeFormatError as error:  # reading validated it: only a reader bug gets here
        _report([Diagnostic.for_file(args.file, "chatml.bad_bytecode",
                                     f"invalid bytecode: {error}", phase="parse")], args.format)
        return EXIT_ERROR

    def execute() -> None:
        run_program(program, limits)

    try:
        on_large_stack(execute)
    except ChatMLRuntimeError as error:
        sys.stdout.flush()
        _report(error.diagnostics, args.format)
        return EXIT_RUNTIME
    finally:
        sys.stdout.flush()
    return EXIT_OK


def compile_command(args: argparse.Namespace) -> int:
    from chatcommon.atomic import atomic_write_bytes
    from chatcommon.output import unwritable_output
    from chatml.bytecode.serialize import serialize

    artifact, status = _build(args)
    if artifact is None:
        return status
    _report(artifact.warnings, args.format)
    try:
        atomic_write_bytes(args.output, serialize(artifact.module), create_folders=False)
    except OSError as error:
        _report([unwritable_output(args.output, error, "chatml.unwritable_output")], args.format)
        return EXIT_USAGE
    return EXIT_OK


def _index(text: str) -> int:
    try:
        value = parse_int(text)
    except ValueError:
        value = None
    if value is None or value < 0:
        raise argparse.ArgumentTypeError(f"expected a code object index (0, 1, ...), "
                                         f"got {abbreviate_digits(text)!r}")
    return value


def dis_command(args: argparse.Namespace) -> int:
    from chatml.disassembler import disassemble, python_listing

    artifact, status = _build(args)
    if artifact is None:
        return status
    _report(artifact.warnings, args.format)
    module = artifact.module
    code = getattr(args, "code", None)
    if code is not None and code >= len(module.codes):
        sys.stderr.write(f"chatml: no code object {code}: {args.file} has "
                         f"{len(module.codes)} (0 to {len(module.codes) - 1})\n")
        return EXIT_USAGE
    if not getattr(args, "python", False):
        sys.stdout.write(disassemble(module, code))
        return EXIT_OK
    translation, status = _translation(artifact, args.format)
    if translation is None:
        return status
    sys.stdout.write(python_listing(module, translation.source, translation.line_map, code))
    return EXIT_OK


def _translation(artifact: Any, fmt: str) -> tuple[Any, int]:
    """(the generated Python of the artifact's module, 0) or (None, exit status)."""
    from chatcommon.diagnostics import DiagnosticError
    from chatml.build import runtime_values
    from chatml.install import MissingImplementations
    from chatml.vm.loader import translation_for

    try:
        return translation_for(artifact.module, runtime_values(artifact.module.surface)), EXIT_OK
    except MissingImplementations as error:
        sys.stderr.write(f"chatml: cannot run with this surface: {error}\n")
        return None, EXIT_USAGE
    except DiagnosticError as error:
        _report(error.diagnostics, fmt)
        return None, EXIT_ERROR


def main(argv: Sequence[str] | None = None) -> int:
    """Stand-alone entry (``python -m chatml.cli_run``) with just these three commands."""
    parser = argparse.ArgumentParser(prog="chatml")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.handler(args))


if __name__ == "__main__":
    raise SystemExit(main())
