"""ChatML runtime values: how each kind of value is represented in Python.

This module is the contract between the VM, the standard library, snapshots
and hosts. Representations were chosen so that compiled ChatML runs close to
plain Python speed:

==========  ==================================================================
ChatML      Python
==========  ==================================================================
int         ``int`` (never ``bool``; always within the 63-bit range, see
            :data:`MIN_INT`/:data:`MAX_INT` — DECISIONS 2: leaving it is a
            runtime error, never a silent wrap)
float       ``float``
bool        ``bool``
string      ``str`` (Unicode text; DECISIONS 1: lengths and indices count
            code points)
unit        ``None`` (:data:`UNIT`)
array       ``list`` (mutable, shared by reference, compared by identity)
record      ``dict`` (exact type ``dict``; label -> value; immutable by
            convention: operations build new dicts)
variant     :class:`Variant` (tag without backtick, payload tuple)
ref         :class:`Ref`
module      :class:`Module` (a ``dict`` subclass of export name -> value, so
            field access is the same operation as on records)
function    a Python callable: either a compiled ChatML closure or a builtin.
            Builtins are marked with :func:`builtin` (attribute
            ``chatml_builtin``); anything else callable is a closure.
            Always call function values through the VM's ``apply`` (proper
            tail calls, arity checks and limits live there), never directly.
task        one of :class:`Pure`, :class:`Bind`, :class:`Map`, :class:`Fail`,
            :class:`Catch`, :class:`Perform`, :class:`Spawn`
==========  ==================================================================

Builtins signal failure by raising :class:`ChatMLFailure` with the exact
message of the standard-library spec; the VM turns it into a positioned
runtime diagnostic at the call site.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

MIN_INT = -(2**62)
MAX_INT = 2**62 - 1

UNIT = None

Value = Any
"""Any ChatML runtime value (see the table above)."""


class ChatMLFailure(Exception):
    """A runtime error raised by a builtin (or ``fail``); ``message`` is shown verbatim."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Variant:
    """A polymorphic-variant value: ``tag`` (no backtick) and its payload values.

    Generated code may build one as ``object.__new__(Variant)`` followed by setting
    both slots (cheaper than a call of ``__init__``), so ``__init__`` must do nothing
    else.
    """

    __slots__ = ("tag", "args")

    def __init__(self, tag: str, args: tuple[Value, ...] = ()) -> None:
        self.tag = tag
        self.args = args

    def __repr__(self) -> str:
        return f"Variant({self.tag!r}, {self.args!r})"


class Ref:
    """A mutable cell (``ref e``).

    ``lookup_cache`` is private to :mod:`chatml.stdlib.hashtbl` (an index of the
    entry array the cell holds, when the cell is a table); it is left unset on
    every other ref and never takes part in the value's meaning.
    """

    __slots__ = ("value", "lookup_cache")

    lookup_cache: Any  # hashtbl's index or None (a slot: no class attribute, no runtime cost)

    def __init__(self, value: Value) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"Ref({self.value!r})"


class TableRef(Ref):
    """The cell of a ``Hashtbl.create`` table: a :class:`Ref` that knows when its entry
    array was seen by anything but ``Hashtbl.*``.

    A new table keeps its entries in ``pairs`` (key -> value, in insertion order)
    and ``entries`` is ``None``: while
    only ``Hashtbl.*`` touches it, the entry array it stands for -- one well-formed
    ``{key; value}`` record per key, in that order -- exists only as that dict.
    The first read of ``value`` (a script's ``!t``, a host, the undo journal)
    *spills* it: builds that array once and keeps it in ``entries`` from then on
    (records are immutable, so nobody can tell it from the array ``Hashtbl.set``
    would have built). Writing ``value`` (``t := a``) also leaves the dict behind.

    Reading or writing ``value`` sets ``exposed``; :mod:`chatml.stdlib.hashtbl`
    works on ``entries`` directly and clears ``exposed`` when no one else can
    hold the array. While it is clear, nothing but ``Hashtbl.*`` can have written
    into the array, so its cached index is valid without looking at the array.
    Everywhere else a table's cell is an ordinary ref.
    """

    __slots__ = ("entries", "exposed", "pairs")

    def __init__(self, value: Value) -> None:
        self.entries = value
        self.exposed = False
        self.lookup_cache = None
        self.pairs: dict[str, Value] | None = None

    def spill(self) -> Value:
        """Leave the dict form: the entry array it stands for becomes ``entries``."""
        pairs = self.pairs
        if pairs is not None:
            self.entries = [{"key": key, "value": value} for key, value in pairs.items()]
            self.pairs = None
            self.lookup_cache = None
        return self.entries

    @property
    def value(self) -> Value:
        self.exposed = True
        return self.entries if self.pairs is None else self.spill()

    @value.setter
    def value(self, value: Value) -> None:
        self.exposed = True
        self.pairs = None
        self.entries = value


