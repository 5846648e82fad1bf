"""The ``chatml run``, ``chatml compile`` and ``chatml dis`` subcommands (thin over the library).

``run FILE [--max-steps N] [--max-memory MB] [--max-depth N] [--format text|json]
[--surface NAME] [--no-cache]`` runs a source or bytecode file. Exit status: 0
success, 1 parse/type error or invalid bytecode (nothing runs), 3 runtime
error (after flushing what the script printed), 2 usage error or unreadable
file. ``compile FILE -o OUT`` writes the bytecode (atomically); ``dis FILE
[--python] [--code N]`` prints the bytecode listing (``--python``: the Python the
VM generates, each line with the instruction it comes from; ``--code N``: one code
object). Diagnostics go to stderr, as text or, with
``--format json``, as exactly one JSON document ``{"diagnostics": [...]}``
per command, whatever phases reported (build warnings, a runtime error,
usage problems), written even when empty; types in its messages are not
cut short. Source builds report their warnings in every command (a build
with warnings is not cached, so a cached build has none to report).

:func:`register` adds the three subcommands to an ``argparse`` subparser set
(``chatml/cli.py`` calls it); :func:`run_command`, :func:`compile_command` and
:func:`dis_command` take the parsed arguments and return the exit status.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
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


def _index(text: str) -> int:
    try:
        value = parse_int(text)
    except ValueError:
        value = None
    if value is None or value < 0:
        raise argparse.ArgumentTypeError(f"expected a code object index (0, 1, ...), "
                                         f"got {abbreviate_digits(text)!r}")
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
                     help="print the Python the VM generates, each line with its instruction")
    dis.add_argument("--code", type=_index, default=None, metavar="N",
                     help="only code object N (0 is the top level)")
    dis.set_defaults(handler=dis_command)


class _Report:
    """Where a command's diagnostics go, whatever phases report them.

    Text: each batch is written to stderr at once (warnings before what the
    script prints). JSON: they are collected and :meth:`finish` writes exactly
    one document ``{"diagnostics": [...]}`` to stderr, even when empty, so a
    tool can always ``json.load`` it.
    """

    def __init__(self, fmt: str) -> None:
        self.fmt = fmt
        self.collected: list[Any] = []

    def add(self, diagnostics: Sequence[Any]) -> None:
        if self.fmt == "json":
            self.collected.extend(diagnostics)
        elif diagnostics:
            from chatcommon.render import render_all_text

            sys.stderr.write(render_all_text(diagnostics))
            sys.stderr.flush()

    def usage(self, path: str, code: str, message: str) -> None:
        """A usage problem: ``chatml: MESSAGE`` as text, a diagnostic in JSON."""
        if self.fmt == "json":
            from chatcommon.diagnostics import Diagnostic

            self.collected.append(Diagnostic.for_file(path, code, message, phase="input"))
        else:
            sys.stderr.write(f"chatml: {message}\n")

    def finish(self) -> None:
        if self.fmt == "json":
            from chatcommon.render import render_json

            sys.stderr.write(render_json(self.collected) + "\n")
            sys.stderr.flush()


def _reported(command: Callable[[argparse.Namespace, _Report], int]
              ) -> Callable[[argparse.Namespace], int]:
    """``command`` with its report finished (one JSON document) however it ends.

    With ``--format json`` types in messages are printed in full.
    """

    def handler(args: argparse.Namespace) -> int:
        from chatcommon.type_length import TYPE_LENGTH_LIMIT, type_length_limited

        report = _Report(args.format)
        try:
            with type_length_limited(None if args.format == "json" else TYPE_LENGTH_LIMIT):
                return command(args, report)
        except Exception as error:  # a bug: reported in the same (single) JSON document
            from chatcommon.internal_errors import internal_error

            report.add([internal_error("chatml", args.file, error)])
            return EXIT_ERROR
        finally:
            sys.stdout.flush()
            report.finish()

    handler.__name__ = command.__name__
    handler.__doc__ = command.__doc__
    return handler


def _read(path: str, report: _Report) -> bytes | None:
    from chatcommon.diagnostics import Diagnostic

    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as error:
        report.add([Diagnostic.for_file(path, "chatml.unreadable_file",
                                        f"cannot read {path}: {error.strerror or error}",
                                        phase="input")])
        return None


def _build(args: argparse.Namespace, report: _Report) -> tuple[Any, int]:
    """(artifact, 0) or (None, exit status); the build's warnings are reported."""
    from chatcommon.diagnostics import DiagnosticError
    from chatml.build import UnreadableInput, build_file
    from chatml.install import MissingImplementations

    data = _read(args.file, report)
    if data is None:
        return None, EXIT_USAGE
    try:
        artifact = build_file(args.file, data, surface=args.surface,
                              use_cache=not args.no_cache)
    except KeyError as error:
        report.usage(args.file, "chatml.unknown_surface", f"unknown surface {error}")
        return None, EXIT_USAGE
    except MissingImplementations as error:
        report.usage(args.file, "chatml.missing_implementations",
                     f"cannot run with this surface: {error}")
        return None, EXIT_USAGE
    except UnreadableInput as error:
        report.add(error.diagnostics)
        return None, EXIT_USAGE
    except DiagnosticError as error:
        report.add(error.diagnostics)
        return None, EXIT_ERROR
    report.add(artifact.warnings)
    return artifact, EXIT_OK


