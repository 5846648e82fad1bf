"""The ``Hashtbl`` module (stdlib spec 4.4): string-keyed tables as a ref to an entry array.

A table is ``{ key : string; value : 'a } array ref``: entries keep insertion
order, a lookup finds the *first* well-formed entry with the key, and
``set``/``remove`` give the cell a *new* array (an entry array a script read
with ``!t`` earlier never changes). Entries that are not records with a
string ``key`` and a ``value`` (possible only when a host or hand-made
bytecode writes into the array) are skipped by lookups and kept by
``remove``. The cell update is journalled for transactional runs.

A table made by ``Hashtbl.create`` starts in the *dict form* (see
:class:`chatml.values.TableRef`): while only ``Hashtbl.*`` touches it, its
entries are a dict key -> value in insertion order, which is the entry
array's meaning exactly (one well-formed record per key, in order), so
``get`` is one dict lookup (and the ``Some`` it answers) and ``set`` one dict
store -- no record, no scan, no copy. (The VM's inline form of a ``get``
whose result is matched at once needs no ``Some`` at all, see
:mod:`chatml.vm.intrinsics`.) Charges are the entry array's (scan
steps of its length, a new array of ``length + 1`` slots per ``set``). The
first read of the cell (``!t``, a host, the undo journal of a transactional
run) spills the dict into the entry array once, and from then on the table
works as below.

Lookups are answered from an index (key -> first position) cached on the ref
(:attr:`chatml.values.Ref.lookup_cache`) instead of a scan in Python. The
index describes one entry array and is trusted only while the cell still
holds that very array *and* the array's elements are still the ones it was
built from -- checked at C speed with ``entries == snapshot`` (identical
elements compare equal without being looked at). Scripts may mutate the
array (``(!t)[i] <- e``, ``Array.set``...), so the check runs on every
lookup; a changed array simply gets a new index. Why the check is exact:

* an index is built only for arrays whose elements are all exact ``dict``
  records, so a snapshot element can equal only a ``dict`` (or a ``dict``
  subclass -- a host-made :class:`~chatml.values.Module`);
* an exact ``dict`` equal to the element it replaced has the same ``key``
  and the same fields, so the first-match answer for every key is unchanged;
* a ``Module`` that compares equal to the record it replaced would be
  wrongly trusted only at that record's own position, and every hit is
  re-checked against the live element (:func:`_holds`) before it is used.

The step and memory charges are those of the linear scan (``charge_scan``),
whatever the lookup costs now, so budgets behave exactly as before.

``set`` gives the cell a new array -- unless no one but the table can see the
old one: when the only references to the entry array are the cell's and the
index's (CPython's reference count says so; a script holding ``!t``, a host,
or the undo journal of a transactional run all hold one more), nobody can
tell a changed array from a changed copy, so the array is changed in place
and an O(n) copy is saved. It is charged as the new array all the same.
"""

from __future__ import annotations

import sys

from chatml import calls
from chatml.limits import METER, WORD
from chatml.registration import implements
from chatml.stdlib.checks import (
    ARRAY_COST,
    REF_COST,
    SCAN_CHARS_PER_STEP,
    SLOT_COST,
    charge_array,
    charge_scan,
    shape,
)
from chatml.values import ABSENT, REF_TYPES, Ref, TableRef, Value, Variant

NONE = Variant("None")


class _Index:
    """Key -> position of its first well-formed entry, for the entry array ``entries``."""

    __slots__ = ("entries", "snapshot", "positions")

    def __init__(self, entries: list[Value], positions: dict[str, int]) -> None:
        self.entries = entries
        self.snapshot = entries.copy()
        self.positions = positions


def _entries(qualified: str, table: Value, key: Value) -> list[Value]:
    """The table's entry array, after the spec's checks (ref, array, string key)."""
    if type(table) not in REF_TYPES:
        raise shape(qualified, "a ref")
    entries = _array_of(table)
    if type(entries) is not list:
        raise shape(qualified, "an array")
    if type(key) is not str:
        raise shape(qualified, "a string")
    charge_scan(len(entries))
    return entries


def _array_of(table: Ref) -> Value:
    """The cell's content, read without exposing a :class:`TableRef`'s array."""
    return table.spill() if type(table) is TableRef else table.value


def _store(table: Ref, entries: list[Value]) -> None:
    """Give the cell a new entry array that only the table has seen."""
    if type(table) is TableRef:
        table.entries = entries
        table.exposed = False
    else:
        table.value = entries


def _holds(entry: Value, key: str) -> bool:
    """``entry`` is a well-formed entry record for ``key`` (only a str equals a str)."""
    return type(entry) is dict and entry.get("key") == key and "value" in entry


def scan_position(entries: list[Value], key: str) -> int:
    """Index of the first well-formed entry with ``key``, or -1 (the linear scan)."""
    for position, entry in enumerate(entries):
        if _holds(entry, key):
            return position
    return -1


