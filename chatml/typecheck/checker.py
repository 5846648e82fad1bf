"""The checker's state and the machinery every typing rule shares.

A :class:`Checker` holds the current level, the environments, the collected
diagnostics and what later phases need (the type at every binder, the flavor
of every field access). It offers fresh variables, instantiation and
generalisation (spec 4.4), and the error helpers: a rule that cannot go on
raises :class:`StatementError` (caught per statement, spec 4.15 recovery),
one that can reports and goes on (:meth:`Checker.report`).

Typing rules live in their own modules and register themselves in
:data:`RULES` (expression class -> function); :meth:`Checker.infer` dispatches.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

from chatcommon.diagnostics import Diagnostic, Severity
from chatcommon.sources import Span
from chatml.typecheck import errors
from chatml.typecheck.environment import ValueEnv
from chatml.typecheck.schemes import COPY_AT_USE, Scheme, copied_entry, copy_graph, use_copy
from chatml.typecheck.types import (
    GENERIC,
    Flavor,
    ModuleFlavor,
    Namer,
    Prim,
    Row,
    RowEmpty,
    TArray,
    TConstr,
    TError,
    TFun,
    TMu,
    TRecord,
    TRecVar,
    TRef,
    TTuple,
    TVar,
    TVariant,
    Type,
    has_type_name,
    resolve,
    show_message_type,
)
from chatml.typecheck.unify import UnifyError

#: Expression class -> typing rule ``(checker, expr) -> Type``.
RULES: dict[type, Callable[[Checker, Any], Type]] = {}


def rule(*classes: type) -> Callable[[Callable[[Checker, Any], Type]],
                                     Callable[[Checker, Any], Type]]:
    """Register a typing rule for the given expression classes."""

    def register(function: Callable[[Checker, Any], Type]) -> Callable[[Checker, Any], Type]:
        for cls in classes:
            RULES[cls] = function
        return function

    return register


class StatementError(Exception):
    """A type error after which the current statement cannot be checked further."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


class Checker:
    """State of one typechecking run (one program against one surface)."""

    def __init__(self) -> None:
        self.level = 0
        self.env = ValueEnv()
        self.type_names: dict[str, Type] = {}
        self.diagnostics: list[Diagnostic] = []
        #: the type at every binder with the binder's name span, in order (the result keys
        #: them by span when first asked: a later entry for a span wins)
        self.binders: list[tuple[Span, Type]] = []
        #: the flavor type of every field access's base, with the access span
        self.field_flavors: list[tuple[Span, Type]] = []
        #: modules whose body is being checked, innermost last
        self.initialising: list[str] = []
        #: per module being checked, innermost last: its InitFrame (initialisation order, Q14)
        self.init_frames: list[Any] = []
        #: which names are unsafe to evaluate in which of those frames (modules.UnsafeNames)
        self.unsafe_names: Any = None
        #: per module being checked: its placeholder and the ``M.x`` reads in its body
        self.self_references: dict[str, tuple[Type, list[tuple[str, Span]]]] = {}
        #: names bound to the error type by an ``open`` that failed (they shadow nothing)
        self.failed_open_names: set[str] = set()
        #: top-level ``let``/``let rec``/``module`` bindings, in order: (name, entry, span)
        self.top_bindings: list[tuple[str, Any, Span | None]] = []
        self.rules = RULES

    # ------------------------------------------------------------------ types

    def fresh(self) -> TVar:
        return TVar(self.level)

    def infer(self, expr: Any) -> Type:
        """The type of ``expr``. Hot rules inline this dispatch as
        ``ck.rules[type(e)](ck, e)`` to save a call per node."""
        return self.rules[type(expr)](self, expr)

    def lookup(self, name: str) -> Type | None:
        entry = self.env.values.get(name)
        if entry is None:
            return None
        if type(entry) is Scheme:
            return entry.instantiate(self.level)
        if type(entry) is TVar and entry.level == COPY_AT_USE:
            return use_copy(entry, self.level)
        return entry

    def generalize(self, t: Type, nonexpansive: bool) -> Type | Scheme:
        """The environment entry for a binding of type ``t`` at the current level (4.4)."""
        return generalize_one(t, self.level, nonexpansive)

    # ------------------------------------------------------------------ errors

    def report(self, diagnostic: Diagnostic) -> None:
        self.diagnostics.append(diagnostic)

    def error(self, span: Span, code: str, message: str, hint: str | None = None,
              severity: Severity = Severity.ERROR) -> Diagnostic:
        return Diagnostic.at(span, code, message, phase=errors.PHASE, hint=hint,
                             severity=severity)

    def fail(self, span: Span, code: str, message: str, hint: str | None = None) -> NoReturn:
        raise StatementError(self.error(span, code, message, hint))

    def unify_error(self, span: Span, error: UnifyError, found: Type | None = None,
                    expected: Type | None = None, hint: str | None = None) -> StatementError:
        """The diagnostic for a failed unification at ``span``.

        ``found``/``expected`` are the whole types the rule unified; when the
        clash is deeper inside them, the hint shows them in full.
        """
        namer = Namer()
        message = error.render(namer)
        if hint is None and found is not None and expected is not None:
            found_text = show_message_type(found, namer)
            expected_text = show_message_type(expected, namer)
            if (error.code == errors.TYPE_MISMATCH and
                    (resolve(found) is not error.left or resolve(expected) is not error.right)
                    and found_text != expected_text):
                hint = f"expected {expected_text}, found {found_text}"
        if hint is None and error.code == errors.MODULE_AS_RECORD:
            hint = (f"module {error.label} can be read with {error.label}.name, "
                    "but it is not a record value")
        return StatementError(Diagnostic.at(span, error.code, message, phase=errors.PHASE,
                                            hint=hint))


