"""Unification of ChatML types (spec 4.6), with levels, rows and recursive types.

``unify(a, b)`` makes ``a`` and ``b`` equal by binding type variables, or
raises :class:`UnifyError` describing the innermost mismatching pair. It never
raises anything else and terminates on cyclic types:

* binding a variable lowers the levels of the free variables of its new
  value (level-based generalisation) and runs the occurs check: a cycle is
  allowed only through a data constructor (record, variant, tuple, ``task``);
  through a function, array or ref it is ``Recursive types``; a row variable
  may not occur in its own tail chain (``Recursive row types``);
* when two bound variables are unified, one is first re-linked to the other's
  value, so unifying two cyclic types meets the pair again as identical and
  stops (the classic trick of OCaml's unifier);
* ``mu`` types are unfolded on demand; pairs already being unified are
  assumed equal (equi-recursive types, coinductively);
* rows follow the algorithm of spec 4.6 (closed rows never gain labels);
  unified records merge their exactness cells
  (:mod:`chatml.typecheck.exactness`), and merging a record whose values may
  hold unlisted fields with one a closed record pattern relies on fails;
* a record's flavor makes a module and a plain record incompatible only where
  a plain record is required (copy-update, record patterns: DECISIONS 6a).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chatml.typecheck import errors
from chatml.typecheck.exactness import merge as merge_exactness
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
    flatten_row,
    resolve,
    show_message_type,
)

__all__ = ["UnifyError", "bind_fresh", "unify"]


class UnifyError(Exception):
    """Unification failed. ``message`` renders the types as they are when it is read."""

    def __init__(self, code: str, text: str = "", left: Type | None = None,
                 right: Type | None = None) -> None:
        super().__init__(code)
        self.code = code
        self.text = text
        self.left = left
        self.right = right
        #: the variant tag or record label whose types clashed, when known
        self.label: str | None = None

    @property
    def message(self) -> str:
        return self.render(Namer())

    def render(self, namer: Namer) -> str:
        """The message, naming type variables with ``namer`` (shared with a hint)."""
        if self.left is not None and self.right is not None and not self.text:
            return (f"Cannot unify {show_message_type(self.left, namer)} "
                    f"with {show_message_type(self.right, namer)}")
        return self.text


def _mismatch(a: Type, b: Type) -> UnifyError:
    return UnifyError(errors.TYPE_MISMATCH, "", a, b)


def _missing_label(labels: dict[str, Type] | list[str]) -> UnifyError:
    label = min(labels)
    error = UnifyError(errors.MISSING_LABEL, f"Row does not contain label '{label}'")
    error.label = label
    return error


#: Pairs of types assumed equal while an outermost mu unification runs (coinduction).
_assumed: set[tuple[int, int]] = set()
_mu_depth = 0


def unify(a: Type, b: Type) -> None:
    """Make ``a`` and ``b`` equal, or raise :class:`UnifyError`."""
    ra: Any  # the resolved sides: dispatched on ta/tb, which mypy cannot follow
    rb: Any
    ta = type(a)
    if ta is TVar:
        link = a.link  # type: ignore[attr-defined]  # ta is TVar
        if link is None:
            ra = a
        else:
            ra = link if type(link) is not TVar else resolve(a)
            ta = type(ra)
    else:
        ra = a
    tb = type(b)
    if tb is TVar:
        link = b.link  # type: ignore[attr-defined]  # tb is TVar
        if link is None:
            rb = b
        else:
            rb = link if type(link) is not TVar else resolve(b)
            tb = type(rb)
    else:
        rb = b
    if ra is rb:
        return
    if ta is TVar:
        if tb is TVar:
            # ra now stands for rb: rb must not be more general than ra was
            if rb.level > ra.level:
                rb.level = ra.level
            ra.link = rb
        elif tb is Prim:  # fast path: a primitive needs no occurs check
            ra.link = rb
        else:
            _bind(ra, rb)
        return
    if tb is TVar:
        if ta is Prim:
            rb.link = ra
        else:
            _bind(rb, ra)
        return
    if ta is tb:
        # Re-link a bound variable to the other side first: cyclic types then
        # meet this pair again as identical and unification terminates. The
        # link is restored if the two sides turn out not to unify.
        if a is not ra and type(a) is TVar:
            a.link = rb
            try:
                _SAME[ta](ra, rb)
            except UnifyError:
                a.link = ra
                raise
        elif b is not rb and type(b) is TVar:
            b.link = ra
            try:
                _SAME[ta](ra, rb)
            except UnifyError:
                b.link = rb
                raise
        elif ta is TVariant:  # (the commonest pairs without the table's extra call)
            _unify_rows(ra.row, rb.row)
        elif ta is TArray or ta is TRef:
            if ra.elem is not rb.elem:
                unify(ra.elem, rb.elem)
        else:
            _SAME[ta](ra, rb)
        return
    if ta is TError or tb is TError:
        return
    if ta is TMu or tb is TMu:
        _unify_mu(ra, rb)
        return
    if ta is Row and tb is RowEmpty:
        raise _missing_label(ra.fields)
    if tb is Row and ta is RowEmpty:
        raise _missing_label(rb.fields)
    if isinstance(ra, Flavor) and isinstance(rb, Flavor):
        _unify_flavors(ra, rb)
        return
    if ta is TRecVar or tb is TRecVar:
        raise UnifyError(errors.RECURSIVE_TYPE_VARIABLE,
                         "Cannot unify recursive type variable with non-recursive type")
    raise _mismatch(ra, rb)


def _unify_flavors(a: Flavor, b: Flavor) -> None:
    if isinstance(a, ModuleFlavor) and isinstance(b, ModuleFlavor):
        return
    module = a if isinstance(a, ModuleFlavor) else b
    error = UnifyError(
        errors.MODULE_AS_RECORD,
        f"Module {module.name} is used where a record is expected; "
        "modules support field access but not copy-update or record patterns")
    error.label = module.name
    raise error


def _unify_mu(a: Type, b: Type) -> None:
    global _mu_depth
    key = (id(a), id(b))
    if key in _assumed:
        return
    _assumed.add(key)
    unfolded_a = a.unfold() if isinstance(a, TMu) else a
    unfolded_b = b.unfold() if isinstance(b, TMu) else b
    _mu_depth += 1
    try:
        unify(unfolded_a, unfolded_b)
    except UnifyError as error:
        # Show the recursive type by name rather than its one-step unfolding.
        if error.left is unfolded_a and error.right is unfolded_b:
            error.left, error.right = a, b
        raise
    finally:
        _mu_depth -= 1
        if not _mu_depth:
            _assumed.clear()


# --------------------------------------------------------------------------- binding


def _bind(var: TVar, t: Type) -> None:
    """Bind the unbound ``var`` to the resolved non-variable ``t``."""
    tt = type(t)
    if tt in _LEAVES:
        var.link = t
        return
    if tt is Row:
        tail = t.tail  # type: ignore[attr-defined]  # tt is Row
        while True:
            if type(tail) is TVar and tail.link is not None:
                tail = resolve(tail)
            if type(tail) is not Row:
                break
            tail = tail.tail
        if tail is var:
            raise UnifyError(errors.RECURSIVE_ROW, "Recursive row types")
    if tt in _DATA:
        # A cycle through a data constructor is allowed: there only levels matter.
        _lower(t, var.level)
    elif _occurs_adjust(var, t, var.level):
        raise UnifyError(errors.RECURSIVE_TYPE, "Recursive types")
    var.link = t


def bind_fresh(var: TVar, t: Type) -> None:
    """Bind the unbound ``var``, which ``t`` cannot mention, to ``t`` (no occurs check).

    For a variable made by the caller and not yet shown to anything ``t``
    was built from (an array literal's element type before its first
    element): only levels need adjusting, and the ``lvl`` bounds make that
    walk stop at nodes already lowered, so a literal nested n deep costs
    O(n) in all rather than an occurs check of O(n) per level.
    """
    resolved = resolve(t)
    if resolved is var:
        return
    if type(resolved) is TVar:
        unify(var, resolved)
        return
    _lower(resolved, var.level)
    var.link = resolved


def _lower(t: Type, level: int) -> None:
    """Lower the free variables of ``t`` to ``level`` (no occurs check).

    A node's ``lvl`` bound is lowered *before* its components are walked, so
    a node met again (shared, or on a cycle) is skipped by the bound check:
    every node is walked at most once. The walk keeps its own stack: it makes
    no Python call, so it never stops half way with a RecursionError (which
    would leave a bound lowered over components that were not). Variable and
    primitive components are handled on the spot, and the last component (a
    row's tail, a record's row...) without a trip through the stack.
    """
    pending: list[Type | None] = [t]
    while pending:
        node: Any = pending.pop()
        while node is not None:  # the node, then its last component, and so on
            tn = type(node)
            if tn is TVar:
                # a bound variable keeps the outermost level its value reached (see _walk)
                if level < node.level < GENERIC:
                    node.level = level
                node = node.link
                continue
            if tn in _LEAVES or node.lvl <= level:
                break
            node.lvl = level
            if tn is Row:
                children: Any = node.fields.values()
                last = node.tail
            elif tn is TRecord:
                children = (node.flavor,) if type(node.flavor) is TVar else ()
                last = node.row
            elif tn is TTuple:
                children = node.elems
                last = None
            elif tn is TVariant:
                children = ()
                last = node.row
            elif tn is TArray or tn is TRef:
                children = ()
                last = node.elem
            elif tn is TFun:
                children = node.params
                last = node.result
            elif tn is TConstr:
                children = node.args
                last = None
            else:
                break
            for child in children:
                if type(child) is TVar and child.link is None:
                    if level < child.level < GENERIC:
                        child.level = level
                elif type(child) is not Prim:
                    pending.append(child)
            node = last


def _occurs_adjust(var: TVar, t: Type, level: int) -> bool:
    """Lower the free variables of ``t`` to ``level``; whether ``var`` occurs in ``t``.

    Subtrees whose ``lvl`` bound shows nothing to lower and no room for
    ``var`` are skipped; walked subtrees get their bound lowered. Small types
    are walked directly; past a node budget (a large or shared type, or a
    cycle) the walk restarts with a visited set.
    """
    budget = [48]
    try:
        return _walk(var, t, level, budget)
    except _OverBudget:
        return _walk_shared(var, t, level, True)


class _OverBudget(Exception):
    pass


#: Types without variables below them (a mu type's body is closed).
_LEAVES = frozenset({Prim, RowEmpty, TMu, TError, Flavor, ModuleFlavor, TRecVar})

#: Data constructors: a type may contain itself through one of them.
_DATA = frozenset({TRecord, TVariant, TTuple, TConstr, Row})


def _walk(var: TVar, t: Type, level: int, budget: list[int]) -> bool:
    head = t
    while type(t) is TVar:
        # A bound variable's level records the outermost level its value reached;
        # parameter reopening gives a fresh row tail no more general than that.
        if level < t.level < GENERIC:
            t.level = level
        link = t.link
        if link is None:
            break
        t = link
    if head is not t and head.link is not t:  # type: ignore[attr-defined]  # head is a TVar here (resolved above)
        resolve(head)  # compress a chain of links (thousands of `and` bindings): linear overall
    if type(t) is TVar:
        return t is var
    tn = type(t)
    if tn in _LEAVES:
        return False
    # Dispatch on ``tn = type(t)``, which mypy does not narrow ``t`` by, so the node is read
    # through ``node: Any`` (``match`` or repeated ``type(t) is`` tests would slow this walk).
    node: Any = t
    bound = node.lvl
    if bound < level:
        return False
    budget[0] -= 1
    if budget[0] < 0:
        raise _OverBudget
    if tn is TFun:
        children: Any = [*node.params, node.result]
    elif tn is Row:
        children = [*node.fields.values(), node.tail]
    elif tn is TRecord:
        children = (node.row, node.flavor)
    elif tn is TVariant:
        children = (node.row,)
    elif tn is TArray or tn is TRef:
        children = (node.elem,)
    elif tn is TTuple:
        children = node.elems
    elif tn is TConstr:
        children = node.args
    else:
        return False
    occurs = False
    for child in children:
        # leaves inline: an unbound variable or a primitive needs no call
        if type(child) is TVar and child.link is None:
            if child is var:
                occurs = True
            elif level < child.level < GENERIC:
                child.level = level
        elif type(child) is not Prim and _walk(var, child, level, budget):
            occurs = True
    if bound > level:
        node.lvl = level
    return occurs


def _walk_shared(var: TVar, t: Type, level: int, find: bool) -> bool:
    occurs = False
    stack: list[Any] = [t]  # type nodes, walked by their type(): mypy cannot follow that
    seen: dict[int, Any] = {}
    while stack:
        node = stack.pop()
        while type(node) is TVar:
            if level < node.level < GENERIC:
                node.level = level
            link = node.link
            if link is None:
                break
            node = link
        tn = type(node)
        if tn is TVar:
            if node is var:
                occurs = True
            continue
        if tn in _LEAVES:
            continue
        key = id(node)
        if key in seen:
            continue
        bound = node.lvl
        if bound < level or (bound == level and not find):
            continue
        seen[key] = node
        if tn is TFun:
            stack.extend(node.params)
            stack.append(node.result)
        elif tn is TRecord:
            stack.append(node.row)
            stack.append(node.flavor)
        elif tn is Row:
            stack.extend(node.fields.values())
            stack.append(node.tail)
        elif tn is TVariant:
            stack.append(node.row)
        elif tn is TArray or tn is TRef:
            stack.append(node.elem)
        elif tn is TTuple:
            stack.extend(node.elems)
        elif tn is TConstr:
            stack.extend(node.args)
    for node in seen.values():  # every node below was walked: its bound is now ``level``
        if node.lvl > level:
            node.lvl = level
    return occurs


# --------------------------------------------------------------------------- same constructor


def _unify_elem(a: TArray | TRef, b: TArray | TRef) -> None:
    # (a and b are both TArray or both TRef: _SAME dispatches on the type)
    if a.elem is not b.elem:
        unify(a.elem, b.elem)


def _unify_fun(a: TFun, b: TFun) -> None:
    pa, pb = a.params, b.params
    if len(pa) != len(pb):
        raise UnifyError(errors.ARITY_MISMATCH, "Function arity mismatch", a, b)
    # (index loops, not zip(strict=True): its keyword costs more than the loop here)
    for index, x in enumerate(pa):
        y = pb[index]
        if x is not y:  # fast path: identical components need no call
            unify(x, y)
    if a.result is not b.result:
        unify(a.result, b.result)


def _unify_constr(a: TConstr, b: TConstr) -> None:
    if a.name != b.name:
        raise UnifyError(errors.CONSTRUCTOR_MISMATCH, "Type constructor mismatch", a, b)
    if len(a.args) != len(b.args):
        raise UnifyError(errors.CONSTRUCTOR_MISMATCH, "Type constructor arity mismatch", a, b)
    others = b.args
    for index, x in enumerate(a.args):
        y = others[index]
        if x is not y:
            unify(x, y)


def _unify_tuple(a: TTuple, b: TTuple) -> None:
    if len(a.elems) != len(b.elems):
        raise UnifyError(errors.PAYLOAD_ARITY_MISMATCH, "Tuple arity mismatch", a, b)
    others = b.elems
    for index, x in enumerate(a.elems):
        y = others[index]
        if x is not y:
            unify(x, y)


def _unify_record(a: TRecord, b: TRecord) -> None:
    _unify_rows(a.row, b.row)
    if a.flavor is not b.flavor:
        unify(a.flavor, b.flavor)
    if a.exact is not b.exact and not merge_exactness(a.exact, b.exact):
        raise UnifyError(
            errors.INEXACT_RECORD,
            "A closed record pattern relies on this record having exactly its fields, "
            "but its values may have more fields here", a, b)


def _unify_variant(a: TVariant, b: TVariant) -> None:
    _unify_rows(a.row, b.row)


def _unify_mus(a: TMu, b: TMu) -> None:
    _unify_mu(a, b)


def _unify_recvars(a: TRecVar, b: TRecVar) -> None:
    if a.name != b.name:
        raise UnifyError(errors.RECURSIVE_TYPE_VARIABLE, "Recursive type variables do not match")


def _unify_modules(a: ModuleFlavor, b: ModuleFlavor) -> None:
    return


def _unify_prims(a: Prim, b: Prim) -> None:
    raise _mismatch(a, b)  # identical primitives never get here


def _unify_rows(r1: Type, r2: Type) -> None:
    """Row unification of spec 4.6 (labels of both sides, then the tails)."""
    # flatten_row, with its commonest case (one row, an unbound tail) inline
    t1: Type
    t2: Type
    if type(r1) is Row and type(r1.tail) is TVar and r1.tail.link is None:
        f1, t1 = r1.fields, r1.tail
    else:
        f1, t1 = flatten_row(r1)
    if type(r2) is Row and type(r2.tail) is TVar and r2.tail.link is None:
        f2, t2 = r2.fields, r2.tail
    else:
        f2, t2 = flatten_row(r2)
    # The label dicts start as the shared empty dict (never mutated): most
    # unifications need only one of them, or neither.
    only_right: dict[str, Type] = _NO_LABELS  # M1: labels missing on the left
    common: list[str] = []
    for label, value in f2.items():
        if label in f1:
            common.append(label)
        elif only_right:
            only_right[label] = value
        else:
            only_right = {label: value}
    only_left: dict[str, Type] = _NO_LABELS
    if len(common) != len(f1):  # some labels of the left are missing on the right
        only_left = {}
        for label, value in f1.items():
            if label not in f2:
                only_left[label] = value
    if common:
        if len(common) > 1:
            common.sort()
        label = ""
        try:
            for label in common:
                x, y = f1[label], f2[label]
                if x is y:
                    continue
                if type(x) is TTuple and type(y) is TTuple:  # a tag's payloads: skip a call
                    _unify_tuple(x, y)
                else:
                    unify(x, y)
        except UnifyError as error:
            if error.label is None:
                error.label = label
            raise
    if not only_right and not only_left:
        if t1 is not t2:
            unify(t1, t2)
    elif not only_left:
        _unify_tail(t1, only_right, t2, r2)
    elif not only_right:
        _unify_tail(t2, only_left, t1, r1)
    elif type(t1) is TVar:
        level = t1.level if type(t2) is not TVar else min(t1.level, t2.level)
        fresh = TVar(level)
        # (a flattened tail, but the labels' unification may have bound it since)
        if type(t2) is TVar and t2.link is None:
            _bind(t2, Row(only_left, fresh))
        else:
            unify(t2, Row(only_left, fresh))
        if t1.link is not None:
            raise UnifyError(errors.RECURSIVE_ROW, "Recursive row types")
        _bind(t1, Row(only_right, fresh))
    elif type(t1) is RowEmpty:
        raise _missing_label(only_right)
    elif type(t1) is not TError and type(t2) is not TError:
        raise _mismatch(t1, t2)


#: The empty label dict :func:`_unify_rows` starts with (read only).
_NO_LABELS: dict[str, Type] = {}


def _unify_tail(tail: Type, extra: dict[str, Type], other_tail: Type, source: Type) -> None:
    """Unify ``tail`` with the row of ``extra`` labels then ``other_tail`` (both from ``source``).

    ``tail`` is a flattened tail, but the unification of the common labels may
    have bound it since: only a still unbound one is bound directly.
    """
    if type(tail) is TVar and tail.link is None:
        row = Row(extra, other_tail)
        if type(source) is TVar:
            source = resolve(source)
        # Everything in the new row is reachable from ``source``, so its level bound
        # holds for the new row too (binding may then skip walking it).
        row.lvl = source.lvl  # type: ignore[attr-defined]  # a resolved composite: has lvl
        _bind(tail, row)
        return
    if type(tail) is RowEmpty:
        raise _missing_label(extra)
    unify(tail, Row(extra, other_tail))


_SAME: dict[type[Type], Callable[[Any, Any], None]] = {
    TFun: _unify_fun,
    TArray: _unify_elem,
    TRef: _unify_elem,
    TRecord: _unify_record,
    TVariant: _unify_variant,
    Row: _unify_rows,
    TTuple: _unify_tuple,
    TConstr: _unify_constr,
    TMu: _unify_mus,
    TRecVar: _unify_recvars,
    ModuleFlavor: _unify_modules,
    TError: _unify_modules,
    Prim: _unify_prims,
    RowEmpty: _unify_modules,
    Flavor: _unify_modules,
}
