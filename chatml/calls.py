"""The ChatML calling convention: how builtins, hosts and compiled code meet.

Status: stable

This module is the contract between the VM, the standard library and hosts.
It owns five things:

1. **Calling function values** -- :func:`apply` and :func:`apply_callback`.
   A ChatML function value is a Python callable (``chatml.values``): a
   compiled closure (a plain Python function whose positional parameters are
   the ChatML parameters) or a builtin (marked with ``@builtin``). Never call
   one directly from a builtin or a host: compiled closures may return a
   :class:`TailCall` (proper tail calls run through a trampoline), and the
   arity check, the step/memory/depth limits and the runtime-error boundary
   live in :func:`apply`::

       apply(fn, [1, 2])            # -> value; arity checked ("Function arity mismatch")
       apply_callback("Array.map", fn, [x])   # callback errors per stdlib spec 1.4

   Inside a run (a builtin called from ChatML), errors propagate as Python
   exceptions and the run boundary turns them into one positioned runtime
   diagnostic. Outside any run (a host calling a closure it kept), :func:`apply`
   opens a run itself with default :class:`~chatml.limits.Limits` and raises
   :class:`ChatMLRuntimeError` (a ``DiagnosticError``) on failure; hosts that
   want their own limits or a transaction use :mod:`chatml.vm.run`.

2. **Errors a builtin may raise.** Raise ``ChatMLFailure(message)``
   (``chatml.values``) with the exact message of the standard-library spec;
   the VM reports it as a ``Runtime error: <message>`` at the ChatML call site
   (the innermost ChatML frame), with a ChatML stack trace. ``Task.catch``
   semantics (DECISIONS 4): a handler may catch ``ChatMLFailure`` and
   :class:`ChatMLRuntimeError`, but must let :class:`~chatml.limits.LimitExceeded`
   through. Any other exception escaping a builtin is a bug in the builtin;
   it is still reported as a runtime diagnostic (``internal error in builtin``),
   never a Python traceback.

3. **Budgets and side effects for builtins.** :func:`charge_memory` (estimated
   bytes of values the builtin builds -- see :data:`chatml.limits.COST`),
   :func:`charge_steps` (work proportional to input size), :func:`emit_output`
   (what ``print`` writes; goes to the run's sink) and the undo journal of
   transactional runs: call :func:`journal_item` / :func:`journal_ref` /
   :func:`journal_whole` *before* mutating a pre-existing array, dict (Hashtbl)
   or ref, so that a failed transactional run can be rolled back
   (:func:`rollback`).

4. **Registering implementations.** Every global and module export of a
   surface is implemented by a Python function registered under its qualified
   name (``"print"``, ``"String.length"``)::

       @implements("String.length")
       def string_length(s: str) -> int: ...

   Implementations take the ChatML arguments as positional parameters. A
   fixed-arity implementation gets the spec's arity message for free when a
   host calls it with the wrong count (``length: expected exactly one
   argument``, short name); one declared with ``*args`` checks its own.

5. **Installing a surface into a run.** :func:`install` builds the runtime
   values of a surface (one value per global, one :class:`~chatml.values.Module`
   per module) from the registry, checks that every name of the surface has an
   implementation (:class:`MissingImplementations` lists the missing ones),
   and generates the implementation of every *capability* export of the table
   (effect kind ``perform``/``spawn`` plus an operation name): a builder that
   returns ``Perform(op, args)`` / ``Spawn(op, args)``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from threading import get_ident
from typing import Any

from chatcommon.diagnostics import Diagnostic, DiagnosticError
from chatml.limits import COST, METER, WORD, LimitExceeded
from chatml.values import (
    ChatMLFailure,
    Module,
    Perform,
    Spawn,
    Value,
    Variant,
    builtin,
    is_builtin,
)

__all__ = [
    "COST",
    "IMPLEMENTATIONS",
    "ChatMLFailure",
    "ChatMLRuntimeError",
    "LimitExceeded",
    "MissingImplementations",
    "TailCall",
    "apply",
    "apply_callback",
    "charge_memory",
    "charge_steps",
    "emit_output",
    "implements",
    "install",
    "journal_item",
    "journal_ref",
    "journal_whole",
    "register",
    "rollback",
]

# --------------------------------------------------------------------------- tail calls


class TailCall:
    """What a compiled closure returns for a general call in tail position.

    The caller (compiled code, or :func:`apply`) keeps calling
    ``fn(*args)`` while the result is a ``TailCall``; this keeps the Python
    stack constant across any chain of tail calls. It never escapes
    :func:`apply`.
    """

    __slots__ = ("fn", "args")

    def __init__(self, fn: Callable[..., Value], args: tuple[Value, ...]) -> None:
        self.fn = fn
        self.args = args


# --------------------------------------------------------------------------- errors


class ChatMLRuntimeError(DiagnosticError):
    """A ChatML runtime error seen from outside the run: a diagnostic with phase
    ``runtime`` (its ``hint`` holds the ChatML stack trace) plus the raw
    ``message`` and ``stack`` (``[(function name, file, line), ...]``, innermost
    first)."""

    def __init__(self, diagnostic: Diagnostic, message: str,
                 stack: list[tuple[str, str, int]] | None = None,
                 limit: LimitExceeded | None = None) -> None:
        super().__init__(diagnostic)
        self.diagnostic = diagnostic
        self.message = message
        self.stack = stack or []
        self.limit = limit

    @property
    def is_limit(self) -> bool:
        """True when a budget ran out (not catchable by ``Task.catch``)."""
        return self.limit is not None


# --------------------------------------------------------------------------- apply

_NUMBER_WORDS = {0: "zero arguments", 1: "exactly one argument", 2: "exactly two arguments",
                 3: "exactly three arguments"}


def _expected_arity(fn: Callable[..., Value]) -> int | None:
    """The positional arity of a Python function, or ``None`` when it takes ``*args``."""
    code = getattr(fn, "__code__", None)
    if code is None or code.co_flags & 0x04:  # CO_VARARGS
        return None
    count: int = code.co_argcount
    if getattr(fn, "__self__", None) is not None:  # bound method
        count -= 1
    return count


def _arity_message(fn: Callable[..., Value], expected: int) -> str:
    if not is_builtin(fn):
        return "Function arity mismatch"
    short = fn.chatml_builtin.rsplit(".", 1)[-1]  # type: ignore[attr-defined]
    words = _NUMBER_WORDS.get(expected, f"exactly {expected} arguments")
    if expected == 0:
        return f"{short}: expected zero arguments"
    return f"{short}: expected {words}"


def is_callable_value(value: Value) -> bool:
    return callable(value) and not isinstance(value, (type, Module))


def apply(fn: Value, args: Iterable[Value]) -> Value:
    """Call the ChatML function value ``fn`` with ``args`` and return its result.

    Raises ``ChatMLFailure("Trying to call a non-function value")`` or
    ``ChatMLFailure("Function arity mismatch")`` (builtins: the spec's
    ``NAME: expected ...`` message) inside a run; outside a run every failure
    comes back as :class:`ChatMLRuntimeError`.
    """
    arguments = tuple(args)
    if not METER.active or METER.owner != get_ident():
        from chatml.vm.run import call_outside_run

        return call_outside_run(fn, arguments)
    if not is_callable_value(fn):
        raise ChatMLFailure("Trying to call a non-function value")
    expected = _expected_arity(fn)
    if expected is not None and expected != len(arguments):
        raise ChatMLFailure(_arity_message(fn, expected))
    result = fn(*arguments)
    while type(result) is TailCall:
        result = result.fn(*result.args)
    return result


def apply_callback(qualified_name: str, fn: Value, args: Iterable[Value]) -> Value:
    """:func:`apply` for a higher-order builtin's callback (stdlib spec 1.4).

    A non-function is ``<Q>: expected a function``; a closure of the wrong
    arity is ``<Q>: function arity mismatch``; an error inside the callback
    propagates unchanged.
    """
    arguments = tuple(args)
    if not is_callable_value(fn):
        raise ChatMLFailure(f"{qualified_name}: expected a function")
    expected = _expected_arity(fn)
    if expected is not None and expected != len(arguments):
        raise ChatMLFailure(f"{qualified_name}: function arity mismatch")
    return apply(fn, arguments)


# --------------------------------------------------------------------------- budgets, output, journal


def charge_memory(nbytes: int) -> None:
    """Charge ``nbytes`` (an estimate) against the run's memory budget."""
    meter = METER
    meter.memory -= (nbytes + WORD - 1) // WORD
    if meter.memory < 0:
        meter.out_of_memory()


