"""The typechecker's internal type language (spec 4.1) and how types are printed.

Types are plain slotted objects, shared freely; only type variables change.

* :class:`Prim` -- ``int``, ``float``, ``bool``, ``string``, ``unit`` (singletons);
* :class:`TArray`, :class:`TRef`, :class:`TConstr` (only ``task``), :class:`TFun`
  (uncurried, exact arity), :class:`TTuple`;
* :class:`TRecord` / :class:`TVariant` over a *row*: :class:`Row` (labels to
  types, then a tail), :data:`ROW_EMPTY` (closed) or a row variable. A record
  also carries a *flavor*:
  :data:`RECORD`, a :class:`ModuleFlavor` (modules are records for the
  checker, DECISIONS 6a keeps them apart from plain records where the runtime
  would fail) or a flavor variable; and an :class:`Exactness` cell (whether
  its values may hold fields the type does not list, DECISIONS 6a);
* :class:`TVar` -- a union-find cell: ``link`` is None while unbound; ``level``
  drives generalisation (``GENERIC`` marks a quantified variable of a scheme);
* :class:`TMu` / :class:`TRecVar` -- explicit recursive types of ``type``
  declarations and the builtin ``json`` alias;
* :data:`ERROR` -- the type of an expression whose checking failed: it unifies
  with anything, so one error never cascades into others.

Variant payloads are always a :class:`TTuple` of the constructor's arguments
(empty for ``` `A ```), so a constructor's arity is part of its type and
``` `A(x) ``` can never match ``` `A(1, 2) ``` (DECISIONS 6a, quirk Q6).

Composite nodes carry ``lvl``: an upper bound of the levels of the unbound,
non-generic variables below them (``GENERIC`` when not yet known). Levels only
ever decrease (binding lowers the levels of what a variable is bound to), so
the bound stays true; unification uses it to skip subtrees that need no level
adjustment (:mod:`chatml.typecheck.unify`).

Printing follows spec 4.1: ``(int, string -> bool)``, ``{a: int; ...}``,
``[`A | `B(int)]``, ``'a`` for unbound variables (named per message by a
:class:`Namer`), ``mu e. ...`` and ``'rec`` for a back edge of an inferred cycle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

GENERIC = 1 << 30  #: the level of a quantified (generic) variable

class Type:
    """Base class of every type node."""

    __slots__ = ()


class Prim(Type):
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


INT = Prim("int")
FLOAT = Prim("float")
BOOL = Prim("bool")
STRING = Prim("string")
UNIT = Prim("unit")
PRIMITIVES: dict[str, Prim] = {p.name: p for p in (INT, FLOAT, BOOL, STRING, UNIT)}


class TVar(Type):
    """A unification variable (also used for row and flavor variables).

    Its identity is the object itself (quirk Q12: no two variables are ever
    confused by name).
    """

    __slots__ = ("link", "level")

    def __init__(self, level: int) -> None:
        self.link: Type | None = None
        self.level = level

    def __repr__(self) -> str:
        if self.link is not None:
            return f"<{id(self):x}={self.link!r}>"
        return f"'{id(self):x}@{self.level}"


class TArray(Type):
    __slots__ = ("elem", "lvl")

    def __init__(self, elem: Type) -> None:
        self.elem = elem
        self.lvl = GENERIC


class TRef(Type):
    __slots__ = ("elem", "lvl")

    def __init__(self, elem: Type) -> None:
        self.elem = elem
        self.lvl = GENERIC


class TConstr(Type):
    """A named constructor applied to arguments; only ``task`` exists."""

    __slots__ = ("name", "args", "lvl")

    def __init__(self, name: str, args: tuple[Type, ...]) -> None:
        self.name = name
        self.args = args
        self.lvl = GENERIC


class TFun(Type):
    __slots__ = ("params", "result", "lvl")

    def __init__(self, params: tuple[Type, ...], result: Type) -> None:
        self.params = params
        self.result = result
        self.lvl = GENERIC


class TTuple(Type):
    """A tuple; only used for variant payloads (never a user-visible value)."""

    __slots__ = ("elems", "lvl")

    def __init__(self, elems: tuple[Type, ...]) -> None:
        self.elems = elems
        self.lvl = GENERIC


class Row(Type):
    """``(l1: t1, ..., ln: tn | tail)``; ``fields`` is never empty."""

    __slots__ = ("fields", "tail", "lvl")

    def __init__(self, fields: dict[str, Type], tail: Type) -> None:
        self.fields = fields
        self.tail = tail
        self.lvl = GENERIC


class RowEmpty(Type):
    """The end of a closed row."""

    __slots__ = ()


ROW_EMPTY = RowEmpty()


class Flavor(Type):
    """Whether a record type is a plain record or a module."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


