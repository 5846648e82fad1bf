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

from collections.abc import Iterable
from typing import Any

from chatcommon.type_length import (  # noqa: F401 (re-exported)
    TYPE_LENGTH_LIMIT,
    elide,
    type_length_limit,
    type_length_limited,
)

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
    node: Any = t  # a TVar until it is target
    while node is not target:
        following = node.link
        node.link = target
        node = following
    return target


def flatten_row(row: Type) -> tuple[dict[str, Type], Type]:
    """The labels of ``row`` (outermost occurrence wins) and its resolved tail.

    The returned dict may be a row's own field dict: callers must not mutate it.
    """
    if type(row) is not Row:
        if type(row) is TVar and row.link is not None:
            row = resolve(row)
        if type(row) is not Row:
            return {}, row
    fields = row.fields
    tail = row.tail
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
        if type(tail) is TVar and tail.link is not None:
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


def has_type_name(t: Type) -> bool:
    """Whether ``t`` prints by a registered name (so copies must keep the object itself)."""
    named = _TYPE_NAMES.get(id(t))
    return named is not None and named[0] is t


#: A node met again (not on the current path) whose text is at most this long, and
#: refers to nothing outside itself, is printed again; a longer one is named instead.
REPEAT_LIMIT = 100

_NO_BACK_EDGE = 1 << 62  # the "lowest back-edge target" of a subtree without one


class _End:
    """The end of a compound node on the printer's work stack."""

    __slots__ = ("key", "start", "chars")

    def __init__(self, key: int, start: int, chars: int) -> None:
        self.key = key
        self.start = start  # index of the node's first fragment
        self.chars = chars  # characters printed before the node


class _Printer:
    """Prints a type graph in time linear in its size, never by Python recursion.

    The walk is depth first, left to right (so variables are named in order of
    appearance) and emits text fragments in order. A node met again while it
    is being printed is a back edge of a cycle: ``'rec`` (a mu type's name for
    a mu type). A node met again after it was printed is printed again when its
    text is short and *closed* (no back edge inside it leaves it); otherwise it
    is *named*: a second pass prints its first occurrence as ``mu tN. BODY``
    and every later one as ``tN``. So a node reached twice is printed once,
    whatever the number of paths to it, and the text of a type whose nodes are
    not shared is exactly what a plain tree printer gives (spec 4.1).
    """

    def __init__(self, namer: Namer) -> None:
        self.namer = namer

    def run(self, roots: list[Type], open_: str, separator: str, close: str) -> str:
        done: dict[int, str | None] = {}
        fragments, named = self._pass(roots, open_, separator, close, None, done)
        if not named:
            return "".join(fragments)
        repeated = {key for key, text in done.items() if text is not None}
        binders = dict.fromkeys(named, "")  # named again in order of appearance
        fragments, _ = self._pass(roots, open_, separator, close, binders, {}, repeated)
        return "".join(fragments)

    def _pass(self, roots: list[Type], open_: str, separator: str, close: str,
              binders: dict[int, str] | None, done: dict[int, str | None],
              repeated: set[int] | None = None) -> tuple[list[str], dict[int, str]]:
        """One walk; returns its fragments and the nodes it had to name (by id).

        ``done`` collects the printed nodes (their text when repeatable); the
        second pass (``binders`` given) repeats just the nodes the first one did.
        """
        out: list[str] = [open_]
        chars = len(open_)
        path: dict[int, int] = {}  # nodes being printed -> their depth
        lows: list[int] = []  # per node being printed: its lowest back-edge target depth
        named: dict[int, str] = {}
        keep: list[Type] = []  # keeps printed nodes alive, so ids stay unique
        taken: set[str] | None = None
        work: list[Type | str | _End] = []
        for index in range(len(roots) - 1, -1, -1):
            work.append(roots[index])
            if index:
                work.append(separator)
        item: Any  # dispatched on kind, which mypy cannot follow
        while work:
            item = work.pop()
            kind = type(item)
            if kind is str:
                out.append(item)
                chars += len(item)
                continue
            if kind is _End:
                end: _End = item
                depth = path.pop(end.key)
                low = lows.pop()
                if lows and low < lows[-1]:
                    lows[-1] = low
                if repeated is None:
                    repeatable = low >= depth and chars - end.chars <= REPEAT_LIMIT
                else:
                    repeatable = end.key in repeated
                done[end.key] = "".join(out[end.start:]) if repeatable else None
                continue
            t = resolve(item)
            text = self.namer.name(t) if type(t) is TVar else _leaf(t)
            if text is None:
                key = id(t)
                if key in path:  # a back edge
                    text = t.name if type(t) is TMu else "'rec"
                    if path[key] < lows[-1]:
                        lows[-1] = path[key]
                elif key in done:
                    text = named.get(key)
                    if text is None:
                        text = done[key]
                    if text is None:  # (first pass only: the second knows all names)
                        if taken is None:
                            taken = _mu_names(roots)
                        text = named[key] = _fresh_name(len(named), taken)
                        taken.add(text)
                else:
                    path[key] = len(path)
                    lows.append(_NO_BACK_EDGE)
                    keep.append(t)
                    work.append(_End(key, len(out), chars))
                    parts = _parts(t)
                    work.extend(reversed(parts))
                    if binders is not None and key in binders:
                        if taken is None:
                            taken = _mu_names(roots)
                        name = named[key] = _fresh_name(len(named), taken)
                        taken.add(name)
                        work.append(f"mu {name}. ")
                    continue
            out.append(text)
            chars += len(text)
        out.append(close)
        return out, named


