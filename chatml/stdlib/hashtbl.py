"""The ``Hashtbl`` module (stdlib spec 4.4): string-keyed tables as a ref to an entry array.

A table is ``{ key : string; value : 'a } array ref``: entries keep insertion
order, lookups scan linearly, and ``set``/``remove`` give the cell a *new*
array (an entry array a script read with ``!t`` earlier never changes).
Entries that are not records with a string ``key`` and a ``value`` (possible
only when a script writes into the cell itself) are skipped by lookups and
kept by ``remove``. The cell update is journalled for transactional runs.
"""

from __future__ import annotations

from chatml import calls
from chatml.calls import implements
from chatml.stdlib.checks import REF_COST, charge_array, charge_scan, shape
from chatml.values import Ref, Value, Variant

NONE = Variant("None")


def _entries(qualified: str, table: Value, key: Value) -> list[Value]:
    """The table's entry array, after the spec's checks (ref, array, string key)."""
    if type(table) is not Ref:
        raise shape(qualified, "a ref")
    entries = table.value
    if type(entries) is not list:
        raise shape(qualified, "an array")
    if type(key) is not str:
        raise shape(qualified, "a string")
    charge_scan(len(entries))
    return entries


def _position(entries: list[Value], key: str) -> int:
    """Index of the first well-formed entry with ``key``, or -1."""
    for position, entry in enumerate(entries):
        if type(entry) is dict and entry.get("key") == key and "value" in entry:
            return position
    return -1


def _holds(entry: Value, key: str) -> bool:
    """``entry`` is a well-formed entry record for ``key`` (only a str equals a str)."""
    return type(entry) is dict and entry.get("key") == key and "value" in entry


@implements("Hashtbl.create")
def create() -> Ref:
    calls.charge_memory(REF_COST)
    charge_array(0)
    return Ref([])


@implements("Hashtbl.set")
def set_(table: Value, key: Value, value: Value) -> None:
    entries = _entries("Hashtbl.set", table, key)
    position = _position(entries, key)
    charge_array(len(entries) + 1)
    updated = entries.copy()
    if position < 0:
        updated.append({"key": key, "value": value})
    else:
        updated[position] = {"key": key, "value": value}
    calls.journal_ref(table)
    table.value = updated


@implements("Hashtbl.get")
def get(table: Value, key: Value) -> Variant:
    entries = _entries("Hashtbl.get", table, key)
    position = _position(entries, key)
    return NONE if position < 0 else Variant("Some", (entries[position]["value"],))


@implements("Hashtbl.mem")
def mem(table: Value, key: Value) -> bool:
    return _position(_entries("Hashtbl.mem", table, key), key) >= 0


@implements("Hashtbl.remove")
def remove(table: Value, key: Value) -> None:
    entries = _entries("Hashtbl.remove", table, key)
    charge_array(len(entries))
    kept = [entry for entry in entries if not _holds(entry, key)]
    calls.journal_ref(table)
    table.value = kept