def _run(args: argparse.Namespace, report: _Report) -> int:
    from chatcommon.diagnostics import Diagnostic, DiagnosticError
    from chatml.build import runtime_values
    from chatml.bytecode.serialize import BytecodeFormatError
    from chatml.calls import ChatMLRuntimeError
    from chatml.install import MissingImplementations
    from chatml.limits import Limits
    from chatml.vm.loader import load
    from chatml.vm.run import on_large_stack, run_program

    artifact, status = _build(args, report)
    if artifact is None:
        return status
    limits = Limits(max_steps=args.max_steps, max_memory=args.max_memory * 2**20,
                    max_depth=args.max_depth)
    try:
        program = load(artifact.module, runtime_values(artifact.module.surface), artifact.source)
    except MissingImplementations as error:
        report.usage(args.file, "chatml.missing_implementations",
                     f"cannot run with this surface: {error}")
        return EXIT_USAGE
    except DiagnosticError as error:
        report.add(error.diagnostics)
        return EXIT_ERROR
    except BytecodeFormatError as error:  # reading validated it: only a reader bug gets here
        report.add([Diagnostic.for_file(args.file, "chatml.bad_bytecode",
                                        f"invalid bytecode: {error}", phase="parse")])
        return EXIT_ERROR

    def execute() -> None:
        run_program(program, limits)

    try:
        on_large_stack(execute)
    except ChatMLRuntimeError as error:
        sys.stdout.flush()
        report.add(error.diagnostics)
        return EXIT_RUNTIME
    return EXIT_OK


def _compile(args: argparse.Namespace, report: _Report) -> int:
    from chatcommon.atomic import atomic_write_bytes
    from chatcommon.output import unwritable_output
    from chatml.bytecode.serialize import serialize

    artifact, status = _build(args, report)
    if artifact is None:
        return status
    try:
        atomic_write_bytes(args.output, serialize(artifact.module), create_folders=False)
    except OSError as error:
        report.add([unwritable_output(args.output, error, "chatml.unwritable_output")])
        return EXIT_USAGE
    return EXIT_OK


def _dis(args: argparse.Namespace, report: _Report) -> int:
    from chatml.disassembler import disassemble, python_listing

    artifact, status = _build(args, report)
    if artifact is None:
        return status
    module = artifact.module
    code = getattr(args, "code", None)
    if code is not None and code >= len(module.codes):
        report.usage(args.file, "chatml.no_such_code",
                     f"no code object {code}: {args.file} has {len(module.codes)} "
                     f"(0 to {len(module.codes) - 1})")
        return EXIT_USAGE
    if not getattr(args, "python", False):
        sys.stdout.write(disassemble(module, code))
        return EXIT_OK
    translation, status = _translation(artifact, args.file, report)
    if translation is None:
        return status
    sys.stdout.write(python_listing(module, translation.source, translation.line_map, code))
    return EXIT_OK


def _translation(artifact: Any, path: str, report: _Report) -> tuple[Any, int]:
    """(the generated Python of the artifact's module, 0) or (None, exit status)."""
    from chatcommon.diagnostics import DiagnosticError
    from chatml.build import runtime_values
    from chatml.install import MissingImplementations
    from chatml.vm.loader import translation_for

    try:
        return translation_for(artifact.module, runtime_values(artifact.module.surface)), EXIT_OK
    except MissingImplementations as error:
        report.usage(path, "chatml.missing_implementations",
                     f"cannot run with this surface: {error}")
        return None, EXIT_USAGE
    except DiagnosticError as error:
        report.add(error.diagnostics)
        return None, EXIT_ERROR


run_command = _reported(_run)
compile_command = _reported(_compile)
dis_command = _reported(_dis)


def main(argv: Sequence[str] | None = None) -> int:
    """Stand-alone entry (``python -m chatml.cli_run``) with just these three commands."""
    parser = argparse.ArgumentParser(prog="chatml")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.handler(args))


if __name__ == "__main__":
    raise SystemExit(main())