def charge_steps(steps: int) -> None:
    """Charge ``steps`` against the run's step budget."""
    METER.take(steps)


def emit_output(text: str) -> None:
    """Write ``text`` (``print`` adds the newline itself) to the run's output sink."""
    sink = METER.sink
    if sink is None:
        sys.stdout.write(text)
    else:
        sink(text)  # type: ignore[operator]


_MISSING = object()
_WHOLE = object()
_REF = object()


def journal_item(container: list[Value] | dict[Any, Value], key: Any) -> None:
    """Record ``container[key]`` (absent keys too) before it is overwritten or removed."""
    journal = METER.journal
    if journal is not None:
        if isinstance(container, list):
            journal.append((container, key, container[key]))
        else:
            journal.append((container, key, container.get(key, _MISSING)))


def journal_ref(ref: Any) -> None:
    """Record a ref cell's content before ``:=`` or ``swap_ref`` changes it."""
    journal = METER.journal
    if journal is not None:
        journal.append((ref, _REF, ref.value))


def journal_whole(container: list[Value] | dict[Any, Value]) -> None:
    """Record a whole array or dict before an in-place bulk change (fill, sort, clear)."""
    journal = METER.journal
    if journal is not None:
        journal.append((container, _WHOLE, container.copy()))


def rollback(journal: list[tuple[Any, Any, Any]]) -> None:
    """Undo the journalled mutations, newest first."""
    for container, key, old in reversed(journal):
        if key is _REF:
            container.value = old
        elif key is _WHOLE:
            if isinstance(container, list):
                container[:] = old
            else:
                container.clear()
                container.update(old)
        elif old is _MISSING:
            container.pop(key, None)
        else:
            container[key] = old
    journal.clear()