# --------------------------------------------------------------------------- generalisation


def generalize_all(types: tuple[Type, ...], level: int,
                   nonexpansive: bool) -> list[Type | Scheme]:
    """Entries for bindings of ``types`` made at ``level`` (spec 4.4).

    Non-expansive bindings whose types hold no recursive type become schemes
    over their variables above ``level``; otherwise those variables are
    lowered to ``level`` (they stay monomorphic, even for enclosing bindings).
    """
    found: list[TVar] = []
    recursive = False
    colour: dict[Type, int] = {}
    for t in types:
        if _scan(t, level, found, colour):
            recursive = True
    if nonexpansive and not recursive and found:
        for var in found:
            var.level = GENERIC
        return [Scheme(settled(t)) for t in types]
    for var in found:
        var.level = level
    return [copied_entry(t) for t in types] if recursive else list(types)


def generalize_one(t: Type, level: int, nonexpansive: bool) -> Type | Scheme:
    """:func:`generalize_all` for a single binding (the common case, without the lists)."""
    found: list[TVar] = []
    recursive = _scan(t, level, found, {})
    if not found:
        return copied_entry(t) if recursive else t
    if nonexpansive and not recursive:
        for var in found:
            var.level = GENERIC
        return Scheme(settled(t))
    for var in found:
        var.level = level
    return copied_entry(t) if recursive else t


def settled(t: Type) -> Type:
    """A copy of ``t`` without bound variables, for an environment entry (issue 15).

    Unification re-links a bound variable to the other side's value (to stop
    on cycles); in an entry's own type that would make every use rewrite the
    entry's type with the graph of the value it was applied to (equal, but
    printed ever larger). A scheme whose body holds no bound variable cannot
    be re-linked: only its unbound variables are shared with its uses. (A
    cyclic type keeps one bound variable per cycle, which unification needs:
    such entries are copied at every use, see ``copied_entry``.)
    """
    try:
        return _settle(t, {}, set())
    except (_Cyclic, RecursionError):
        return copy_graph(t, 0, everything=True)


class _Cyclic(Exception):
    pass