def _build_index(table: Ref, entries: list[Value]) -> _Index | None:
    """Index ``entries`` for ``table`` (``None`` when an element is not an exact record)."""
    positions: dict[str, int] = {}
    for position, entry in enumerate(entries):
        if type(entry) is not dict:
            table.lookup_cache = None
            return None
        key = entry.get("key")
        if type(key) is str and "value" in entry and key not in positions:
            positions[key] = position
    cache = table.lookup_cache = _Index(entries, positions)
    return cache


_getrefcount = sys.getrefcount

_ARRAY_WORDS = ARRAY_COST + SLOT_COST + WORD - 1
_SLOT_WORDS = SLOT_COST
"""``charge_array(length + 1)`` in words is ``(_ARRAY_WORDS + _SLOT_WORDS * length) // WORD``."""


def _unshared_count() -> int:
    """``sys.getrefcount`` of an entry array held only by its cell, its index and a
    local variable, measured on this interpreter in the very shape ``set`` asks in.

    Interpreters count differently (3.14 may borrow references on the operand
    stack), so the number is measured, not assumed; where reference counts
    are not exact enough to rely on (a free-threaded build) it is -1, which
    no count equals, and ``set`` always copies.
    """
    gil_enabled = getattr(sys, "_is_gil_enabled", None)
    if gil_enabled is not None and not gil_enabled():
        return -1
    cell = TableRef([])
    entries = cell.entries
    cell.lookup_cache = _Index(entries, {})
    return _getrefcount(entries)


_UNSHARED = _unshared_count()


def _find(qualified: str, table: Value, key: Value) -> tuple[list[Value], int, _Index | None]:
    """(entry array, position of the first well-formed entry with ``key`` or -1, valid index).

    Checks the arguments and charges the scan's steps exactly like
    :func:`_entries` (inlined: this is every lookup's path).
    """
    kind = type(table)
    if kind is TableRef:
        entries = table.spill()
        exposed = table.exposed
    elif kind is Ref:
        entries = table.value
        exposed = True
    else:
        entries = None
    if type(entries) is not list or type(key) is not str:
        _entries(qualified, table, key)  # raises the spec's shape error
    if len(entries) >= SCAN_CHARS_PER_STEP:  # charge_scan, with Meter.take's common case inlined
        steps = len(entries) // SCAN_CHARS_PER_STEP
        reserve = METER.reserve - steps
        if reserve >= 0:
            METER.reserve = reserve
        else:
            METER.take(steps)
    try:
        cache = table.lookup_cache
    except AttributeError:  # a ref never used as a table before
        cache = None
    valid = False
    if cache is not None and cache.entries is entries:
        if not exposed:  # only Hashtbl.* has seen this array: the index is right
            valid = True
        else:
            try:
                valid = entries == cache.snapshot
            except Exception:  # a pathological element comparison (e.g. too deep): rebuild
                valid = False
    if not valid:
        cache = _build_index(table, entries)
        if cache is None:
            return entries, scan_position(entries, key), None
    if exposed and kind is TableRef and _getrefcount(entries) == _UNSHARED:
        # validated, and no one but the cell and its index holds the array any more:
        # nothing else can write into it until the cell is read again
        table.exposed = False
    position = cache.positions.get(key, -1)
    if position >= 0:
        entry = entries[position]
        if type(entry) is not dict or entry.get("key") != key or "value" not in entry:
            # replaced by an equal non-record (see the module docstring): scan instead
            table.lookup_cache = None
            return entries, scan_position(entries, key), None
    return entries, position, cache


@implements("Hashtbl.create")
def create() -> Ref:
    calls.charge_memory(REF_COST)
    charge_array(0)
    table = TableRef(None)
    table.pairs = {}
    return table


def _private(table: Value, key: Value) -> _Index | None:
    """The index of a :class:`TableRef` whose array only ``Hashtbl.*`` has seen, or None.

    Such an index needs no validation (see :class:`TableRef`) and its hits no
    re-check: only ``Hashtbl.set`` wrote the array's entries. The caller
    charges the scan's steps (:func:`_charge_scan`), as :func:`_find` does.
    """
    if type(table) is not TableRef or table.exposed or type(key) is not str:
        return None
    cache: _Index | None = table.lookup_cache
    if cache is None or cache.entries is not table.entries:
        return None
    return cache


def _charge_scan(length: int) -> None:
    """``charge_scan``, with ``Meter.take``'s common case inlined."""
    if length >= SCAN_CHARS_PER_STEP:
        steps = length // SCAN_CHARS_PER_STEP
        reserve = METER.reserve - steps
        if reserve >= 0:
            METER.reserve = reserve
        else:
            METER.take(steps)


