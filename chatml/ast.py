"""The ChatML source syntax tree (spec section 3.8), produced by :mod:`chatml.syntax.parser`.

Every node is a frozen, slotted attrs class whose last field is ``span``
(a :class:`~chatcommon.sources.Span`); spans, and the other position-only fields
(``name_span``, ``param_spans``), take no part in equality or hashing, so two
trees parsed from differently laid-out sources compare by content alone.

The parser's desugarings (spec 3.7) are already applied: ``let f x = e`` binds
``Lambda(("x",), e)``, ``let x : T = e`` binds ``Annot(e, T)``,
``e.l(a)`` is ``App(FieldGet(e, "l"), (a,))``, ``let* x = a in b`` is
``App(FieldGet(Var("Task"), "bind"), (a, Lambda(("x",), b)))`` (``map`` for
``let+``; a ``()`` binder is the parameter ``__chatml_task_unit``).
Parentheses leave no trace.

Node groups, for ``match`` statements and type hints: :data:`Expr`,
:data:`Pattern`, :data:`TypeExpr`, :data:`Stmt`. :func:`children` and
:func:`walk` give generic traversal.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator

import attrs

from chatcommon.records import SharedMethods, frozen_record
from chatcommon.sources import Span

TASK_UNIT_PARAM = "__chatml_task_unit"


class _Base(SharedMethods):
    """Shared by every node: one generic ``repr``, ``==`` and ``hash`` instead of ones
    generated per class (generating methods is most of this module's import time, and
    so of ``chatml check``'s start-up); see :mod:`chatcommon.records`. ``==`` compares
    the fields declared with ``eq`` (all but the positions)."""

    __slots__ = ()


def _span() -> Span:
    return attrs.field(eq=False, repr=False)


def _positions() -> tuple[Span, ...]:
    return attrs.field(default=(), eq=False, repr=False, kw_only=True)


class UnOp(enum.Enum):
    """Prefix arithmetic operators."""

    NEG_INT = "-"
    NEG_FLOAT = "-."

    @property
    def symbol(self) -> str:
        return self.value


class BinOp(enum.Enum):
    """Binary operators, one per spelling; ``level`` is the binding level of spec 3.3."""

    MUL = "*"
    DIV = "/"
    FMUL = "*."
    FDIV = "/."
    ADD = "+"
    SUB = "-"
    CONCAT = "++"
    FADD = "+."
    FSUB = "-."
    EQ = "=="
    NE = "!="
    LT = "<"
    GT = ">"
    LE = "<="
    GE = ">="
    FLT = "<."
    FGT = ">."
    FLE = "<=."
    FGE = ">=."

    @property
    def symbol(self) -> str:
        return self.value

    @property
    def level(self) -> int:
        return _LEVELS[self]


_LEVELS = {op: 30 for op in (BinOp.MUL, BinOp.DIV, BinOp.FMUL, BinOp.FDIV)}
_LEVELS.update({op: 20 for op in (BinOp.ADD, BinOp.SUB, BinOp.CONCAT, BinOp.FADD, BinOp.FSUB)})
_LEVELS.update({op: 10 for op in BinOp if op not in _LEVELS})

# --------------------------------------------------------------------------- type expressions


@frozen_record
class TName(_Base):
    """A type name: a primitive (``int``), an alias (``json``) or a declared type."""

    name: str
    span: Span = _span()


@frozen_record
class TArrow(_Base):
    """``param -> result`` (right associative)."""

    param: TypeExpr
    result: TypeExpr
    span: Span = _span()


@frozen_record
class TConstr(_Base):
    """A postfix constructor application: ``int array`` is ``TConstr("array", (TName("int"),))``."""

    name: str
    args: tuple[TypeExpr, ...]
    span: Span = _span()


@frozen_record
class TField(_Base):
    """``label : type`` in a record type."""

    label: str
    type: TypeExpr
    span: Span = _span()


@frozen_record
class TRecord(_Base):
    """``{ l1 : t1; ... }`` (closed)."""

    fields: tuple[TField, ...]
    span: Span = _span()


@frozen_record
class TCase(_Base):
    """One case ``` `Tag(t1, ...) ``` of a variant type (``args`` empty for ``` `Tag ```)."""

    tag: str
    args: tuple[TypeExpr, ...]
    span: Span = _span()


@frozen_record
class TVariant(_Base):
    """``[ `A | `B(t) ]`` (closed)."""

    cases: tuple[TCase, ...]
    span: Span = _span()


TypeExpr = TName | TArrow | TConstr | TRecord | TVariant

# --------------------------------------------------------------------------- patterns


@frozen_record
class PUnit(_Base):
    span: Span = _span()


@frozen_record
class PWildcard(_Base):
    span: Span = _span()


@frozen_record
class PVar(_Base):
    name: str
    span: Span = _span()


@frozen_record
class PInt(_Base):
    value: int
    span: Span = _span()


@frozen_record
class PFloat(_Base):
    value: float
    span: Span = _span()


@frozen_record
class PBool(_Base):
    value: bool
    span: Span = _span()


@frozen_record
class PString(_Base):
    value: str
    span: Span = _span()


@frozen_record
class PVariant(_Base):
    """``` `Tag ``` (no ``args``) or ``` `Tag(p1, ...) ```."""

    tag: str
    args: tuple[Pattern, ...]
    span: Span = _span()


@frozen_record
class PField(_Base):
    """``label = pattern`` in a record pattern."""

    label: str
    pattern: Pattern
    span: Span = _span()


@frozen_record
class PRecord(_Base):
    """``{ l = p; ... }``; ``is_open`` when it ends with ``; _``."""

    fields: tuple[PField, ...]
    is_open: bool
    span: Span = _span()


Pattern = PUnit | PWildcard | PVar | PInt | PFloat | PBool | PString | PVariant | PRecord

# --------------------------------------------------------------------------- expressions


@frozen_record
class Unit(_Base):
    span: Span = _span()


@frozen_record
class Int(_Base):
    value: int
    span: Span = _span()


@frozen_record
class Float(_Base):
    value: float
    span: Span = _span()


@frozen_record
class Bool(_Base):
    value: bool
    span: Span = _span()


@frozen_record
class String(_Base):
    value: str
    span: Span = _span()


@frozen_record
class Var(_Base):
    """A variable, or a module used as a value (uppercase name)."""

    name: str
    span: Span = _span()


@frozen_record
class Prim1(_Base):
    """Integer or float negation."""

    op: UnOp
    operand: Expr
    span: Span = _span()


@frozen_record
class Prim2(_Base):
    op: BinOp
    left: Expr
    right: Expr
    span: Span = _span()


@frozen_record
class Lambda(_Base):
    """``fun x y -> body``; no ``params`` for ``fun () -> body``."""

    params: tuple[str, ...]
    body: Expr
    span: Span = _span()
    param_spans: tuple[Span, ...] = _positions()


@frozen_record
class App(_Base):
    """``fn(args)``; ``f()`` has no args."""

    fn: Expr
    args: tuple[Expr, ...]
    span: Span = _span()


@frozen_record
class If(_Base):
    cond: Expr
    then_branch: Expr
    else_branch: Expr
    span: Span = _span()


@frozen_record
class While(_Base):
    cond: Expr
    body: Expr
    span: Span = _span()


@frozen_record
class LetIn(_Base):
    """``let name = rhs in body`` (non-recursive)."""

    name: str
    rhs: Expr
    body: Expr
    span: Span = _span()
    name_span: Span | None = attrs.field(default=None, eq=False, repr=False, kw_only=True)


@frozen_record
class RecBinding(_Base):
    """One ``name = rhs`` of a ``let rec ... and ...`` group."""

    name: str
    rhs: Expr
    span: Span = _span()
    name_span: Span | None = attrs.field(default=None, eq=False, repr=False, kw_only=True)


@frozen_record
class LetRec(_Base):
    """``let rec b1 and b2 ... in body``."""

    bindings: tuple[RecBinding, ...]
    body: Expr
    span: Span = _span()


@frozen_record
class MatchArm(_Base):
    """``| pattern -> body``; ``pattern.span`` is the arm's pattern span."""

    pattern: Pattern
    body: Expr
    span: Span = _span()