class ModuleFlavor(Flavor):
    __slots__ = ()


RECORD = Flavor("record")


class Exactness:
    """Whether a closed record type lists all fields of its values (a union-find cell).

    ``relied``: a closed record pattern counted on it; ``inexact``: its values
    may hold fields the type does not list. The operations live in
    :mod:`chatml.typecheck.exactness`.
    """

    __slots__ = ("link", "relied", "inexact", "dependents")

    def __init__(self, inexact: bool = False) -> None:
        self.link: Exactness | None = None
        self.relied = False
        self.inexact = inexact
        #: cells that become inexact when this one does (None: none yet)
        self.dependents: list[Exactness] | None = None


class TRecord(Type):
    __slots__ = ("row", "flavor", "exact", "lvl")

    def __init__(self, row: Type, flavor: Type, exact: Exactness | None = None) -> None:
        self.row = row
        self.flavor = flavor
        self.exact = Exactness() if exact is None else exact
        self.lvl = GENERIC


class TVariant(Type):
    __slots__ = ("row", "lvl")

    def __init__(self, row: Type) -> None:
        self.row = row
        self.lvl = GENERIC


class TMu(Type):
    """``mu name. body``: an explicit recursive type; ``body`` holds :class:`TRecVar` nodes."""

    __slots__ = ("name", "body", "_unfolded")

    def __init__(self, name: str, body: Type) -> None:
        self.name = name
        self.body = body
        self._unfolded: Type | None = None

    def unfold(self) -> Type:
        """The body with this type substituted for its variable (computed once)."""
        if self._unfolded is None:
            self._unfolded = substitute_recvar(self.body, self.name, self)
        return self._unfolded


class TRecVar(Type):
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


class TError(Type):
    __slots__ = ()


ERROR = TError()

TASK = "task"


def task_of(t: Type) -> TConstr:
    return TConstr(TASK, (t,))


def make_row(fields: dict[str, Type], tail: Type) -> Type:
    """A row, or just ``tail`` when there are no fields (no label-less row nodes, Q11)."""
    return Row(fields, tail) if fields else tail


# --------------------------------------------------------------------------- resolution


def resolve(t: Type) -> Type:
    """Follow bound variables to the representative type (with path compression)."""
    if type(t) is not TVar:
        return t
    link = t.link
    if link is None:
        return t
    if type(link) is not TVar or link.link is None:
        return link
    # a long chain of bound variables (thousands of `and` bindings) is followed with a loop,
    # not recursion, then compressed: every variable on it links to the representative
    target: Type = link
    while type(target) is TVar and target.link is not None:
        target = target.link
    node: Type = t
    while node is not target:
        following = node.link  # type: ignore[attr-defined]
        node.link = target  # type: ignore[attr-defined]
        node = following
    return target


