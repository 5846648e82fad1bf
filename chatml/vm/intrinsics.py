"""Inline forms of a few hot standard-library builtins (``to_string``, the lengths).

A builtin call costs a Python call; for these builtins the common case is a
couple of operations that can run in the caller's frame. An *intrinsic* is
the Python source of that common case plus, for every other argument, the
ordinary call of the builtin -- so the behaviour (results, errors, budgets)
is the builtin's own:

* ``to_string(x)``: an int becomes ``str(x)``, charged as ``charge_string``
  charges it (``(49 + len + 7) // 8`` words); a string is returned as it is
  (no new string, no charge); anything else calls ``to_string``;
* ``String.length(s)`` / ``string_length(s)``: ``len(s)`` for a string;
* ``length(a)`` / ``Array.length(a)``: ``len(a)`` for an array;
* ``Hashtbl.get`` / ``Hashtbl.set`` / ``Hashtbl.mem`` on a table in its dict form
  (:class:`chatml.values.TableRef` with ``pairs``, a string key, and for ``set``
  no undo journal): the dict lookup or store, with the builtin's charges -- the
  scan's steps (one per :data:`~chatml.limits.SCAN_CHARS_PER_STEP` entries,
  ``Meter.take``'s common case inlined) and, for ``set``, the new entry array's
  memory -- in the builtin's order; any other table, key or run calls the builtin.

When the translator knows the argument's type it needs no test at all
(:meth:`chatml.vm.translate._Body.inline`): ``to_string`` of an int is
``str(x)`` charged with the frame's batch of allocations
(:mod:`chatml.vm.charges`), of a string the string itself, and the length of a
string ``len(s)``.

The loader uses an intrinsic only for a builtin slot whose bound value is
marked inlinable with the intrinsic's kind (the standard library marks its
implementations: ``@implements("to_string", inline="to_string")``, see
:mod:`chatml.registration`; :func:`intrinsic_slots`): the values handed to the
loader say what may be inlined, and this module imports nothing of the
standard library. A host that brings its own ``to_string`` gets ordinary calls. Generated code refers to ``_int``,
``_str``, ``_list``, ``_TR``, ``_NONE``, ``_V``, ``_new`` and ``_M`` (see
:func:`chatml.vm.runtime.base_namespace`) and uses ``_hp``, ``_hn``, ``_hr``,
``_hs`` and ``_m`` as scratch variables (and ``_ABSENT``, the dict form's answer for
a missing key).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import attrs

from chatml.limits import COST, SCAN_CHARS_PER_STEP, WORD
from chatml.values import Value

Lines = list[tuple[int, str]]
"""Generated lines as (extra indentation, text)."""


@attrs.frozen
class Intrinsic:
    arity: int
    inline: Callable[[str, str, list[str]], Lines]
    """(result variable, the builtin's atom, argument atoms) -> the lines computing it."""
    kind: str
    """What the builtin does (``to_string``, ``string_length``, ``array_length``): the
    mark an inlinable implementation carries (``chatml_inline``); the translator has
    simpler forms when it knows the argument's type."""


def _to_string(result: str, builtin: str, args: list[str]) -> Lines:
    (value,) = args
    words = f"({COST['string'] + WORD - 1} + len({result})) >> 3"  # = charge_string's charge
    return [
        (0, f"if type({value}) is _int:"),
        (1, f"{result} = _str({value})"),
        (1, f"_M.memory = _m = _M.memory - ({words})"),
        (1, "if _m < 0: _M.out_of_memory()"),
        (0, f"elif type({value}) is _str:"),
        (1, f"{result} = {value}"),
        (0, "else:"),
        (1, f"{result} = {builtin}({value})"),
    ]


def _length_of(kind: str) -> Callable[[str, str, list[str]], Lines]:
    def inline(result: str, builtin: str, args: list[str]) -> Lines:
        (value,) = args
        return [(0, f"{result} = len({value}) if type({value}) is {kind} else {builtin}({value})")]

    return inline


def _scan_steps(count: str) -> Lines:
    """Charge the steps of scanning ``count`` entries (``charge_scan``: ``Meter.take``'s
    common case inline, ``Meter.take`` itself when the reserve runs out)."""
    steps = f"{count} // {SCAN_CHARS_PER_STEP}"
    return [
        (0, f"if {count} >= {SCAN_CHARS_PER_STEP}:"),
        (1, f"if (_hr := _M.reserve - {steps}) >= 0: _M.reserve = _hr"),
        (1, f"else: _M.take({steps})"),
    ]


_DICT_FORM = "type({table}) is _TR and (_hp := {table}.pairs) is not None and type({key}) is _str"
"""A table in its dict form and a string key (``_hp``: the table's dict)."""


@attrs.frozen
class TableAccess:
    """What the translator knows before an inline ``Hashtbl`` operation (see
    :class:`chatml.vm.table_facts.TableFacts`), and what the operation should record.

    With nothing known the operation tests the table's type, its dict and the key's
    type (:data:`_DICT_FORM`) and measures the dict. After an earlier inline
    operation on the same table, with nothing in between that could take it out of
    its dict form, ``pairs`` names the variable that operation left the table's dict
    in (``None`` when it took the builtin's path), so the test is that variable;
    ``key_is_str`` drops the key's type test and ``length`` names a variable still
    holding the dict's length. ``remember``/``remember_length``: variables to leave
    the dict (``None`` on the builtin's path) and its length in, for later operations.
    """

    pairs: str | None = None
    key_is_str: bool = False
    length: str | None = None
    remember: str | None = None
    remember_length: str | None = None

    def test(self, table: str, key: str) -> str:
        """The condition of the inline path; it leaves the table's dict in ``_hp``."""
        if self.pairs is None:
            return _DICT_FORM.format(table=table, key=key)
        known = f"(_hp := {self.pairs}) is not None"
        return known if self.key_is_str else f"{known} and type({key}) is _str"

    def head(self) -> Lines:
        """The inline path's first lines: ``_hn`` (the dict's length), what is remembered,
        the scan's steps."""
        lines: Lines = [(0, f"_hn = {self.length or 'len(_hp)'}")]
        if self.remember is not None and self.pairs is None:  # (else it holds _hp already)
            lines.append((0, f"{self.remember} = _hp"))
        if self.remember_length is not None:
            lines.append((0, f"{self.remember_length} = _hn"))
        return lines + _scan_steps("_hn")

    def slow(self, call: str) -> Lines:
        """The builtin's path: ``call``, and nothing known afterwards."""
        lines: Lines = [(0, call)]
        if self.remember is not None:
            lines.append((0, f"{self.remember} = None"))
        return lines


NO_ACCESS = TableAccess()
"""Nothing known, nothing remembered."""


def _hashtbl_get(result: str, builtin: str, args: list[str]) -> Lines:
    return hashtbl_lines("hashtbl_get", result, builtin, args, NO_ACCESS)


def _hashtbl_mem(result: str, builtin: str, args: list[str]) -> Lines:
    return hashtbl_lines("hashtbl_mem", result, builtin, args, NO_ACCESS)


def _hashtbl_set(result: str, builtin: str, args: list[str]) -> Lines:
    return hashtbl_lines("hashtbl_set", result, builtin, args, NO_ACCESS)


_NEW_ARRAY = COST["array"] + COST["slot"] + WORD - 1
"""``set``'s new array of ``n + 1`` slots costs ``(_NEW_ARRAY + slot * n) // WORD`` words."""


def _set_words() -> str:
    slot = COST["slot"]
    if slot % WORD == 0:  # the same number, without the division
        per_slot = "_hn" if slot == WORD else f"{slot // WORD} * _hn"
        return f"({_NEW_ARRAY // WORD} + {per_slot})"
    return f"({_NEW_ARRAY} + {slot} * _hn) // {WORD}"


def _inline_body(kind: str, result: str, builtin: str, args: list[str]) -> tuple[Lines, str]:
    """(the inline path after its head, the builtin's call) of a ``Hashtbl`` operation."""
    key = args[1]
    if kind == "hashtbl_get":
        return [
            (0, f"if (_hs := _hp.get({key}, _ABSENT)) is _ABSENT: {result} = _NONE"),
            (0, "else:"),  # Variant('Some', (value,)) without a Python __init__ call
            (1, f"{result} = _new(_V)"),
            (1, f"{result}.tag = 'Some'"),
            (1, f"{result}.args = (_hs,)"),
        ], f"{result} = {builtin}({', '.join(args)})"
    if kind == "hashtbl_get_option":  # the builtin answers `None or `Some(value)
        return [(0, f"{result} = _hp.get({key}, _ABSENT)")], (
            f"{result} = _hs.args[0] if (_hs := {builtin}({', '.join(args)})).tag == 'Some' "
            "else _ABSENT")
    if kind == "hashtbl_mem":
        return [(0, f"{result} = {key} in _hp")], f"{result} = {builtin}({', '.join(args)})"
    return [
        (0, f"_M.memory = _m = _M.memory - {_set_words()}"),
        (0, "if _m < 0: _M.out_of_memory()"),
        (0, f"_hp[{key}] = {args[2]}"),
        (0, f"{result} = None"),
    ], f"{result} = {builtin}({', '.join(args)})"


def hashtbl_lines(kind: str, result: str, builtin: str, args: list[str],
                  access: TableAccess) -> Lines:
    """The inline form of the ``Hashtbl`` operation ``kind`` (``hashtbl_get``, ``_mem``,
    ``_set``, or ``hashtbl_get_option``: a ``get`` whose result only a ``match`` reads,
    *unwrapped* -- ``result`` is the value stored under the key or ``_ABSENT``, the
    dict lookup itself on a table in its dict form (no ``Some`` is made), the
    builtin's answer taken apart otherwise; the match then tests ``is _ABSENT``
    instead of the variant's tag, see :meth:`chatml.vm.translate._Body.option_pattern`).
    Same checks and charges as the builtin, in its order."""
    table, key = args[0], args[1]
    test = access.test(table, key)
    if kind == "hashtbl_set":
        test += " and _M.journal is None"
    body, call = _inline_body(kind, result, builtin, args)
    return [
        (0, f"if {test}:"),
        *((1 + extra, line) for extra, line in access.head()),
        *((1 + extra, line) for extra, line in body),
        (0, "else:"),
        *((1 + extra, line) for extra, line in access.slow(call)),
    ]


HASHTBL_KINDS = frozenset({"hashtbl_get", "hashtbl_mem", "hashtbl_set"})
"""The intrinsics that work on a table's dict form (:func:`hashtbl_lines`)."""


INTRINSICS: dict[str, Intrinsic] = {
    "to_string": Intrinsic(1, _to_string, "to_string"),
    "string_length": Intrinsic(1, _length_of("_str"), "string_length"),
    "String.length": Intrinsic(1, _length_of("_str"), "string_length"),
    "length": Intrinsic(1, _length_of("_list"), "array_length"),
    "Array.length": Intrinsic(1, _length_of("_list"), "array_length"),
    "Hashtbl.get": Intrinsic(2, _hashtbl_get, "hashtbl_get"),
    "Hashtbl.set": Intrinsic(3, _hashtbl_set, "hashtbl_set"),
    "Hashtbl.mem": Intrinsic(2, _hashtbl_mem, "hashtbl_mem"),
}
"""Inlinable builtins by qualified name."""


def intrinsic_slots(builtin_slots: tuple[tuple[int, str], ...],
                    bound: Mapping[int, Value]) -> dict[int, Intrinsic]:
    """The global slots whose builtin has an intrinsic and whose bound value is marked
    inlinable as that intrinsic's kind (``bound``: slot -> the value the loader binds)."""
    result = {}
    for slot, name in builtin_slots:
        intrinsic = INTRINSICS.get(name)
        if intrinsic is not None and getattr(bound.get(slot), "chatml_inline",
                                             None) == intrinsic.kind:
            result[slot] = intrinsic
    return result