class _Absent:
    """The type of :data:`ABSENT`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT = _Absent()
"""What a lookup in a table's ``pairs`` answers for a missing key (never a ChatML value):
``pairs.get(key, ABSENT)`` tells a missing key from any value in one lookup."""


REF_TYPES = (Ref, TableRef)
"""Every type of a ref cell (``type(v) in REF_TYPES`` where ``type(v) is Ref`` was)."""


class Module(dict):
    """A module value: export name -> value. ``name`` is the module's name."""

    __slots__ = ("name",)

    def __init__(self, name: str, exports: dict[str, Value] | None = None) -> None:
        super().__init__(exports or {})
        self.name = name

    def __repr__(self) -> str:
        return f"Module({self.name!r}, {sorted(self)!r})"

    # modules compare by identity (spec 5.6), unlike the dicts they extend
    __eq__ = object.__eq__
    __hash__ = object.__hash__  # type: ignore[assignment]  # dict sets it to None; by identity here


# --------------------------------------------------------------------------- tasks


class Task:
    """Base class of task nodes: inert descriptions a host interprets (spec 5.12)."""

    __slots__ = ()


class Pure(Task):
    __slots__ = ("value",)

    def __init__(self, value: Value) -> None:
        self.value = value


class Bind(Task):
    __slots__ = ("task", "continuation")

    def __init__(self, task: Task, continuation: Value) -> None:
        self.task = task
        self.continuation = continuation


class Map(Task):
    __slots__ = ("task", "function")

    def __init__(self, task: Task, function: Value) -> None:
        self.task = task
        self.function = function


class Fail(Task):
    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        self.message = message


class Catch(Task):
    __slots__ = ("task", "handler")

    def __init__(self, task: Task, handler: Value) -> None:
        self.task = task
        self.handler = handler


class Perform(Task):
    """Ask the host to perform ``operation`` (e.g. ``"Log.info"``) with ``args``."""

    __slots__ = ("operation", "args")

    def __init__(self, operation: str, args: tuple[Value, ...]) -> None:
        self.operation = operation
        self.args = args


class Spawn(Task):
    """Ask the host to start ``operation`` in the background."""

    __slots__ = ("operation", "args")

    def __init__(self, operation: str, args: tuple[Value, ...]) -> None:
        self.operation = operation
        self.args = args


# --------------------------------------------------------------------------- functions

F = TypeVar("F", bound=Callable[..., Any])


def builtin(name: str) -> Callable[[F], F]:
    """Mark a Python function as the ChatML builtin ``name`` (qualified, e.g. ``String.length``)."""

    def mark(function: F) -> F:
        function.chatml_builtin = name  # type: ignore[attr-defined]  # a mark on the function object
        return function

    return mark


def is_builtin(value: Value) -> bool:
    return callable(value) and hasattr(value, "chatml_builtin")


def is_function(value: Value) -> bool:
    """True for closures and builtins (not for modules, refs or other data)."""
    return callable(value) and not isinstance(value, type)


def kind_name(value: Value) -> str:
    """A short name of the value's kind, for messages (``int``, ``record``, ``closure``...)."""
    if value is None:
        return "unit"
    kind = type(value)
    if kind is bool:
        return "bool"
    if kind is int:
        return "int"
    if kind is float:
        return "float"
    if kind is str:
        return "string"
    if kind is list:
        return "array"
    if kind is dict:
        return "record"
    if kind is Module:
        return "module"
    if kind is Variant:
        return "variant"
    if kind is Ref or kind is TableRef:
        return "ref"
    if isinstance(value, Task):
        return "task"
    if is_builtin(value):
        return "builtin"
    if callable(value):
        return "closure"
    return type(value).__name__