def flatten_row(row: Type) -> tuple[dict[str, Type], Type]:
    """The labels of ``row`` (outermost occurrence wins) and its resolved tail.

    The returned dict may be a row's own field dict: callers must not mutate it.
    """
    if type(row) is not Row:
        if type(row) is TVar and row.link is not None:  # type: ignore[attr-defined]
            row = resolve(row)
        if type(row) is not Row:
            return {}, row
    fields = row.fields  # type: ignore[attr-defined]
    tail = row.tail  # type: ignore[attr-defined]
    if type(tail) is TVar:
        link = tail.link
        if link is None:  # the common case first: one row, an unbound tail
            return fields, tail
        tail = link if type(link) is not TVar else resolve(tail)
    if type(tail) is not Row:
        return fields, tail
    merged = dict(fields)
    while type(tail) is Row:
        for label, value in tail.fields.items():
            if label not in merged:
                merged[label] = value
        tail = tail.tail
        if type(tail) is TVar and tail.link is not None:  # type: ignore[attr-defined]
            tail = resolve(tail)
    return merged, tail


def substitute_recvar(t: Type, name: str, replacement: Type) -> Type:
    """``t`` with every free :class:`TRecVar` ``name`` replaced (only bodies of mu types)."""
    if isinstance(t, TRecVar):
        return replacement if t.name == name else t
    if isinstance(t, TVar):
        target = resolve(t)
        return t if target is t else substitute_recvar(target, name, replacement)
    if isinstance(t, TArray):
        return TArray(substitute_recvar(t.elem, name, replacement))
    if isinstance(t, TRef):
        return TRef(substitute_recvar(t.elem, name, replacement))
    if isinstance(t, TConstr):
        return TConstr(t.name, tuple(substitute_recvar(a, name, replacement)
                                     for a in t.args))
    if isinstance(t, TFun):
        return TFun(tuple(substitute_recvar(p, name, replacement) for p in t.params),
                    substitute_recvar(t.result, name, replacement))
    if isinstance(t, TTuple):
        return TTuple(tuple(substitute_recvar(e, name, replacement)
                            for e in t.elems))
    if isinstance(t, TRecord):
        return TRecord(substitute_recvar(t.row, name, replacement), t.flavor, t.exact)
    if isinstance(t, TVariant):
        return TVariant(substitute_recvar(t.row, name, replacement))
    if isinstance(t, Row):
        return Row({label: substitute_recvar(v, name, replacement)
                    for label, v in t.fields.items()},
                   substitute_recvar(t.tail, name, replacement))
    if isinstance(t, TMu):
        if t.name == name:
            return t
        return TMu(t.name, substitute_recvar(t.body, name, replacement))
    return t


def free_recvars(t: Type, bound: frozenset[str] = frozenset()) -> set[str]:
    """Names of recursive-type variables occurring free in ``t``."""
    found: set[str] = set()
    stack: list[tuple[Type, frozenset[str]]] = [(t, bound)]
    while stack:
        node, names = stack.pop()
        node = resolve(node)
        if isinstance(node, TRecVar):
            if node.name not in names:
                found.add(node.name)
        elif isinstance(node, TMu):
            stack.append((node.body, names | {node.name}))
        else:
            stack.extend((child, names) for child in children(node))
    return found


def children(t: Type) -> Iterable[Type]:
    """The direct component types of ``t`` (not following variables)."""
    if isinstance(t, (TArray, TRef)):
        return (t.elem,)
    if isinstance(t, TConstr):
        return t.args
    if isinstance(t, TFun):
        return (*t.params, t.result)
    if isinstance(t, TTuple):
        return t.elems
    if isinstance(t, TRecord):
        return (t.row, t.flavor)
    if isinstance(t, TVariant):
        return (t.row,)
    if isinstance(t, Row):
        return (*t.fields.values(), t.tail)
    if isinstance(t, TMu):
        return (t.body,)
    return ()


def contains_generic(t: Type) -> bool:
    """Whether ``t`` mentions a quantified variable (so lookups must instantiate it)."""
    seen: set[int] = set()
    stack = [t]
    while stack:
        node = resolve(stack.pop())
        if type(node) is TVar:
            if node.level == GENERIC:
                return True
            continue
        key = id(node)
        if key in seen:
            continue
        seen.add(key)
        stack.extend(children(node))
    return False


# --------------------------------------------------------------------------- printing


def _letter_name(index: int) -> str:
    letter = "abcdefghijklmnopqrstuvwxyz"[index % 26]
    round_ = index // 26
    return letter if round_ == 0 else f"{letter}{round_}"