def _charge_scan_steps(length: int) -> None:
    """The steps of scanning ``length`` entries (``charge_scan``, ``Meter.take``'s common
    case inlined); callers skip the call below :data:`SCAN_CHARS_PER_STEP`."""
    meter = METER
    reserve = meter.reserve - length // SCAN_CHARS_PER_STEP
    if reserve >= 0:
        meter.reserve = reserve
    else:
        meter.take(length // SCAN_CHARS_PER_STEP)


def _charge_dict_set(length: int) -> None:
    """What ``set`` charges on a table of ``length`` entries, in either form: the scan's
    steps, then the new array of ``length + 1`` slots (``charge_array`` inlined)."""
    if length >= SCAN_CHARS_PER_STEP:
        _charge_scan_steps(length)
    meter = METER
    memory = meter.memory = meter.memory - (_ARRAY_WORDS + _SLOT_WORDS * length) // WORD
    if memory < 0:
        meter.out_of_memory()


@implements("Hashtbl.set", inline="hashtbl_set")
def set_(table: Value, key: Value, value: Value) -> None:
    if type(table) is TableRef:
        pairs = table.pairs
        if pairs is not None:  # the dict form (see TableRef): every update of a new table
            if type(key) is str and METER.journal is None:
                _charge_dict_set(len(pairs))
                pairs[key] = value
                return
            table.spill()  # (a journal records the array; a bad key fails as usual)
    # the private path (see _private): every update of a table that left the dict form
    if type(table) is TableRef and not table.exposed and type(key) is str:
        cache = table.lookup_cache
        entries = table.entries
        meter = METER
        if cache is not None and cache.entries is entries and meter.journal is None:
            # only Hashtbl.* has seen the array, so no one else holds it: change it in place
            length = len(entries)
            _charge_dict_set(length)
            entry = {"key": key, "value": value}
            position = cache.positions.get(key, -1)
            if position < 0:
                cache.positions[key] = length
                entries.append(entry)
                cache.snapshot.append(entry)
            else:
                entries[position] = entry
                cache.snapshot[position] = entry
            return
    _set(table, key, value)


def _set(table: Value, key: Value, value: Value) -> None:
    entries, position, cache = _find("Hashtbl.set", table, key)
    calls.charge_memory(ARRAY_COST + SLOT_COST * (len(entries) + 1))  # charge_array
    entry = {"key": key, "value": value}
    calls.journal_ref(table)
    if cache is not None and _getrefcount(entries) == _UNSHARED:
        # no one else sees the array: changing it is changing a copy (module docstring)
        if position < 0:
            cache.positions[key] = len(entries)
            entries.append(entry)
            cache.snapshot.append(entry)
        else:
            entries[position] = entry
            cache.snapshot[position] = entry
        return
    updated = entries.copy()
    if position < 0:
        updated.append(entry)
    else:
        updated[position] = entry
    _store(table, updated)
    if cache is not None:  # the index moves on to the new array
        if position < 0:
            cache.positions[key] = len(entries)
        cache.entries = updated
        cache.snapshot = updated.copy()


@implements("Hashtbl.get", inline="hashtbl_get")
def get(table: Value, key: Value) -> Variant:
    if type(table) is TableRef:
        pairs = table.pairs
        if pairs is not None and type(key) is str:  # the dict form (see TableRef)
            length = len(pairs)
            if length >= SCAN_CHARS_PER_STEP:
                _charge_scan_steps(length)
            found = pairs.get(key, ABSENT)
            return NONE if found is ABSENT else Variant("Some", (found,))
    if type(table) is TableRef and not table.exposed and type(key) is str:
        cache = table.lookup_cache  # (_private, inlined: this is every lookup's path)
        entries = table.entries
        if cache is not None and cache.entries is entries:
            length = len(entries)
            if length >= SCAN_CHARS_PER_STEP:
                _charge_scan_steps(length)
            position = cache.positions.get(key)
            return NONE if position is None else Variant("Some", (entries[position]["value"],))
    entries, found, _ = _find("Hashtbl.get", table, key)
    return NONE if found < 0 else Variant("Some", (entries[found]["value"],))


@implements("Hashtbl.mem", inline="hashtbl_mem")
def mem(table: Value, key: Value) -> bool:
    if type(table) is TableRef:
        pairs = table.pairs
        if pairs is not None and type(key) is str:  # the dict form (see TableRef)
            _charge_scan(len(pairs))
            return key in pairs
    cache = _private(table, key)
    if cache is not None:
        _charge_scan(len(cache.entries))
        return key in cache.positions
    return _find("Hashtbl.mem", table, key)[1] >= 0


@implements("Hashtbl.remove")
def remove(table: Value, key: Value) -> None:
    if type(table) is TableRef:
        pairs = table.pairs
        if pairs is not None:  # the dict form (see TableRef)
            if type(key) is str and METER.journal is None:
                _charge_scan(len(pairs))
                charge_array(len(pairs))
                pairs.pop(key, None)
                return
            table.spill()
    entries = _entries("Hashtbl.remove", table, key)
    charge_array(len(entries))
    kept = [entry for entry in entries if not _holds(entry, key)]
    calls.journal_ref(table)
    _store(table, kept)
    table.lookup_cache = None
