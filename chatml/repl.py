"""``chatml repl``: the interactive ChatML toplevel.

The core is a pure step function over immutable state, testable without a
terminal::

    state = ReplState.start()
    state, output = step(state, "let x = 1 + 2")     # output == "val x : int = 3\n"
    state, output = step(state, "x * 2")             # "- : int = 6\n"

* Input is read line by line and collected until it forms a complete
  program: it parses, or it ends with ``;;`` (which forces evaluation; a
  parse error then shows). While the parser only lacks the rest of the input
  (an open ``(``, ``let x =``, an unterminated comment...), the prompt
  changes to ``...`` and the next line is appended.
* Each complete input is typechecked and compiled against the core surface
  plus everything earlier inputs defined (their inferred types, polymorphism
  included, and their values), then run (transactionally, under the limits):
  every definition is answered ``val NAME : TYPE = VALUE``, a module
  ``module M``, a type declaration ``type t``, and an expression that is not
  unit ``- : TYPE = VALUE``. What the input prints comes first.
* Errors -- parse, type, runtime (with the limits' errors) -- are shown as
  diagnostics and never end the session; an input that fails defines nothing.
  So is a bug that escapes (``chatml.internal_error``, positioned in the input
  when possible), as at the command boundary of the other subcommands.
* Commands: ``:type EXPR`` (the type, nothing runs), ``:load FILE`` (evaluate
  a file as one input), ``:help``, ``:quit``.

:func:`run_repl` is the prompt_toolkit loop (history in a file written
atomically, see :class:`AtomicFileHistory`), :func:`run_lines` the same without
a terminal (input piped in); :func:`register` adds the ``repl`` subcommand to
``chatml``'s argument parser.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from chatcommon.atomic import atomic_write_text
from chatml.limits import Limits

if TYPE_CHECKING:  # the toplevel's machinery is imported on first use: `chatml --help` stays fast
    from chatcommon.diagnostics import Diagnostic
    from chatml import ast
    from chatml.engine.api import Script
    from chatml.engine.host_surface import HostSurface
    from chatml.values import Value

PROMPT = "chatml> "
CONTINUATION = "   ...> "
MAX_SHOWN = 2000
"""Values whose text is longer than this many characters are shown cut short."""
RESULT_PREFIX = "__repl_result_"
HELP = """\
Enter ChatML definitions and expressions; an input that does not parse yet continues on
the next line (end it with ;; to evaluate it as it is).
  :type EXPR   show the type of EXPR without running it
  :load FILE   evaluate a ChatML file as one input
  :help        this text
  :quit        leave (also Ctrl-D)