class Namer:
    """Names unbound variables ``'a``, ``'b``, ... in order of appearance.

    One namer is shared by all types of one message, so a variable has the
    same name everywhere in it. In *signature* style (``val`` lines) generic
    variables print as ``'a`` and unbound non-generic (weak) ones as ``'_a``;
    in message style (spec 4.1) generic variables print without the quote.
    """

    def __init__(self, signature: bool = False) -> None:
        self.signature = signature
        self._names: dict[int, str] = {}
        self._keep: list[TVar] = []  # keeps named variables alive, so ids stay unique

    def name(self, var: TVar) -> str:
        name = self._names.get(id(var))
        if name is None:
            name = _letter_name(len(self._names))
            self._names[id(var)] = name
            self._keep.append(var)
        if var.level == GENERIC:
            return "'" + name if self.signature else name
        return "'_" + name if self.signature else "'" + name


#: Builtin aliases print by name (``json``, ``item``) instead of structurally.
_TYPE_NAMES: dict[int, tuple[Type, str]] = {}


def register_type_name(t: Type, name: str) -> None:
    """Print the (shared) type object ``t`` as ``name`` from now on."""
    _TYPE_NAMES[id(t)] = (t, name)


class _Join:
    """A pending compound: combines the texts of its ``count`` children (see :class:`_Printer`)."""

    __slots__ = ("count", "combine", "key")

    def __init__(self, count: int, combine: Callable[[list[str]], str], key: int | None) -> None:
        self.count = count
        self.combine = combine
        self.key = key


