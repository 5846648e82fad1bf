"""Modules and ``open`` (spec 4.9, 4.15), and the initialisation-order check (6a, Q14).

``module M = struct ... end``: while the body is checked, ``M`` is a
monomorphic placeholder (so functions in the body may call ``M.f``). The
module's type is the closed record of the names the body defines with
``let``, ``let rec`` and ``module`` (the last binding of each), each export
keeping its own scheme; the placeholder is unified with an instance of it.

``open M`` binds every export of ``M`` with the scheme it has in the module
(quirk Q8 not reproduced) unless a name is already bound.

Initialisation order (DECISIONS 6a): the runtime fills a module's exports only
after its whole body ran, so a body statement that *runs* must not read the
module, nor call a function that might (transitively) read it. The check is
syntactic and conservative: a name is *unsafe* while ``M`` initialises when it
is ``M`` itself or a function of the body that mentions an unsafe name; a
statement that is not a function definition may not mention an unsafe name at
all, even inside a lambda (it could call it or store it).
"""

from __future__ import annotations

from collections.abc import Callable

from chatcommon.sources import Span
from chatml import ast
from chatml.typecheck import errors
from chatml.typecheck.bindings import is_function
from chatml.typecheck.checker import Checker, StatementError
from chatml.typecheck.environment import entry_type
from chatml.typecheck.schemes import Scheme, instantiate
from chatml.typecheck.types import (
    ERROR,
    ROW_EMPTY,
    ModuleFlavor,
    TError,
    TRecord,
    TVar,
    Type,
    contains_generic,
    flatten_row,
    make_row,
    resolve,
)
from chatml.typecheck.unify import UnifyError, unify

StatementsChecker = Callable[[Checker, tuple[ast.Stmt, ...], list[str]], None]


class InitFrame:
    """A module being initialised (its names' unsafety is kept in :class:`UnsafeNames`)."""

    __slots__ = ("module",)

    def __init__(self, module: str) -> None:
        self.module = module


class UnsafeNames:
    """For every name, the frames (bit ``i`` = ``ck.init_frames[i]``) it is unsafe in.

    One integer per name instead of one set per frame, and an undo journal instead
    of copies of the outer frames' sets: entering and leaving a module costs a
    constant number of operations however deeply modules nest (10,000 nested
    ``module M = struct`` were quadratic in time and memory).
    """

    __slots__ = ("masks", "journal")

    def __init__(self) -> None:
        self.masks: dict[str, int] = {}
        self.journal: list[tuple[str, int]] = []

    def mask(self, name: str) -> int:
        return self.masks.get(name, 0)

    def set(self, name: str, mask: int) -> None:
        old = self.masks.get(name, 0)
        if old == mask:
            return
        self.journal.append((name, old))
        if mask:
            self.masks[name] = mask
        else:
            del self.masks[name]

    def undo(self, mark: int) -> None:
        """Restore every mask changed since ``len(journal)`` was ``mark``."""
        journal, masks = self.journal, self.masks
        while len(journal) > mark:
            name, old = journal.pop()
            if old:
                masks[name] = old
            else:
                masks.pop(name, None)

    def union(self, names: object) -> int:
        combined = 0
        masks = self.masks
        for name in names:  # type: ignore[attr-defined]  # names is a Scheme's export tuple here
            combined |= masks.get(name, 0)
        return combined


def _unsafe(ck: Checker) -> UnsafeNames:
    state = ck.unsafe_names
    if state is None:
        state = ck.unsafe_names = UnsafeNames()
    return state