"""
_INCOMPLETE_CODES = frozenset(("chatml.unterminated_comment", "chatml.unterminated_string"))


@attrs.frozen
class ReplState:
    """Everything the toplevel knows; every step returns a new state."""

    host: HostSurface
    """The core surface plus the values earlier inputs defined (with their types)."""
    type_prelude: tuple[ast.Stmt, ...] = ()
    """The type declarations entered so far (re-checked with every input)."""
    limits: Limits = attrs.field(factory=Limits)
    buffer: str = ""
    """Lines of an input that is not complete yet."""
    count: int = 0
    """Inputs evaluated so far (names the input's pseudo-file ``<input N>``)."""
    finished: bool = False

    @classmethod
    def start(cls, surface: str = "core", limits: Limits | None = None) -> ReplState:
        from chatml.engine.host_surface import HostSurface

        return cls(HostSurface(surface), limits=limits or Limits())

    @property
    def prompt(self) -> str:
        return CONTINUATION if self.buffer else PROMPT


def step(state: ReplState, line: str) -> tuple[ReplState, str]:
    """Feed one line; returns the new state and what to print (possibly nothing).

    An exception that escapes (a bug of the toolchain) is answered with one
    ``chatml.internal_error`` diagnostic and the session goes on, as after any error.
    """
    try:
        return _step(state, line)
    except Exception as error:
        return attrs.evolve(state, buffer=""), _internal_error(f"<input {state.count + 1}>", error)


def _internal_error(name: str, error: BaseException) -> str:
    """The ``chatml.internal_error`` diagnostic (positioned in input ``name`` when the failing
    code was working on one of its spans), rendered."""
    from chatcommon.internal_errors import internal_error

    return _diagnostics([internal_error("chatml", name, error)])


def _step(state: ReplState, line: str) -> tuple[ReplState, str]:
    if not state.buffer and line.strip().startswith(":"):
        return _command(state, line.strip())
    text = state.buffer + line if not state.buffer else state.buffer + "\n" + line
    forced = text.rstrip().endswith(";;")
    if forced:
        text = text.rstrip()[:-2].rstrip()
    if not text.strip():
        return attrs.evolve(state, buffer=""), ""
    if not forced and _needs_more(text):
        return attrs.evolve(state, buffer=text), ""
    return evaluate(attrs.evolve(state, buffer=""), text)


def interrupt(state: ReplState) -> ReplState:
    """Ctrl-C: drop a half-typed input."""
    return attrs.evolve(state, buffer="")


def _needs_more(text: str) -> bool:
    """True when ``text`` fails to parse only because it stops too early."""
    from chatcommon.diagnostics import DiagnosticError
    from chatcommon.sources import SourceFile
    from chatml.pipeline import parse

    try:
        parse(SourceFile("<string>", text))
    except DiagnosticError as error:
        first = error.first
        return (first.code in _INCOMPLETE_CODES
                or "unexpected end of input" in first.message)
    return False


# --------------------------------------------------------------------------- evaluation


def evaluate(state: ReplState, text: str, name: str | None = None) -> tuple[ReplState, str]:
    """Check, compile and run one complete input; bindings carry over on success. A bug
    that escapes is one ``chatml.internal_error`` (positioned in the input) and defines
    nothing."""
    number = state.count + 1
    name = name or f"<input {number}>"
    state = attrs.evolve(state, count=number)
    try:
        return _evaluate(state, text, name)
    except Exception as error:
        return state, _internal_error(name, error)


def _evaluate(state: ReplState, text: str, name: str) -> tuple[ReplState, str]:
    from chatcommon.diagnostics import DiagnosticError
    from chatcommon.sources import SourceFile
    from chatml import ast
    from chatml.calls import ChatMLRuntimeError
    from chatml.engine.api import Engine
    from chatml.pipeline import parse

    output: list[str] = []
    file = SourceFile(name, text)
    try:
        parsed = parse(file)
    except DiagnosticError as error:
        return state, _diagnostics(error.diagnostics)
    statements, results = _name_results(parsed.program.statements)
    types = tuple(s for s in parsed.program.statements if isinstance(s, ast.TypeStmt))
    program = ast.Program(state.type_prelude + statements, parsed.program.span)
    engine = Engine(state.host.base.name, limits=state.limits, sink=output.append,
                    transactional=True)
    try:
        script = engine.compile_program(program, file, warnings=parsed.warnings,
                                        host=state.host)
    except DiagnosticError as error:
        return state, _diagnostics(error.diagnostics)
    try:
        script.run()
    except ChatMLRuntimeError as error:
        return state, "".join(output) + _diagnostics(error.diagnostics)
    report = [_diagnostics(script.warnings)] if script.warnings else []
    host = state.host.copy()
    report += _carry_over(script, host, results)
    report += [f"type {statement.name}\n" for statement in types]
    new_state = attrs.evolve(state, host=host, type_prelude=state.type_prelude + types)
    return new_state, "".join(output) + "".join(report)


def _name_results(statements: Iterable[ast.Stmt]) -> tuple[tuple[ast.Stmt, ...], set[str]]:
    """Expression statements become ``let __repl_result_N = e`` so their values can be shown."""
    from chatml import ast

    named: list[ast.Stmt] = []
    results: set[str] = set()
    for statement in statements:
        if isinstance(statement, ast.ExprStmt):
            name = f"{RESULT_PREFIX}{len(results)}"
            results.add(name)
            statement = ast.LetStmt(name, statement.expr, statement.span,
                                    name_span=statement.span)
        named.append(statement)
    return tuple(named), results


def _carry_over(script: Script, host: HostSurface, results: set[str]) -> list[str]:
    """Make the input's top-level names visible to later inputs; the lines that report them."""
    from chatml.engine.host_surface import HostValue
    from chatml.typecheck.types import show_signature

    values = script.program.top_level()
    lines: list[str] = []
    shown: set[str] = set()
    for binding in reversed(script.types.bindings):  # the last binding of a name wins
        if binding.name in shown:
            continue
        shown.add(binding.name)
        lines.append(_describe(binding, values.get(binding.name), binding.name in results))
    for name, entry in script.types.top_level.items():
        if name in results or name not in values:
            continue
        host.add_global(name, HostValue(entry, values[name], show_signature(_body(entry))),
                        shadow=True)
    return [line for line in reversed(lines) if line]


def _body(entry: Any) -> Any:
    return getattr(entry, "body", entry)


def _describe(binding: Any, value: Value, is_result: bool) -> str:
    from chatml.typecheck.types import UNIT, resolve

    if binding.is_module:
        return f"module {binding.name}\n"
    if is_result:
        if resolve(binding.type) is UNIT:
            return ""
        return f"- : {binding.signature} = {_shown(value)}\n"
    return f"val {binding.name} : {binding.signature} = {_shown(value)}\n"


def _shown(value: Value) -> str:
    from chatml.stdlib.render import show
    from chatml.values import ChatMLFailure

    try:
        return show(value, max_chars=MAX_SHOWN, truncate=True)
    except ChatMLFailure:
        return "<a value that contains itself>"


def _diagnostics(diagnostics: Iterable[Diagnostic]) -> str:
    from chatcommon.render import render_all_text

    text = render_all_text(list(diagnostics))
    return text if text.endswith("\n") else text + "\n"


# --------------------------------------------------------------------------- commands


def _command(state: ReplState, line: str) -> tuple[ReplState, str]:
    command, _, argument = line.partition(" ")
    argument = argument.strip()
    if command in (":quit", ":q", ":exit"):
        return attrs.evolve(state, finished=True), ""
    if command in (":help", ":h", ":?"):
        return state, HELP
    if command in (":type", ":t"):
        if not argument:
            return state, "usage: :type EXPR\n"
        return state, _type_of(state, argument)
    if command in (":load", ":l"):
        if not argument:
            return state, "usage: :load FILE\n"
        return _load(state, argument)
    return state, f"unknown command {command} (try :help)\n"


def _type_of(state: ReplState, text: str) -> str:
    from chatcommon.diagnostics import DiagnosticError
    from chatcommon.sources import SourceFile
    from chatml import ast
    from chatml.engine.api import Engine
    from chatml.pipeline import parse

    name = f"<type {state.count + 1}>"
    file = SourceFile(name, text)
    try:
        parsed = parse(file)
    except DiagnosticError as error:
        return _diagnostics(error.diagnostics)
    statements = parsed.program.statements
    if len(statements) != 1 or not isinstance(statements[0], ast.ExprStmt):
        return ":type expects a single expression\n"
    named, _ = _name_results(statements)
    program = ast.Program(state.type_prelude + named, parsed.program.span)
    engine = Engine(state.host.base.name, limits=state.limits)
    try:
        script = engine.compile_program(program, file, host=state.host)
    except DiagnosticError as error:
        return _diagnostics(error.diagnostics)
    return f"- : {script.type_of(RESULT_PREFIX + '0')}\n"


def _load(state: ReplState, path: str) -> tuple[ReplState, str]:
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except OSError as error:
        return state, f"cannot read {path}: {error.strerror}\n"
    except UnicodeDecodeError as error:
        from chatml.build import not_utf8_message

        return state, not_utf8_message(path, error) + "\n"
    if text.startswith("\ufeff"):
        text = text[1:]
    return evaluate(state, text, name=path)


# --------------------------------------------------------------------------- the terminal loop


class AtomicFileHistory:
    """prompt_toolkit history kept in a file of JSON lines, rewritten atomically on every entry.

    One entry is one complete input: the lines of a multi-line input are kept
    together (prompt_toolkit's own per-line storing is switched off, and the
    loop calls :meth:`record` once the REPL has the whole input). Without a
    ``path`` the history lives in memory only.
    """

    MAX_ENTRIES = 1000

    def __init__(self, path: str | os.PathLike[str] | None) -> None:
        from prompt_toolkit.history import History

        outer = self

        class _History(History):
            def load_history_strings(self) -> Iterable[str]:
                return reversed(outer.entries)

            def store_string(self, string: str) -> None:
                outer.append(string)

            def append_string(self, string: str) -> None:
                """Each accepted line: not stored (see :meth:`AtomicFileHistory.record`)."""

            def record(self, entry: str) -> None:
                History.append_string(self, entry)

        self.path = None if path is None else Path(path)
        self.entries = self._read()
        self.history = _History()

    def record(self, lines: Sequence[str]) -> None:
        """Store one complete input (its lines joined), shown as one entry from now on."""
        entry = "\n".join(lines)
        if entry.strip():
            self.history.record(entry)

    def _read(self) -> list[str]:
        if self.path is None:
            return []
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            return []
        entries = []
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # a damaged line is skipped, never fatal
            if isinstance(entry, str):
                entries.append(entry)
        return entries[-self.MAX_ENTRIES:]

    def append(self, entry: str) -> None:
        self.entries = (self.entries + [entry])[-self.MAX_ENTRIES:]
        if self.path is None:
            return
        text = "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in self.entries)
        with contextlib.suppress(OSError):  # an unwritable history must not end the session
            atomic_write_text(self.path, text)


def default_history_path() -> Path:
    configured = os.environ.get("CHATML_HISTORY")
    return Path(configured) if configured else Path.home() / ".chatml_history"


def run_repl(state: ReplState | None = None, *, input: Any = None, output: Any = None,
             history: str | os.PathLike[str] | None = None,
             write: Callable[[str], Any] | None = None) -> ReplState:
    """The interactive loop; returns the final state (after ``:quit`` or end of input).

    ``input``/``output`` are prompt_toolkit's (tests pass a pipe input and a
    dummy output); ``write`` receives the REPL's answers (default: stdout).
    """
    from prompt_toolkit import PromptSession

    state = state or ReplState.start()
    emit = write or _stdout
    stored = AtomicFileHistory(history)
    session: PromptSession[str] = PromptSession(history=stored.history, input=input,
                                                output=output)
    pending: list[str] = []  # the lines of the input being typed
    while not state.finished:
        try:
            line = session.prompt(state.prompt)
        except KeyboardInterrupt:
            state = interrupt(state)
            pending = []
            continue
        except EOFError:
            if pending:
                stored.record(pending)
            if state.buffer:  # evaluate what was typed before leaving
                state, answer = step(state, ";;")
                if answer:
                    emit(answer)
            break
        pending.append(line)
        try:
            state, answer = step(state, line)
        except KeyboardInterrupt:  # a long evaluation stopped: the run was rolled back
            state, answer = interrupt(state), "interrupted\n"
        if not state.buffer:  # the input is complete: one history entry for all its lines
            stored.record(pending)
            pending = []
        if answer:
            emit(answer)
    return state


def run_lines(state: ReplState, lines: Iterable[str],
              write: Callable[[str], Any] | None = None) -> ReplState:
    """The toplevel without a terminal (input piped in): each line is fed to :func:`step`."""
    emit = write or _stdout
    for line in lines:
        state, answer = step(state, line.rstrip("\r\n"))
        if answer:
            emit(answer)
        if state.finished:
            return state
    if state.buffer:
        state, answer = step(state, ";;")
        if answer:
            emit(answer)
    return state


def _stdout(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


# --------------------------------------------------------------------------- command line


def repl_command(args: argparse.Namespace) -> int:
    """``chatml repl``: exit status 0 when the session ends."""
    limits = Limits(
        max_steps=args.max_steps if args.max_steps is not None else Limits().max_steps,
        max_memory=(args.max_memory * 1024 * 1024 if args.max_memory is not None
                    else Limits().max_memory),
    )
    state = ReplState.start(args.surface, limits)
    if not sys.stdin.isatty():  # piped input: no prompts, no line editing
        run_lines(state, sys.stdin)
        return 0
    history = None if args.no_history else (args.history or default_history_path())
    sys.stdout.write("ChatML toplevel -- :help for commands, :quit to leave\n")
    run_repl(state, history=history)
    return 0


def register(subparsers: Any) -> None:
    """Add ``repl`` to ``chatml``'s subcommands."""
    parser = subparsers.add_parser(
        "repl", help="interactive ChatML toplevel",
        description="Evaluate ChatML definitions and expressions interactively.")
    parser.add_argument("--surface", default="core",
                        help="builtin surface to start from (default: core)")
    parser.add_argument("--max-steps", type=int, default=None, help="step budget per input")
    parser.add_argument("--max-memory", type=int, default=None, metavar="MB",
                        help="memory budget per input, in MB")
    parser.add_argument("--history", default=None,
                        help="history file (default: $CHATML_HISTORY or ~/.chatml_history)")
    parser.add_argument("--no-history", action="store_true", help="keep no history file")
    parser.set_defaults(handler=repl_command)


__all__ = ["AtomicFileHistory", "ReplState", "evaluate", "interrupt", "register", "run_lines",
           "run_repl", "step"]