class _Printer:
    """Prints types with an explicit work stack, never Python recursion.

    A type can be as deep as the program that produced it (a 10,000-level
    nested list literal has a 10,000-level type), far deeper than Python's
    recursion limit; so ``show`` walks the tree iteratively: a compound type
    pushes a :class:`_Join` and then its children, whose texts pile up on an
    output stack until the join pops them and pushes the combined text.
    Children are visited left to right, so variables are named in order of
    appearance exactly as a recursive printer would name them.
    """

    def __init__(self, namer: Namer) -> None:
        self.namer = namer
        self.path: set[int] = set()

    def show(self, t: Type) -> str:
        return self._run([t], _single)

    def payload(self, payload: Type) -> str:
        payload = resolve(payload)
        if isinstance(payload, TTuple):
            if not payload.elems:
                return ""
            return self._run(list(payload.elems), _parenthesised)
        return self._run([payload], _parenthesised)

    def _run(self, roots: list[Type], combine: Callable[[list[str]], str]) -> str:
        out: list[str] = []
        work: list[Type | _Join] = [_Join(len(roots), combine, None), *reversed(roots)]
        path = self.path
        while work:
            item = work.pop()
            if type(item) is _Join:
                count = item.count
                parts = out[len(out) - count:] if count else []
                if count:
                    del out[len(out) - count:]
                out.append(item.combine(parts))
                if item.key is not None:
                    path.discard(item.key)
                continue
            t = resolve(item)  # type: ignore[arg-type]
            leaf = self.namer.name(t) if isinstance(t, TVar) else self._leaf(t)
            if leaf is not None:
                out.append(leaf)
                continue
            key = id(t)
            if key in path:
                out.append(t.name if isinstance(t, TMu) else "'rec")
                continue
            path.add(key)
            children, combine = self._compound(t)
            work.append(_Join(len(children), combine, key))
            work.extend(reversed(children))
        return out[0]

    @staticmethod
    def _leaf(t: Type) -> str | None:
        """The text of a type without children (or printed by name), else None."""
        if isinstance(t, Prim):
            return t.name
        if isinstance(t, TError):
            return "<error>"
        if isinstance(t, TRecVar):
            return t.name
        named = _TYPE_NAMES.get(id(t))
        if named is not None and named[0] is t:
            return named[1]
        if isinstance(t, Flavor):
            return t.name
        return None

    def _compound(self, t: Type) -> tuple[list[Type], Callable[[list[str]], str]]:
        """The children of ``t`` and how to combine their texts."""
        if isinstance(t, TArray):
            return [t.elem], lambda p: f"{p[0]} array"
        if isinstance(t, TRef):
            return [t.elem], lambda p: f"ref({p[0]})"
        if isinstance(t, TConstr):
            name = t.name
            if len(t.args) == 1:
                return [t.args[0]], lambda p: f"{p[0]} {name}"
            return list(t.args), lambda p: "(" + ", ".join(p) + f") {name}"
        if isinstance(t, TFun):
            n_params = len(t.params)
            return [*t.params, t.result], lambda p: (
                f"({', '.join(p[:n_params])} -> {p[-1]})" if n_params else f"( -> {p[-1]})")
        if isinstance(t, TTuple):
            return list(t.elems), lambda p: "(" + " * ".join(p) + ")"
        if isinstance(t, TRecord):
            return self._record(t.row)
        if isinstance(t, TVariant):
            return self._variant(t.row)
        if isinstance(t, TMu):
            name = t.name
            return [t.body], lambda p: f"mu {name}. {p[0]}"
        if isinstance(t, (Row, RowEmpty)):
            return self._record(t)
        return [], lambda _: "?"

    @staticmethod
    def _record(row: Type) -> tuple[list[Type], Callable[[list[str]], str]]:
        fields, tail = flatten_row(row)
        labels = sorted(fields)
        open_ = not isinstance(tail, RowEmpty)

        def combine(parts: list[str]) -> str:
            texts = [f"{label}: {text}" for label, text in zip(labels, parts, strict=True)]
            if open_:
                texts.append("...")
            return "{" + "; ".join(texts) + "}"

        return [fields[label] for label in labels], combine

    @staticmethod
    def _variant(row: Type) -> tuple[list[Type], Callable[[list[str]], str]]:
        fields, tail = flatten_row(row)
        tags = sorted(fields)
        open_ = not isinstance(tail, RowEmpty)
        children: list[Type] = []
        shapes: list[int | None] = []  # per tag: payload element count, None for a single payload
        for tag in tags:
            payload = resolve(fields[tag])
            if isinstance(payload, TTuple):
                children.extend(payload.elems)
                shapes.append(len(payload.elems))
            else:
                children.append(payload)
                shapes.append(None)

        def combine(parts: list[str]) -> str:
            texts = []
            index = 0
            for tag, shape in zip(tags, shapes, strict=True):
                if shape is None:
                    texts.append(f"`{tag}({parts[index]})")
                    index += 1
                elif shape == 0:
                    texts.append("`" + tag)
                else:
                    texts.append(f"`{tag}(" + ", ".join(parts[index:index + shape]) + ")")
                    index += shape
            if open_:
                texts.append("...")
            return "[" + " | ".join(texts) + "]"

        return children, combine


def _single(parts: list[str]) -> str:
    return parts[0]


def _parenthesised(parts: list[str]) -> str:
    return "(" + ", ".join(parts) + ")"


def show_type(t: Type, namer: Namer | None = None) -> str:
    """``t`` as text (spec 4.1); pass one ``namer`` for all types of one message."""
    return _Printer(namer or Namer()).show(t)


def show_signature(t: Type, namer: Namer | None = None) -> str:
    """``t`` as in a ``val`` line: a function's outer parentheses are dropped."""
    namer = namer or Namer(signature=True)
    text = _Printer(namer).show(t)
    resolved = resolve(t)
    if isinstance(resolved, TFun) and resolved.params and text.startswith("("):
        return text[1:-1]
    return text


def show_payload(payload: Type, namer: Namer | None = None) -> str:
    """A variant payload as written after its tag: ``""``, ``"(int)"``, ``"(int, string)"``."""
    return _Printer(namer or Namer()).payload(payload)


def payload_arity(payload: Type) -> int | None:
    """How many values a variant payload holds (None when not yet known)."""
    payload = resolve(payload)
    if isinstance(payload, TTuple):
        return len(payload.elems)
    return None