def _mu_names(roots: list[Type]) -> set[str]:
    """The mu names below ``roots`` (generated names avoid them)."""
    names: set[str] = set()
    seen: set[int] = set()
    stack = list(roots)
    while stack:
        node = resolve(stack.pop())
        key = id(node)
        if key in seen:
            continue
        seen.add(key)
        if type(node) is TMu:
            names.add(node.name)
        stack.extend(children(node))
    return names


def _fresh_name(index: int, taken: set[str]) -> str:
    while True:
        index += 1
        name = f"t{index}"
        if name not in taken:
            return name


def _leaf(t: Type) -> str | None:
    """The text of a type without children (or printed by name), else None."""
    kind = type(t)
    if kind is Prim:
        return t.name  # type: ignore[attr-defined]  # t is a TVar or TRecVar here
    if kind is TError:
        return "<error>"
    if kind is TRecVar:
        return t.name  # type: ignore[attr-defined]  # t is a TVar or TRecVar here
    named = _TYPE_NAMES.get(id(t))
    if named is not None and named[0] is t:
        return named[1]
    if isinstance(t, Flavor):
        return t.name
    return None


def _parts(t: Type) -> list[Type | str]:
    """The text of the compound ``t``: literal fragments and component types, in order."""
    if isinstance(t, TArray):
        return [t.elem, " array"]
    if isinstance(t, TRef):
        return ["ref(", t.elem, ")"]
    if isinstance(t, TConstr):
        if len(t.args) == 1:
            return [t.args[0], " " + t.name]
        return ["(", *_joined(t.args, ", "), ") " + t.name]
    if isinstance(t, TFun):
        if not t.params:
            return ["( -> ", t.result, ")"]
        return ["(", *_joined(t.params, ", "), " -> ", t.result, ")"]
    if isinstance(t, TTuple):
        return ["(", *_joined(t.elems, " * "), ")"]
    if isinstance(t, TRecord):
        return _record(t.row)
    if isinstance(t, TVariant):
        return _variant(t.row)
    if isinstance(t, TMu):
        return [f"mu {t.name}. ", t.body]
    if isinstance(t, (Row, RowEmpty)):
        return _record(t)
    return ["?"]


def _joined(types: Iterable[Type], separator: str) -> list[Type | str]:
    parts: list[Type | str] = []
    for t in types:
        if parts:
            parts.append(separator)
        parts.append(t)
    return parts


def _record(row: Type) -> list[Type | str]:
    fields, tail = flatten_row(row)
    parts: list[Type | str] = ["{"]
    for label in sorted(fields):
        parts.append(f"{label}: " if len(parts) == 1 else f"; {label}: ")
        parts.append(fields[label])
    if not isinstance(tail, RowEmpty):
        parts.append("..." if len(parts) == 1 else "; ...")
    parts.append("}")
    return parts


def _variant(row: Type) -> list[Type | str]:
    fields, tail = flatten_row(row)
    parts: list[Type | str] = ["["]
    first = True
    for tag in sorted(fields):
        lead = "`" if first else " | `"
        first = False
        payload = resolve(fields[tag])
        if isinstance(payload, TTuple):
            if not payload.elems:
                parts.append(lead + tag)
                continue
            parts.append(f"{lead}{tag}(")
            parts.extend(_joined(payload.elems, ", "))
        else:
            parts.extend((f"{lead}{tag}(", payload))
        parts.append(")")
    if not isinstance(tail, RowEmpty):
        parts.append("..." if first else " | ...")
    parts.append("]")
    return parts


def show_type(t: Type, namer: Namer | None = None) -> str:
    """``t`` as text (spec 4.1), however long; pass one ``namer`` for all types of one message."""
    return _Printer(namer or Namer()).run([t], "", "", "")


def show_message_type(t: Type, namer: Namer | None = None) -> str:
    """``t`` as a message prints it: :func:`show_type` cut at the length bound
    (:mod:`chatcommon.type_length`), saying how much was left out."""
    return elide(show_type(t, namer))


def show_signature(t: Type, namer: Namer | None = None) -> str:
    """``t`` as in a ``val`` line: a function's outer parentheses are dropped."""
    namer = namer or Namer(signature=True)
    text = _Printer(namer).run([t], "", "", "")
    resolved = resolve(t)
    if isinstance(resolved, TFun) and resolved.params and text.startswith("("):
        text = text[1:-1]
    return elide(text)


def show_payload(payload: Type, namer: Namer | None = None) -> str:
    """A variant payload as written after its tag: ``""``, ``"(int)"``, ``"(int, string)"``."""
    payload = resolve(payload)
    printer = _Printer(namer or Namer())
    if isinstance(payload, TTuple):
        if not payload.elems:
            return ""
        return elide(printer.run(list(payload.elems), "(", ", ", ")"))
    return elide(printer.run([payload], "(", "", ")"))


def payload_arity(payload: Type) -> int | None:
    """How many values a variant payload holds (None when not yet known)."""
    payload = resolve(payload)
    if isinstance(payload, TTuple):
        return len(payload.elems)
    return None
