"""The embedding API: :class:`Engine` compiles ChatML for a host, :class:`Script` runs it.

::

    from chatml.engine import Engine
    from chatml.limits import Limits

    engine = Engine("core", limits=Limits(max_steps=1_000_000))
    engine.register_function("greet", "string -> string", lambda name: f"hello, {name}")
    engine.register_module("Geo", {"dist": ("float -> float -> float", lambda a, b: abs(a - b))})
    script = engine.compile('let shout s = String.to_upper(greet(s))')
    script.run()                       # the top level (prints go to the engine's sink)
    script.call("shout", "ann")        # -> "HELLO, ANN" (Python values in and out)

* **Compiling** (:meth:`Engine.compile`) parses, typechecks against the
  engine's surface (a builtin surface plus the registered host values, each
  with its ChatML type), resolves and compiles to bytecode, and loads it.
  Parse, type and resolution errors raise
  :class:`~chatcommon.diagnostics.DiagnosticError` carrying every diagnostic;
  nothing runs.
* **Running** (:meth:`Script.run`, :meth:`Script.call`, :meth:`Script.run_task`,
  :meth:`Engine.run_task`) happens inside one VM run each, under the engine's
  :class:`~chatml.limits.Limits`, printing to its ``sink`` (standard output
  by default), transactional if the engine is (a failed run then leaves
  every pre-existing ChatML array, ref and table as it was, DECISIONS 5).
  Runtime errors raise :class:`~chatml.calls.ChatMLRuntimeError` (a
  positioned diagnostic with a ChatML stack trace).
* **Values cross** by the ChatML types of the function or binding
  (:mod:`chatml.engine.convert`): ``int``/``float``/``string``/``bool``/unit
  as Python scalars, arrays as lists, records as dicts, ``json`` as plain JSON
  data, functions as callables; a host value of the wrong shape raises
  :class:`~chatml.engine.convert.ConversionError` before anything runs.
* **Tasks** a script builds are interpreted by :mod:`chatml.tasks` against the
  host's :class:`~chatml.tasks.OperationRegistry`; a host offers capabilities
  as exports made with :meth:`Engine.perform` / :meth:`Engine.spawn`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from chatcommon.diagnostics import Diagnostic, DiagnosticError
from chatcommon.sources import SourceFile
from chatml import calls
from chatml.ast import Program
from chatml.build import not_utf8_message
from chatml.engine.convert import (
    ChatMLFunction,
    ConversionError,
    to_chatml,
    to_python,
    wrap_python_function,
)
from chatml.engine.host_surface import (
    Entry,
    HostRegistrationError,
    HostSurface,
    HostValue,
    entry_body,
    parse_type,
)
from chatml.install import task_builder
from chatml.limits import METER, Limits
from chatml.pipeline import Parsed, builtin_names, check, finish, parse
from chatml.tasks import Completed, Operation, OperationRegistry, TaskInterpreter, TaskOutcome
from chatml.typecheck.program import TypeResult
from chatml.typecheck.types import TConstr, TFun, Type, show_signature
from chatml.typecheck.types import resolve as resolve_type
from chatml.values import Task, Value, kind_name
from chatml.vm.loader import LoadedProgram, load
from chatml.vm.run import call as vm_call
from chatml.vm.run import run_boundary, run_program

Sink = Callable[[str], Any]


class TaskOperation:
    """A host export that only builds a task node (see :meth:`Engine.perform`)."""

    def __init__(self, operation: str, spawn: bool) -> None:
        self.operation = operation
        self.spawn = spawn


class Engine:
    """Compiles and runs ChatML for one host: a surface, host values, limits and an output sink."""

    def __init__(self, surface: str = "core", *, limits: Limits | None = None,
                 sink: Sink | None = None, transactional: bool = False) -> None:
        self._host = HostSurface(surface)
        self.limits = limits or Limits()
        self.sink = sink
        self.transactional = transactional

    # ----------------------------------------------------------------- configuration

    def set_limits(self, *, max_steps: int | None = None, max_memory: int | None = None,
                   max_depth: int | None = None) -> None:
        """Change the budgets of later runs (``None`` keeps a budget as it is)."""
        current = self.limits
        self.limits = Limits(
            max_steps=current.max_steps if max_steps is None else max_steps,
            max_memory=current.max_memory if max_memory is None else max_memory,
            max_depth=current.max_depth if max_depth is None else max_depth,
        )

    def register_function(self, name: str, type_text: str, function: Callable[..., Any]) -> None:
        """A host global function: scripts call ``name(...)`` with the ChatML type ``type_text``.

        ``function`` receives Python values and returns one (converted by the
        type). It may raise :class:`~chatml.values.ChatMLFailure` to fail with
        a message of its choice.
        """
        entry = parse_type(type_text)
        self._host.add_global(name, HostValue(entry, self._function_value(name, entry, function),
                                              type_text))

    def register_value(self, name: str, type_text: str, value: Any) -> None:
        """A host global constant of the ChatML type ``type_text`` (converted once, now)."""
        entry = parse_type(type_text)
        converted = to_chatml(value, entry_body(entry), name, self._call)
        self._host.add_global(name, HostValue(entry, converted, type_text))

    def register_module(self, name: str, members: Mapping[str, tuple[str, Any]]) -> None:
        """A host module: ``{export: (type text, Python function or value)}``."""
        exports: dict[str, HostValue] = {}
        for export, (type_text, member) in members.items():
            entry = parse_type(type_text)
            qualified = f"{name}.{export}"
            if isinstance(resolve_type(entry_body(entry)), TFun) or isinstance(member,
                                                                               TaskOperation):
                value = self._function_value(qualified, entry, member)
            else:
                value = to_chatml(member, entry_body(entry), qualified, self._call)
            exports[export] = HostValue(entry, value, type_text)
        self._host.add_module(name, exports)

    @staticmethod
    def perform(operation: str) -> TaskOperation:
        """A capability export: calling it builds ``Perform(operation, args)`` for the host.

        Register it with a type returning a task, e.g.
        ``{"note": ("string -> int task", engine.perform("Notes.note"))}``; the
        host's :class:`~chatml.tasks.Operation` named ``operation`` runs it.
        """
        return TaskOperation(operation, spawn=False)

    @staticmethod
    def spawn(operation: str) -> TaskOperation:
        """Like :meth:`perform`, building ``Spawn(operation, args)`` (an asynchronous operation)."""
        return TaskOperation(operation, spawn=True)

    def _function_value(self, name: str, entry: Entry, function: Callable[..., Any]) -> Value:
        body = resolve_type(entry_body(entry))
        if not isinstance(body, TFun):
            raise HostRegistrationError(f"{name}: a host function needs a function type, "
                                        f"not {show_signature(body)}")
        if isinstance(function, TaskOperation):
            result = resolve_type(body.result)
            if not (isinstance(result, TConstr) and result.name == "task"):
                raise HostRegistrationError(f"{name}: an operation's type must return a task, "
                                            f"not {show_signature(result)}")
            return task_builder(name, "spawn" if function.spawn else "perform",
                                      function.operation, len(body.params))
        if not callable(function):
            raise HostRegistrationError(f"{name}: expected a callable, got {type(function).__name__}")
        return wrap_python_function(name, function, body, self._call)

    # ----------------------------------------------------------------- compiling

    def compile(self, source: str, name: str = "<script>") -> Script:
        """Compile ``source``; ``DiagnosticError`` with every parse/type error (nothing runs)."""
        text = source[1:] if source.startswith("\ufeff") else source
        return self.compile_source(SourceFile(name, text))

    def compile_source(self, source: SourceFile, *, host: HostSurface | None = None) -> Script:
        """Compile ``source`` (positions in its file); ``DiagnosticError`` on any error."""
        return self.compile_parsed(parse(source), host=host)

    def compile_file(self, path: str | os.PathLike[str]) -> Script:
        """Compile a ChatML source file (UTF-8; unreadable input is a diagnostic)."""
        name = os.fspath(path)
        try:
            with open(name, "rb") as handle:
                data = handle.read()
        except OSError as error:
            raise DiagnosticError(Diagnostic.for_file(
                name, "chatml.unreadable_file", f"cannot read {name}: {error.strerror or error}",
                phase="input")) from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise DiagnosticError(Diagnostic.for_file(
                name, "chatml.unreadable_file", not_utf8_message(name, error),
                phase="input")) from None
        return self.compile(text, name)

    def compile_program(self, program: Program, file: SourceFile, *,
                        warnings: tuple[Diagnostic, ...] = (),
                        host: HostSurface | None = None) -> Script:
        """Check, resolve, compile and load a program of ``file`` (for tools building trees)."""
        return self.compile_parsed(Parsed(file, program, warnings), host=host)

    def compile_parsed(self, parsed: Parsed, *, host: HostSurface | None = None) -> Script:
        """The rest of the pipeline (:mod:`chatml.pipeline`) against this engine's surface."""
        host = (host or self._host).copy()
        with host.checking() as surface:
            checked = check(parsed, surface)
        values = host.runtime_values()
        compiled = finish(checked, builtin_names(values))
        loaded = load(compiled.module, values, parsed.source)
        return Script(self, loaded, checked.types, compiled.warnings, host)

    # ----------------------------------------------------------------- running

    def _call(self, function: Value, args: tuple[Value, ...]) -> Value:
        """Apply a ChatML function value: inside the current run, or as a run of its own."""
        if METER.active:
            return calls.apply(function, args)
        return vm_call(function, args, self.limits, sink=self.sink,
                       transactional=self.transactional)

    def run(self, thunk: Callable[[], Any]) -> Any:
        """Run ``thunk`` as one ChatML run under the engine's limits, sink and transactions."""
        return run_boundary(thunk, self.limits, sink=self.sink, transactional=self.transactional)

    def run_task(self, task: Value, operations: OperationRegistry | Iterable[Operation] = (),
                 **options: Any) -> TaskOutcome:
        """Interpret ``task`` (stdlib spec 8) in one run; ``options`` as :class:`TaskInterpreter`."""
        registry = operations if isinstance(operations, OperationRegistry) else \
            OperationRegistry(operations)
        interpreter = TaskInterpreter(registry, **options)
        return self.run(lambda: interpreter.run(task))