@frozen_record
class Match(_Base):
    scrutinee: Expr
    arms: tuple[MatchArm, ...]
    span: Span = _span()


@frozen_record
class Field(_Base):
    """``label = value`` in a record literal or copy-update."""

    label: str
    value: Expr
    span: Span = _span()


@frozen_record
class Record(_Base):
    """``{ l1 = e1; ... }``, fields in source order (duplicates kept)."""

    fields: tuple[Field, ...]
    span: Span = _span()


@frozen_record
class FieldGet(_Base):
    record: Expr
    label: str
    span: Span = _span()


@frozen_record
class RecordExtend(_Base):
    """``{ base with l1 = e1; ... }``."""

    base: Expr
    fields: tuple[Field, ...]
    span: Span = _span()


@frozen_record
class Variant(_Base):
    """``` `Tag ``` or ``` `Tag(e1, ...) ``` (``` `Tag() ``` has no args)."""

    tag: str
    args: tuple[Expr, ...]
    span: Span = _span()


@frozen_record
class Array(_Base):
    elements: tuple[Expr, ...]
    span: Span = _span()


@frozen_record
class ArrayGet(_Base):
    array: Expr
    index: Expr
    span: Span = _span()


@frozen_record
class ArraySet(_Base):
    """``array[index] <- value``."""

    array: Expr
    index: Expr
    value: Expr
    span: Span = _span()


