"""Type schemes and their instantiation (spec 4.4).

A :class:`Scheme` wraps a type whose generic variables (level
:data:`~chatml.typecheck.types.GENERIC`) are replaced by fresh variables at every use.
Instantiation is the checker's hottest operation (every use of a builtin or
polymorphic helper), so each scheme is compiled once, on first use, into a
*template*: nested closures that rebuild only the parts that mention a
generic variable and share everything else. A scheme's body never changes
in a way that matters here: its generic variables are never bound, and its
other variables are shared by every instance anyway.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import itemgetter
from typing import Any, final

from chatml.typecheck.types import (
    GENERIC,
    Prim,
    Row,
    TArray,
    TConstr,
    TFun,
    TRecord,
    TRef,
    TTuple,
    TVar,
    TVariant,
    Type,
    flatten_row,
    has_type_name,
    resolve,
)

Builder = Callable[[list[TVar]], Type]
Template = Callable[[int], Type]


@final  # no subclasses: `type(entry) is Scheme` is a complete test (and narrows for mypy)
class Scheme:
    """A polymorphic type: ``body`` mentions generic variables."""

    __slots__ = ("body", "_template", "_fields", "_used")

    def __init__(self, body: Type) -> None:
        self.body = body
        self._template: Template | None = None
        #: label -> its compiled template; None once the field was instantiated once
        self._fields: dict[str, Template | None] | None = None
        self._used = False

    def __repr__(self) -> str:
        return f"Scheme({self.body!r})"

    def instantiate(self, level: int) -> Type:
        template = self._template
        if template is None:
            if not self._used:  # most schemes are used once: copy, compile on reuse
                self._used = True
                return instantiate(self.body, level)
            template = self._template = compile_template(self.body)
        return template(level)

    def instantiate_field(self, label: str, field: Type, level: int) -> Type:
        """An instance of one field of a record scheme (``Module.export``)."""
        fields = self._fields
        if fields is None:
            fields = self._fields = {}
        template = fields.get(label)
        if template is None:
            if label not in fields:
                fields[label] = None
                return instantiate(field, level)
            template = fields[label] = compile_template(field)
        return template(level)


#: The level of the bound variable in front of a monomorphic entry whose type is
#: cyclic (:func:`copied_entry`): never a real level, above every level and GENERIC.
COPY_AT_USE = GENERIC + 1


def copied_entry(t: Type) -> TVar:
    """The environment entry for a monomorphic binding whose type ``t`` is cyclic.

    A copy of ``t``'s graph without bound variables except one per cycle
    (unification needs them to stop), behind a bound variable marked with
    :data:`COPY_AT_USE`: a use of the name gets :func:`use_copy` of it, a
    fresh copy whose unbound variables are the entry's (so it stays
    monomorphic, spec 4.4), and unification never re-links the entry's own
    nodes into the graph of what a use meets (issue 15).
    """
    marker = TVar(COPY_AT_USE)
    marker.link = copy_graph(t, 0, everything=True)
    return marker


def use_copy(entry: TVar, level: int) -> Type:
    """What a use of the entry made by :func:`copied_entry` sees."""
    return copy_graph(entry, level, everything=True)


def instantiate(t: Type, level: int) -> Type:
    """A copy of ``t`` with fresh variables at ``level`` for its generic ones.

    The copy is of the graph: a node shared in ``t`` is copied once and
    shared in the copy, so the work is linear in the number of nodes.
    """
    try:
        return _copy(t, level, {}, set())
    except _Cycle:
        return copy_graph(t, level, everything=False)


class _Cycle(Exception):
    """:func:`_copy` met a cycle: :func:`copy_graph` copies the type instead."""


def _copy(t: Type, level: int, fresh: dict[Type, Type], active: set[Type]) -> Type:
    """``t`` with fresh variables for its generic ones; ``t`` itself when it has none.

    ``fresh`` maps generic variables to their instances; ``active`` holds the
    nodes being copied: meeting one again is a cycle, which holds no generic
    variables. (Type nodes hash by identity: they key these themselves.)
    Components that are primitives are kept without a call.
    """
    original = t
    if type(t) is TVar:
        link = t.link
        if link is not None:  # (one link needs no call)
            t = link if type(link) is not TVar else resolve(t)
        if type(t) is TVar:
            if t.level != GENERIC:
                return original
            var = fresh.get(t)
            if var is None:
                var = fresh[t] = TVar(level)
            return var
    kind: type[Any] = type(t)  # Any: the last branch calls it as TArray or TRef
    if kind not in _COPIED:
        return original
    known = fresh.get(t)
    if known is not None:  # a shared node: copied once
        return known
    if t in active:
        raise _Cycle
    active.add(t)
    node: Any = t
    fields: dict[str, Type] = {}
    if kind is TFun:
        parts = [*node.params, node.result]
    elif kind is Row:
        fields, tail = flatten_row(node)
        parts = [*fields.values(), tail]
    elif kind is TRecord:
        parts = [node.row, node.flavor]
    elif kind is TVariant:
        parts = [node.row]
    elif kind is TTuple:
        parts = list(node.elems)
    elif kind is TConstr:
        parts = list(node.args)
    else:  # TArray, TRef
        parts = [node.elem]
    changed = False
    for index, part in enumerate(parts):
        part_kind = type(part)
        if part_kind is Prim:
            continue
        if part_kind is TVar:  # variables without a call: unbound, or bound to a leaf
            link = part.link
            if link is None:
                if part.level == GENERIC:
                    var = fresh.get(part)
                    if var is None:
                        var = fresh[part] = TVar(level)
                    parts[index] = var
                    changed = True
                continue
            if type(link) is not TVar and type(link) not in _COPIED:
                continue
        copied = _copy(part, level, fresh, active)
        if copied is not part:
            parts[index] = copied
            changed = True
    active.discard(t)
    if not changed:
        fresh[t] = t
        return original
    copy: Any
    if kind is TFun:
        copy = TFun(tuple(parts[:-1]), parts[-1])
    elif kind is Row:
        copy = Row(dict(zip(fields, parts)), parts[-1])  # noqa: B905 (parts ends with the tail)
    elif kind is TRecord:
        copy = TRecord(parts[0], parts[1], node.exact)
    elif kind is TVariant:
        copy = TVariant(parts[0])
    elif kind is TTuple:
        copy = TTuple(tuple(parts))
    elif kind is TConstr:
        copy = TConstr(node.name, tuple(parts))
    else:
        copy = kind(parts[0])
    fresh[t] = copy
    return copy


#: The composite types :func:`_copy` rebuilds (everything else has no generic variable).
_COPIED = frozenset({TFun, TRecord, TVariant, Row, TArray, TRef, TTuple, TConstr})


def copy_graph(t: Type, level: int, everything: bool) -> Type:
    """A copy of the graph of ``t``, cycles and shared nodes included, one node at a time.

    ``everything``: every compound node is copied and generic variables are
    kept (a scheme's own body, made free of bound variables, so that no
    unification through a use can re-link anything in it); otherwise only
    the nodes from which a generic variable can be reached are copied, with
    fresh variables at ``level`` for the generic ones (an instance). Unbound
    non-generic variables are never copied: they stay shared, as they must.

    Every edge into a copied node that lies on a cycle goes through a bound
    variable (one per such node): unification stops on cyclic types by
    re-linking a bound variable met again (:mod:`chatml.typecheck.unify`), so a cycle
    must hold one.
    """
    root = resolve(t)
    components, on_cycle = _graph(root)
    copied = set(components) if everything else _reaching_generic(components)
    copies: dict[Type, Any] = {node: type(node).__new__(type(node)) for node in copied}
    for node in on_cycle & copied:
        var = TVar(level)
        var.link = copies[node]
        copies[node] = var  # (the blank node itself is var.link)
    fresh: dict[Type, Type] = {}

    def image(part: Type) -> Type:
        copy = copies.get(part)
        if copy is not None:
            return copy
        if not everything and type(part) is TVar and part.level == GENERIC:
            var = fresh.get(part)
            if var is None:
                var = fresh[part] = TVar(level)
            return var
        return part

    for node, copy in copies.items():
        blank = copy.link if type(copy) is TVar else copy
        _fill(node, blank, [image(part) for part in components[node]])
    return image(root)


def _graph(root: Type) -> tuple[dict[Type, list[Type]], set[Type]]:
    """The compound nodes below ``root`` with their resolved components, and the
    nodes a back edge of a depth-first walk leads to (one on every cycle)."""
    components: dict[Type, list[Type]] = {}
    on_cycle: set[Type] = set()
    if type(root) not in _COPIED or has_type_name(root):
        return components, on_cycle
    active: set[Type] = {root}
    components[root] = [resolve(part) for part in _parts_of(root)]
    walk: list[tuple[Type, int]] = [(root, 0)]
    while walk:
        node, index = walk[-1]
        parts = components[node]
        if index == len(parts):
            walk.pop()
            active.discard(node)
            continue
        walk[-1] = (node, index + 1)
        part = parts[index]
        if type(part) not in _COPIED or has_type_name(part):
            continue
        if part in active:
            on_cycle.add(part)
        elif part not in components:
            components[part] = [resolve(below) for below in _parts_of(part)]
            active.add(part)
            walk.append((part, 0))
    return components, on_cycle


def _parts_of(node: Any) -> list[Type]:
    kind = type(node)
    if kind is TFun:
        return [*node.params, node.result]
    if kind is Row:
        return [*node.fields.values(), node.tail]
    if kind is TRecord:
        return [node.row, node.flavor]
    if kind is TVariant:
        return [node.row]
    if kind is TTuple:
        return list(node.elems)
    if kind is TConstr:
        return list(node.args)
    return [node.elem]  # TArray, TRef


def _fill(node: Any, copy: Any, parts: list[Type]) -> None:
    """Make the blank ``copy`` a node like ``node`` over ``parts``."""
    kind = type(node)
    copy.lvl = GENERIC
    if kind is TFun:
        copy.params, copy.result = tuple(parts[:-1]), parts[-1]
    elif kind is Row:
        copy.fields = dict(zip(node.fields, parts))  # noqa: B905 (parts ends with the tail)
        copy.tail = parts[-1]
    elif kind is TRecord:
        copy.row, copy.flavor, copy.exact = parts[0], parts[1], node.exact
    elif kind is TVariant:
        copy.row = parts[0]
    elif kind is TTuple:
        copy.elems = tuple(parts)
    elif kind is TConstr:
        copy.name, copy.args = node.name, tuple(parts)
    else:
        copy.elem = parts[0]


def _reaching_generic(components: dict[Type, list[Type]]) -> set[Type]:
    """The nodes of ``components`` from which a generic variable can be reached."""
    parents: dict[Type, list[Type]] = {}
    found: set[Type] = set()
    todo: list[Type] = []
    for node, parts in components.items():
        for part in parts:
            if type(part) is TVar and part.level == GENERIC:
                if node not in found:
                    found.add(node)
                    todo.append(node)
            elif part in components:
                parents.setdefault(part, []).append(node)
    while todo:
        for parent in parents.get(todo.pop(), ()):
            if parent not in found:
                found.add(parent)
                todo.append(parent)
    return found


def compile_template(t: Type) -> Template:
    """A fast instantiator of ``t``: closures when ``t`` is a tree, else :func:`instantiate`."""
    generics: dict[int, int] = {}
    try:
        compiled = _compile(t, generics, set(), set())
    except _Shared:
        return lambda level: instantiate(t, level)
    count = len(generics)
    if not callable(compiled):
        constant = compiled
        return lambda level: constant
    build: Builder = compiled
    if count == 1:
        return lambda level: build([TVar(level)])
    if count == 2:
        return lambda level: build([TVar(level), TVar(level)])
    return lambda level: build([TVar(level) for _ in range(count)])


def _const(value: Type) -> Builder:
    return lambda fresh: value


def _builder(part: Any) -> Builder:
    return part if callable(part) else _const(part)


class _Shared(Exception):
    """The type is no tree: a node with generic variables below is reached twice."""


def _compile(t: Type, generics: dict[int, int], active: set[int],
             built: set[int]) -> Type | Builder:
    """A constant type (no generics below) or a builder of instances.

    ``built`` holds the nodes already compiled to a builder: meeting one
    again (or meeting a node being compiled: a cycle) raises :class:`_Shared`,
    since closures would copy it once per path.
    """
    t = resolve(t)
    kind = type(t)
    if type(t) is TVar:
        if t.level != GENERIC:
            return t
        index = generics.setdefault(id(t), len(generics))
        return itemgetter(index)
    if kind is TFun or kind is TRecord or kind is TVariant or kind is Row or kind is TArray \
            or kind is TRef or kind is TTuple or kind is TConstr:
        key = id(t)
        if key in active or key in built:
            raise _Shared
        active.add(key)
        compiled = _COMPILERS[kind](t, generics, active, built)
        active.discard(key)
        if callable(compiled):
            built.add(key)
        return compiled
    return t


def _compile_fun(t: Any, generics: dict[int, int], active: set[int],
               built: set[int]) -> Type | Builder:
    params = [_compile(p, generics, active, built) for p in t.params]
    result = _compile(t.result, generics, active, built)
    if not callable(result) and not any(callable(p) for p in params):
        return t
    param_builders = [_builder(p) for p in params]
    result_builder = _builder(result)
    if len(param_builders) == 1:
        only = param_builders[0]
        return lambda fresh: TFun((only(fresh),), result_builder(fresh))
    return lambda fresh: TFun(tuple([b(fresh) for b in param_builders]), result_builder(fresh))


def _compile_record(t: Any, generics: dict[int, int], active: set[int],
               built: set[int]) -> Type | Builder:
    row = _compile(t.row, generics, active, built)
    flavor = _compile(t.flavor, generics, active, built)
    if not callable(row) and not callable(flavor):
        return t
    row_builder, flavor_builder = _builder(row), _builder(flavor)
    exact = t.exact
    return lambda fresh: TRecord(row_builder(fresh), flavor_builder(fresh), exact)


def _compile_variant(t: Any, generics: dict[int, int], active: set[int],
               built: set[int]) -> Type | Builder:
    row = _compile(t.row, generics, active, built)
    if not callable(row):
        return t
    return lambda fresh: TVariant(row(fresh))


def _compile_row(t: Any, generics: dict[int, int], active: set[int],
               built: set[int]) -> Type | Builder:
    fields, tail = flatten_row(t)
    compiled = [(label, _compile(v, generics, active, built)) for label, v in fields.items()]
    tail_part = _compile(tail, generics, active, built)
    if not callable(tail_part) and not any(callable(v) for _, v in compiled):
        return t
    items = [(label, _builder(v)) for label, v in compiled]
    tail_builder = _builder(tail_part)
    return lambda fresh: Row({label: b(fresh) for label, b in items}, tail_builder(fresh))


def _compile_elem(t: Any, generics: dict[int, int], active: set[int],
               built: set[int]) -> Type | Builder:
    elem = _compile(t.elem, generics, active, built)
    if not callable(elem):
        return t
    constructor = type(t)
    return lambda fresh: constructor(elem(fresh))


def _compile_tuple(t: Any, generics: dict[int, int], active: set[int],
               built: set[int]) -> Type | Builder:
    elems = [_compile(e, generics, active, built) for e in t.elems]
    if not any(callable(e) for e in elems):
        return t
    builders = [_builder(e) for e in elems]
    return lambda fresh: TTuple(tuple([b(fresh) for b in builders]))


def _compile_constr(t: Any, generics: dict[int, int], active: set[int],
               built: set[int]) -> Type | Builder:
    args = [_compile(a, generics, active, built) for a in t.args]
    if not any(callable(a) for a in args):
        return t
    builders = [_builder(a) for a in args]
    name = t.name
    return lambda fresh: TConstr(name, tuple([b(fresh) for b in builders]))


_COMPILERS: dict[type, Callable[[Any, dict[int, int], set[int], set[int]], Type | Builder]] = {
    TFun: _compile_fun,
    TRecord: _compile_record,
    TVariant: _compile_variant,
    Row: _compile_row,
    TArray: _compile_elem,
    TRef: _compile_elem,
    TTuple: _compile_tuple,
    TConstr: _compile_constr,
}