class Script:
    """A compiled, loaded script. :meth:`run` its top level once, then call into it."""

    def __init__(self, engine: Engine, program: LoadedProgram, types: TypeResult,
                 warnings: tuple[Diagnostic, ...], host: HostSurface) -> None:
        self.engine = engine
        self.program = program
        self.types = types
        self.warnings = warnings
        self.host = host
        self.ran = False

    @property
    def name(self) -> str:
        return self.program.module.source_name

    def val_lines(self) -> list[str]:
        """``val NAME : TYPE`` for every top-level binding, in order."""
        return self.types.val_lines()

    def type_of(self, name: str) -> str:
        """The printed type of the top-level binding ``name``."""
        return show_signature(self._type(name))

    def _type(self, name: str) -> Type:
        found = self.types.type_of(name)
        if found is None:
            raise KeyError(f"{self.name} has no top-level binding {name!r}")
        return found

    def run(self) -> None:
        """Run the top level (once); runtime errors raise ``ChatMLRuntimeError``."""
        if self.ran:
            raise RuntimeError(f"{self.name} has already run")
        run_program(self.program, self.engine.limits, sink=self.engine.sink,
                    transactional=self.engine.transactional)
        self.ran = True

    def value(self, name: str) -> Value:
        """The raw ChatML value of a top-level binding (after :meth:`run`)."""
        if not self.ran:
            raise RuntimeError(f"run() {self.name} before reading its bindings")
        top = self.program.top_level()
        if name not in top:
            raise KeyError(f"{self.name} has no top-level binding {name!r}")
        return top[name]

    def get(self, name: str) -> Any:
        """A top-level binding as a Python value (functions become callables)."""
        return to_python(self.value(name), self._type(name), self.engine._call, name)

    def function(self, name: str) -> ChatMLFunction:
        """A top-level function as a Python callable (arguments and result converted)."""
        function = self.get(name)
        if not isinstance(function, ChatMLFunction):
            raise TypeError(f"{name} is not a function: {self.type_of(name)}")
        return function

    def call(self, name: str, *args: Any) -> Any:
        """Call the top-level function ``name`` with Python values; returns a Python value."""
        return self.function(name)(*args)

    def run_task(self, name: str, *args: Any,
                 operations: OperationRegistry | Iterable[Operation] = (),
                 **options: Any) -> TaskOutcome:
        """Call ``name(args)`` -- it must return a task -- and interpret the task, in one run.

        A :class:`~chatml.tasks.Completed` outcome's value is converted to
        Python by the task's type; effects keep their ChatML values.
        """
        function = self.function(name)
        result = resolve_type(function.type.result)
        if not (isinstance(result, TConstr) and result.name == "task"):
            raise TypeError(f"{name} does not return a task: {self.type_of(name)}")
        if len(args) != len(function.type.params):
            raise ConversionError(f"{name} takes {len(function.type.params)} argument(s), "
                                  f"got {len(args)}")
        converted = tuple(to_chatml(arg, param, f"{name}: argument {i + 1}", self.engine._call)
                          for i, (arg, param) in enumerate(zip(args, function.type.params,
                                                               strict=True)))
        registry = operations if isinstance(operations, OperationRegistry) else \
            OperationRegistry(operations)
        interpreter = TaskInterpreter(registry, **options)

        def go() -> TaskOutcome:
            task = calls.apply(function.function, converted)
            if not isinstance(task, Task):
                raise TypeError(f"{name} returned {kind_name(task)}, not a task")
            return interpreter.run(task)

        outcome: TaskOutcome = self.engine.run(go)
        if isinstance(outcome, Completed):
            value = to_python(outcome.value, result.args[0], self.engine._call)
            return Completed(value, outcome.effects)
        return outcome


__all__ = ["ConversionError", "Engine", "HostRegistrationError", "Script", "TaskOperation"]