@frozen_record
class Ref(_Base):
    value: Expr
    span: Span = _span()


@frozen_record
class Deref(_Base):
    ref: Expr
    span: Span = _span()


@frozen_record
class SetRef(_Base):
    """``ref := value``."""

    ref: Expr
    value: Expr
    span: Span = _span()


@frozen_record
class Sequence(_Base):
    """``first; second`` (right nested: ``a; b; c`` is ``Sequence(a, Sequence(b, c))``)."""

    first: Expr
    second: Expr
    span: Span = _span()


@frozen_record
class Annot(_Base):
    """``expr`` annotated with ``type`` (from ``let x : T = expr``)."""

    expr: Expr
    type: TypeExpr
    span: Span = _span()


Expr = (
    Unit | Int | Float | Bool | String | Var | Prim1 | Prim2 | Lambda | App | If | While
    | LetIn | LetRec | Match | Record | FieldGet | RecordExtend | Variant | Array | ArrayGet
    | ArraySet | Ref | Deref | SetRef | Sequence | Annot
)

# --------------------------------------------------------------------------- statements


@frozen_record
class LetStmt(_Base):
    """Top-level (or module-level) ``let name = rhs``."""

    name: str
    rhs: Expr
    span: Span = _span()
    name_span: Span | None = attrs.field(default=None, eq=False, repr=False, kw_only=True)


@frozen_record
class LetRecStmt(_Base):
    """``let rec b1 and b2 ...`` without ``in``."""

    bindings: tuple[RecBinding, ...]
    span: Span = _span()


@frozen_record
class TypeStmt(_Base):
    """``type name = type`` (top level only)."""

    name: str
    type: TypeExpr
    span: Span = _span()
    name_span: Span | None = attrs.field(default=None, eq=False, repr=False, kw_only=True)


@frozen_record
class ModuleStmt(_Base):
    """``module Name = struct body end``."""

    name: str
    body: tuple[Stmt, ...]
    span: Span = _span()
    name_span: Span | None = attrs.field(default=None, eq=False, repr=False, kw_only=True)


@frozen_record
class OpenStmt(_Base):
    name: str
    span: Span = _span()
    name_span: Span | None = attrs.field(default=None, eq=False, repr=False, kw_only=True)


@frozen_record
class ExprStmt(_Base):
    expr: Expr
    span: Span = _span()


Stmt = LetStmt | LetRecStmt | TypeStmt | ModuleStmt | OpenStmt | ExprStmt


@frozen_record
class Program(_Base):
    """A whole script: its statements in order."""

    statements: tuple[Stmt, ...]
    span: Span = _span()


Node = (
    Expr | Pattern | TypeExpr | Stmt | Program | MatchArm | Field | PField | TField | TCase
    | RecBinding
)

NODE_CLASSES: tuple[type, ...] = (
    TName, TArrow, TConstr, TField, TRecord, TCase, TVariant,
    PUnit, PWildcard, PVar, PInt, PFloat, PBool, PString, PVariant, PField, PRecord,
    Unit, Int, Float, Bool, String, Var, Prim1, Prim2, Lambda, App, If, While, LetIn,
    RecBinding, LetRec, MatchArm, Match, Field, Record, FieldGet, RecordExtend, Variant, Array,
    ArrayGet, ArraySet, Ref, Deref, SetRef, Sequence, Annot,
    LetStmt, LetRecStmt, TypeStmt, ModuleStmt, OpenStmt, ExprStmt, Program,
)
_NODE_SET = frozenset(NODE_CLASSES)
#: Per node class, the fields that take part in equality: every field but the positions.
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {
    cls: tuple(f.name for f in attrs.fields(cls) if f.eq) for cls in NODE_CLASSES
}


def children(node: Node) -> Iterator[Node]:
    """The direct sub-nodes of ``node``, in source order."""
    for name in _CHILD_FIELDS[type(node)]:
        value = getattr(node, name)
        if type(value) in _NODE_SET:
            yield value
        elif isinstance(value, tuple):
            for item in value:
                if type(item) in _NODE_SET:
                    yield item


def walk(node: Node) -> Iterator[Node]:
    """``node`` and all its descendants, pre-order, without recursion."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(list(children(current))))