def _settle(t: Type, done: dict[Type, Type], active: set[Type]) -> Type:
    """:func:`settled` for an acyclic graph, one node at a time (the common case)."""
    while type(t) is TVar:
        link = t.link
        if link is None:
            return t
        t = link
    kind: type[Any] = type(t)  # Any: the last branch calls it as TArray or TRef
    if kind not in _SETTLED or has_type_name(t):
        return t
    copy = done.get(t)
    if copy is not None:
        return copy
    if t in active:
        raise _Cyclic
    active.add(t)
    node: Any = t
    if kind is TFun:
        copy = TFun(tuple([_settle(p, done, active) for p in node.params]),
                    _settle(node.result, done, active))
    elif kind is Row:
        copy = Row({label: _settle(v, done, active) for label, v in node.fields.items()},
                   _settle(node.tail, done, active))
    elif kind is TRecord:
        copy = TRecord(_settle(node.row, done, active), _settle(node.flavor, done, active),
                       node.exact)
    elif kind is TVariant:
        copy = TVariant(_settle(node.row, done, active))
    elif kind is TTuple:
        copy = TTuple(tuple([_settle(e, done, active) for e in node.elems]))
    elif kind is TConstr:
        copy = TConstr(node.name, tuple([_settle(a, done, active) for a in node.args]))
    else:  # TArray, TRef
        copy = kind(_settle(node.elem, done, active))
    active.discard(t)
    done[t] = copy
    return copy


#: The compound types :func:`_settle` copies (registered named types are kept).
_SETTLED = frozenset({TFun, Row, TRecord, TVariant, TTuple, TConstr, TArray, TRef})


def _scan(t: Type, level: int, found: list[TVar], colour: dict[Type, int]) -> bool:
    """Collect the variables of ``t`` above ``level``; whether ``t`` holds a recursive type.

    ``colour`` marks the nodes being walked (1) and walked (2), and the variables
    already in ``found`` (:data:`_FOUND`): meeting a node being walked is a cycle, which counts as a recursive type. (Type nodes
    hash by identity, so they key the dict themselves, without ``id()``.)
    """
    if type(t) is TVar:
        t = resolve(t)  # compresses long chains of links
        if isinstance(t, TVar):
            if level < t.level < GENERIC and t not in colour:
                colour[t] = _FOUND
                found.append(t)
            return False
    # Dispatch on ``c = type(t)``, which mypy does not narrow ``t`` by, so the node is read
    # through ``node: Any`` (``match`` measured slower on this hot walk of generalisation).
    node: Any = t
    c = type(t)
    if c is Row:
        children: Any = node.fields.values()
        last: Type | None = node.tail
    elif c is TFun:
        children = node.params
        last = node.result
    elif c is TRecord:
        flavor = node.flavor
        # (a Flavor has nothing below it: only a flavor variable is a child)
        children = (flavor,) if type(flavor) is TVar else ()
        last = node.row
    elif c is TVariant:
        children = ()
        last = node.row
    elif c is TTuple:
        children = node.elems
        last = None
    elif c is TArray or c is TRef:
        children = ()
        last = node.elem
    elif c is TConstr:
        children = node.args
        last = None
    else:
        return c is TMu  # a leaf: only a mu type is recursive
    state = colour.get(t)
    if state is not None:
        return state == 1  # being walked: a cycle
    colour[t] = 1
    recursive = False
    # Children that are variables or leaves are handled here, without a call;
    # ``last`` (a row's tail, a function's result...) the same way after them.
    for child in children:
        if type(child) is TVar and child.link is not None:
            child = resolve(child)
        if isinstance(child, TVar):
            if level < child.level < GENERIC and child not in colour:
                colour[child] = _FOUND
                found.append(child)
        elif type(child) not in _SCAN_LEAVES and _scan(child, level, found, colour):
            recursive = True
    if last is not None:
        if type(last) is TVar and last.link is not None:
            last = resolve(last)
        if isinstance(last, TVar):
            if level < last.level < GENERIC and last not in colour:
                colour[last] = _FOUND
                found.append(last)
        elif type(last) not in _SCAN_LEAVES and _scan(last, level, found, colour):
            recursive = True
    colour[t] = 2
    return recursive


#: ``colour`` of a variable :func:`_scan` has put in ``found`` (a set test, not a list search).
_FOUND = 3

#: Types with nothing below them that :func:`_scan` looks for (a mu type is not one).
_SCAN_LEAVES = frozenset({Prim, RowEmpty, Flavor, ModuleFlavor, TError, TRecVar})
