"""What the host requires of a script's top-level bindings (stdlib spec 9.1 and 10.1).

A *moderator* must define ``initial_state : 's`` and
``on_event : (context, 's, event -> 's task)``, where ``event`` must accept
every event the host delivers (``` `Session_start ```, ``` `Turn_start ```,
``` `Item_appended(item) ```, ...): a handler whose match closes the event type
without them would fail at run time, so it is rejected here. A *shell hook*
must define ``initial_state : 's`` and its entry function
``ENTRY : (INPUT, 's -> 's task)`` (``match_command`` for a matcher, ``review``,
``before``, ``after``, ``analyze``, ``filter``), INPUT being the kind's bridge
alias. The reference only fails at instantiation; here a missing binding or
a wrong type is a static error at the binding, and a state that cannot be
persisted (it holds a function, ref or task) draws a warning.
"""

from __future__ import annotations

from collections.abc import Iterable

from chatcommon.diagnostics import Diagnostic, Severity
from chatcommon.sources import SourceFile, Span
from chatml.surfaces import alias_type
from chatml.surfaces.shell import SHELL_ENTRY_POINTS
from chatml.typecheck import errors
from chatml.typecheck.program import TypeResult
from chatml.typecheck.schemes import instantiate
from chatml.typecheck.types import (
    TASK,
    ModuleFlavor,
    Namer,
    Row,
    TConstr,
    TFun,
    TRecord,
    TRef,
    TTuple,
    TVar,
    TVariant,
    Type,
    flatten_row,
    resolve,
    show_message_type,
    task_of,
)
from chatml.typecheck.unify import UnifyError, unify

#: The events a moderator's ``on_event`` receives from the host (stdlib 9.2), with payloads.
HOST_EVENTS: tuple[tuple[str, str | None], ...] = (
    ("Session_start", None),
    ("Session_resume", None),
    ("Turn_start", None),
    ("Item_appended", "item"),
    ("Pre_tool_call", "tool_call"),
    ("Post_tool_response", "tool_result"),
    ("Turn_end", None),
)


def _event_type() -> Type:
    cases: dict[str, Type] = {}
    for tag, payload in HOST_EVENTS:
        cases[tag] = TTuple(() if payload is None else (alias_type(payload),))
    return TVariant(Row(cases, TVar(1)))


def check_contract(kind: str, result: TypeResult, source: SourceFile,
                   entry_names: Iterable[str] | None = None) -> list[Diagnostic]:
    """Diagnostics for the host contract of a script of ``kind`` (none for other kinds)."""
    if kind == "moderator":
        return _check(result, source, kind, [("on_event", ("context",))], "context")
    entry = SHELL_ENTRY_POINTS.get(kind)
    if entry is None:
        return []
    names = list(entry_names or ()) or [entry[0]]
    return _check(result, source, kind, [(name, (entry[1],)) for name in names], entry[1])


def _binding_span(result: TypeResult, name: str) -> Span | None:
    for binding in reversed(result.bindings):
        if binding.name == name:
            return binding.span
    return None


def _diagnostic(span: Span, code: str, message: str, hint: str | None = None,
                severity: Severity = Severity.ERROR) -> Diagnostic:
    return Diagnostic.at(span, code, message, phase=errors.PHASE, hint=hint, severity=severity)


def _check(result: TypeResult, source: SourceFile, kind: str,
           entries: list[tuple[str, tuple[str, ...]]], input_alias: str) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    start = source.span(0, 0)
    required = ["initial_state", *(name for name, _ in entries)]
    missing = [name for name in required if result.type_of(name) is None]
    for name in missing:
        example = ("let initial_state = { count = 0 }" if name == "initial_state"
                   else _example(kind, name))
        found.append(_diagnostic(
            start, errors.CONTRACT_MISSING,
            f"A {kind} script must define '{name}'",
            hint=f"the host calls it after loading the script; for example: {example}"))
    if missing:
        return found
    state_type = instantiate(_defined(result, "initial_state"), 1)
    state = TVar(1)
    unify(state, state_type)
    for name, _ in entries:
        actual = instantiate(_defined(result, name), 1)
        params: tuple[Type, ...]
        if kind == "moderator":
            params = (alias_type(input_alias), state, _event_type())
        else:
            params = (alias_type(input_alias), state)
        expected = TFun(params, task_of(state))
        namer = Namer()
        actual_text = show_message_type(actual, namer)
        expected_text = show_message_type(expected, namer)
        try:
            unify(actual, expected)
        except UnifyError as error:
            span = _binding_span(result, name) or start
            message = (f"'{name}' has type {actual_text}, but a {kind} script's "
                       f"'{name}' must have type {expected_text}")
            found.append(_diagnostic(span, errors.CONTRACT_TYPE, message,
                                     hint=_contract_hint(name, error)))
            return found
    unpersistable = _runtime_only(state)
    if unpersistable is not None:
        span = _binding_span(result, "initial_state") or start
        found.append(_diagnostic(
            span, errors.CONTRACT_STATE,
            f"The {kind} state holds {unpersistable}, which cannot be saved between events",
            hint="keep the state to ints, floats, bools, strings, unit, arrays, records "
                 "and variants", severity=Severity.WARNING))
    return found


def _example(kind: str, name: str) -> str:
    if kind == "moderator":
        return "let on_event ctx st ev = match ev with | _ -> Task.pure(st)"
    return f"let {name} input st = Task.pure(st)"


def _contract_hint(name: str, error: UnifyError) -> str:
    if error.code == errors.MISSING_LABEL and error.label and name == "on_event" and any(
            tag == error.label for tag, _ in HOST_EVENTS):
        return (f"on_event does not accept the host event `{error.label}; "
                "end its match with `| _ -> Task.pure(st)`")
    if error.code == errors.MISSING_LABEL and error.label:
        return (f"{error.message}: the host passes a value without that field or tag "
                f"to '{name}'")
    return error.message


def _runtime_only(t: Type) -> str | None:
    """What in a state type cannot be persisted (a function, ref, task, module), or None."""
    seen: set[int] = set()
    stack = [t]
    while stack:
        node = resolve(stack.pop())
        if isinstance(node, TFun):
            return "a function"
        if isinstance(node, TRef):
            return "a ref"
        if isinstance(node, TConstr) and node.name == TASK:
            return "a task"
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, TRecord):
            if isinstance(resolve(node.flavor), ModuleFlavor):
                return "a module"
            fields, _ = flatten_row(node.row)
            stack.extend(fields.values())
        elif isinstance(node, TVariant):
            fields, _ = flatten_row(node.row)
            stack.extend(fields.values())
        elif isinstance(node, TTuple):
            stack.extend(node.elems)
        elif hasattr(node, "elem"):
            stack.append(node.elem)  # arrays
    return None


__all__ = ["HOST_EVENTS", "check_contract"]


def _defined(result: TypeResult, name: str) -> Type:
    """The type of a top-level name the contract check found defined."""
    found = result.type_of(name)
    assert found is not None, name  # missing names are reported before types are compared
    return found