# --------------------------------------------------------------------------- registry and install

IMPLEMENTATIONS: dict[str, Value] = {}
"""The default registry: qualified name -> implementation (filled by ``@implements``)."""


def register(name: str, value: Value, registry: dict[str, Value] | None = None) -> Value:
    """Register ``value`` as the implementation of ``name`` (marking it a builtin)."""
    if callable(value) and not is_builtin(value):
        builtin(name)(value)
    (IMPLEMENTATIONS if registry is None else registry)[name] = value
    return value


def implements(name: str, registry: dict[str, Value] | None = None
               ) -> Callable[[Callable[..., Value]], Callable[..., Value]]:
    """Decorator: register the decorated function as the implementation of ``name``."""

    def decorate(function: Callable[..., Value]) -> Callable[..., Value]:
        register(name, function, registry)
        return function

    return decorate


class MissingImplementations(Exception):
    """A surface names builtins that have no registered implementation."""

    def __init__(self, surface: str, names: list[str]) -> None:
        self.names = names
        super().__init__(f"surface '{surface}' has no implementation for: " + ", ".join(names))


def _effect_of(entry: Any) -> tuple[str, str, str | None] | None:
    """``(kind, operation, adapter)`` of a capability export, or ``None`` for a plain builtin."""
    effect = getattr(entry, "effect", None)
    if effect is None:
        return None
    if isinstance(effect, tuple):
        adapter = effect[2] if len(effect) > 2 else None
        return str(effect[0]), str(effect[1]), (None if adapter is None else str(adapter))
    kind = getattr(effect, "kind", None)
    kind = getattr(kind, "value", kind)
    return str(kind), str(effect.operation), getattr(effect, "adapter", None)


def _entry_arity(entry: Any, qualified: str) -> int | None:
    """The parameter count of an export's scheme (``None`` when unknown)."""
    arity = getattr(entry, "arity", None)
    if isinstance(arity, int):
        return arity
    try:
        from chatml.surfaces import scheme_of
        from chatml.typecheck.types import TFun
    except ImportError:
        return None
    try:
        scheme = scheme_of(qualified)
    except (KeyError, ValueError):
        return None
    return len(scheme.params) if isinstance(scheme, TFun) else None


def _json_string(text: str) -> Value:
    return Variant("String", (text,))


def _json_object(*pairs: tuple[str, Value]) -> Value:
    return Variant("Object", ([{"key": key, "value": value} for key, value in pairs],))


def input_text_message(role: str, text: str) -> Value:
    """The *input-text message* json value of stdlib spec 6.1."""
    part = _json_object(("type", _json_string("input_text")), ("text", _json_string(text)))
    return _json_object(("type", _json_string("message")), ("role", _json_string(role)),
                        ("content", Variant("Array", ([part],))))