def check_module(ck: Checker, stmt: ast.ModuleStmt,
                 check_body: StatementsChecker) -> Type | Scheme:
    """Check a module statement; returns its environment entry (bound by the caller)."""
    name = stmt.name
    env = ck.env
    placeholder = TVar(ck.level)
    mark = env.mark()
    env.bind(name, placeholder)
    unsafe = _unsafe(ck)
    journal_mark = len(unsafe.journal)
    depth = len(ck.init_frames)
    outer_frames = (1 << depth) - 1
    ck.init_frames.append(InitFrame(name))
    unsafe.set(name, unsafe.mask(name) | (1 << depth))
    ck.initialising.append(name)
    outer_reference = ck.self_references.get(name)
    reads: list[tuple[str, Span]] = []
    ck.self_references[name] = (placeholder, reads)
    defined: list[str] = []
    try:
        check_body(ck, stmt.body, defined)
    finally:
        ck.initialising.pop()
        ck.init_frames.pop()
        if outer_reference is None:
            del ck.self_references[name]
        else:
            ck.self_references[name] = outer_reference
    exports = [n for n in defined if n != name]
    entries = [env.values[n] for n in exports]
    fields = {n: entry_type(entry) for n, entry in zip(exports, entries, strict=True)}
    record = TRecord(make_row(fields, ROW_EMPTY), ModuleFlavor(name))
    polymorphic = any(isinstance(entry, Scheme) for entry in entries)
    env.undo(mark)
    # the outer frames in which an export is unsafe now: there the module itself is unsafe;
    # everything else the body changed in the outer frames is undone
    reads_outer = unsafe.union(exports) & outer_frames
    unsafe.undo(journal_mark)
    unsafe.set(name, reads_outer)
    for label, span in reads:
        if label not in fields:
            ck.fail(span, errors.MISSING_LABEL, f"Row does not contain label '{label}'",
                    hint=f"module {name} exports " + (", ".join(sorted(fields)) or "nothing"))
    if placeholder.link is None:  # the body never used the module: nothing to reconcile
        return module_entry(record, polymorphic)
    try:
        unify(placeholder, instantiate(record, ck.level))
    except UnifyError as error:
        raise ck.unify_error(stmt.span, error,
                             hint=f"the uses of {name} inside its body disagree with its exports"
                             ) from None
    return module_entry(record, polymorphic)


def module_entry(record: Type, polymorphic: bool) -> Type | Scheme:
    """A module's environment entry: a scheme when an export is polymorphic."""
    return Scheme(record) if polymorphic else record


def check_open(ck: Checker, stmt: ast.OpenStmt) -> None:
    name = stmt.name
    span = stmt.span
    if name in ck.initialising:
        ck.fail(span, errors.OPEN_NON_MODULE, f"Cannot open non-module '{name}'",
                hint=f"module {name} cannot be opened inside its own body")
    entry = ck.env.values.get(name)
    if entry is None:
        ck.fail(stmt.name_span or span, errors.UNKNOWN_VARIABLE, f"Unknown variable '{name}'")
    module = resolve(entry_type(entry))
    if isinstance(module, TError):
        return
    if not isinstance(module, TRecord) or not isinstance(resolve(module.flavor), ModuleFlavor):
        ck.fail(span, errors.OPEN_NON_MODULE, f"Cannot open non-module '{name}'")
    fields, _ = flatten_row(module.row)
    env = ck.env
    values = env.values
    shadowed = [label for label in sorted(fields)
                if label in values
                and not (values[label] is ERROR and label in ck.failed_open_names)]
    for label in shadowed:
        ck.report(ck.error(span, errors.OPEN_SHADOWS,
                           f"open {name} would shadow existing binding '{label}'",
                           hint=f"use {name}.{label} without open, or rename '{label}'"))
    opened: list[str] = []
    for label in sorted(fields):
        if label in shadowed:
            continue
        if shadowed:  # the open fails as a whole; its other names must not cascade
            env.bind(label, ERROR)
            ck.failed_open_names.add(label)
            continue
        field = fields[label]
        env.bind(label, Scheme(field) if contains_generic(field) else field)
        opened.append(label)
    if ck.init_frames:
        unsafe = _unsafe(ck)
        mask = unsafe.mask(name)
        for label in opened:
            unsafe.set(label, mask)


def bind_failed(ck: Checker, names: list[str]) -> None:
    """After an error, bind the names a statement defines to the error type."""
    for name in names:
        ck.env.bind(name, ERROR)
        if ck.init_frames:
            _unsafe(ck).set(name, 0)


# --------------------------------------------------------------------------- initialisation order