def _adapt(adapter: str, qualified: str, operation: str, args: tuple[Value, ...]
           ) -> tuple[str, tuple[Value, ...]]:
    """Apply a capability export's argument adapter (``chatml.surfaces.model.Effect``)."""
    if adapter == "replace_or_append":
        target, item = args
        if isinstance(target, Variant) and target.tag == "None" and not target.args:
            return "Turn.append_message", (item,)
        if isinstance(target, Variant) and target.tag == "Some" and len(target.args) == 1:
            if not isinstance(target.args[0], str):
                raise ChatMLFailure(f"{qualified}.some: expected a string argument")
            return operation, (target.args[0], item)
        raise ChatMLFailure(f"{qualified}: expected `None or `Some(string)")
    if adapter == "append_notice":
        (text,) = args
        if not isinstance(text, str):
            raise ChatMLFailure(f"{qualified}: expected a string argument")
        return operation, ({"id": "system:" + text, "value": input_text_message("system", text)},)
    if adapter == "text_payload":
        recipe, text = args
        if not isinstance(recipe, str) or not isinstance(text, str):
            raise ChatMLFailure(f"{qualified}: expected a string argument")
        return operation, (recipe, _json_string(text))
    raise ChatMLFailure(f"{qualified}: unknown argument adapter '{adapter}'")


def task_builder(qualified_name: str, kind: str, operation: str,
                 arity: int | None = None, adapter: str | None = None) -> Callable[..., Value]:
    """The implementation of a capability export: it only builds a task node.

    ``adapter`` names the argument transformation of the table's ``Effect``
    (``replace_or_append``, ``append_notice``, ``text_payload``).
    """
    node = Spawn if kind == "spawn" else Perform
    short = qualified_name.rsplit(".", 1)[-1]

    @builtin(qualified_name)
    def build(*args: Value) -> Value:
        if arity is not None and len(args) != arity:
            words = _NUMBER_WORDS.get(arity, f"exactly {arity} arguments")
            raise ChatMLFailure(f"{short}: expected {words}")
        if adapter is None:
            return node(operation, args)
        op, arguments = _adapt(adapter, qualified_name, operation, args)
        return node(op, arguments)

    build.__name__ = build.__qualname__ = qualified_name.replace(".", "_")
    return build


def _names(items: Any) -> list[tuple[str, Any]]:
    if isinstance(items, Mapping):
        return list(items.items())
    result = []
    for item in items:
        if isinstance(item, str):
            result.append((item, None))
        else:
            result.append((item.name, item))
    return result


def _module_exports(module: Any) -> Any:
    for attribute in ("exports", "members", "entries"):
        if hasattr(module, attribute):
            return getattr(module, attribute)
    return module


def install(surface: Any, registry: Mapping[str, Value] | None = None) -> dict[str, Value]:
    """The runtime values of ``surface``: ``{global name: value, module name: Module}``.

    ``surface`` is a surface of :mod:`chatml.surfaces` (anything with
    ``globals`` and ``modules``: mappings or sequences of named entries, an
    entry's ``effect`` marking a capability export). ``registry`` defaults to
    :data:`IMPLEMENTATIONS` after importing the standard library.
    """
    if registry is None:
        _load_standard_library()
        registry = IMPLEMENTATIONS
    values: dict[str, Value] = {}
    missing: list[str] = []

    def resolve(qualified: str, entry: Any) -> Value:
        effect = _effect_of(entry)
        if qualified in registry:
            return registry[qualified]
        if effect is not None:
            return task_builder(qualified, effect[0], effect[1], _entry_arity(entry, qualified),
                                effect[2])
        missing.append(qualified)
        return None

    for name, entry in _names(surface.globals):
        values[name] = resolve(name, entry)
    for module_name, module in _names(surface.modules):
        exports = {}
        for export, entry in _names(_module_exports(module)):
            exports[export] = resolve(f"{module_name}.{export}", entry)
        values[module_name] = Module(module_name, exports)
    if missing:
        raise MissingImplementations(getattr(surface, "name", "?"), missing)
    return values


def _load_standard_library() -> None:
    """Import the standard library so its ``@implements`` registrations run."""
    try:
        import chatml.stdlib  # noqa: F401
    except ModuleNotFoundError as error:
        if error.name not in ("chatml.stdlib",):
            raise