def check_initialisation(ck: Checker, stmt: ast.Stmt) -> None:
    """Before checking a statement of a module body: the Q14 rule (see the module docstring)."""
    frames = ck.init_frames
    if not frames:
        return
    if isinstance(stmt, ast.LetStmt):
        _define(ck, stmt, [(stmt.name, stmt.rhs)], recursive=False)
    elif isinstance(stmt, ast.LetRecStmt):
        _define(ck, stmt, [(b.name, b.rhs) for b in stmt.bindings], recursive=True)
    elif isinstance(stmt, ast.ExprStmt) and _mentions_unsafe(ck, stmt):
        _must_not_read(ck, stmt.expr, ())


def _mentions_unsafe(ck: Checker, stmt: ast.Stmt) -> bool:
    """Whether the statement's text contains any unsafe name (a cheap pre-check)."""
    span = stmt.span
    text = span.source.text[span.start:span.end]
    return any(name in text for name in _unsafe(ck).masks)


def _define(ck: Checker, stmt: ast.Stmt, bindings: list[tuple[str, ast.Expr]],
            recursive: bool) -> None:
    names = [name for name, _ in bindings]
    group = tuple(names) if recursive else ()
    unsafe = _unsafe(ck)
    if not _mentions_unsafe(ck, stmt):
        for name in names:
            unsafe.set(name, 0)
        return
    if all(is_function(rhs) for _, rhs in bindings):
        mentioned: dict[str, Span] = {}
        for _, rhs in bindings:
            for used, span in free_variables(rhs, group).items():
                mentioned.setdefault(used, span)
        # unsafe in exactly the frames where something it mentions is unsafe
        mask = unsafe.union(mentioned)
        for name in names:
            unsafe.set(name, mask)
        return
    for _, rhs in bindings:
        _must_not_read(ck, rhs, group)
    for name in names:
        unsafe.set(name, 0)


def _must_not_read(ck: Checker, expr: ast.Expr, group: tuple[str, ...]) -> None:
    used = free_variables(expr, group)
    unsafe = _unsafe(ck)
    combined = unsafe.union(used)
    if not combined:
        return
    innermost = combined.bit_length() - 1  # the innermost frame any used name is unsafe in
    module = ck.init_frames[innermost].module
    for name, span in used.items():
        if unsafe.mask(name) >> innermost & 1:
            if name == module:
                message = (f"Module {module} is read while it is still being initialised; "
                           "its exports are available only after its body has run")
            else:
                message = (f"'{name}' reads module {module} while {module} is still being "
                           "initialised; its exports are available only after its body has run")
            raise StatementError(ck.error(
                span, errors.MODULE_SELF_REFERENCE, message,
                hint=f"inside module {module}, refer to {module} only from functions "
                     "that run after the module is defined"))


def free_variables(expr: ast.Expr, bound: tuple[str, ...] = ()) -> dict[str, Span]:
    """The variables ``expr`` mentions but does not bind, each with its first span."""
    found: dict[str, Span] = {}
    _free(expr, frozenset(bound), found)
    return found


def _pattern_names(pattern: ast.Pattern) -> list[str]:
    names: list[str] = []
    stack = [pattern]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.PVar):
            names.append(node.name)
        elif isinstance(node, ast.PVariant):
            stack.extend(node.args)
        elif isinstance(node, ast.PRecord):
            stack.extend(f.pattern for f in node.fields)
    return names


def _free(node: ast.Node, bound: frozenset[str], found: dict[str, Span]) -> None:
    if isinstance(node, ast.Var):
        if node.name not in bound and node.name not in found:
            found[node.name] = node.span
    elif isinstance(node, ast.Lambda):
        _free(node.body, bound | set(node.params), found)
    elif isinstance(node, ast.LetIn):
        _free(node.rhs, bound, found)
        _free(node.body, bound | {node.name}, found)
    elif isinstance(node, ast.LetRec):
        inner = bound | {b.name for b in node.bindings}
        for binding in node.bindings:
            _free(binding.rhs, inner, found)
        _free(node.body, inner, found)
    elif isinstance(node, ast.Match):
        _free(node.scrutinee, bound, found)
        for arm in node.arms:
            _free(arm.body, bound | set(_pattern_names(arm.pattern)), found)
    else:
        for child in ast.children(node):
            if not isinstance(child, (ast.TName, ast.TArrow, ast.TConstr, ast.TRecord,
                                      ast.TVariant)):
                _free(child, bound, found)
