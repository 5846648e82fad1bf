"""The ``Array`` module (stdlib spec 4.2): 22 functions over mutable, fixed-length arrays.

Index checks reject ``i < 0`` and ``i >= length``; ``sub`` checks
non-negative arguments, then the start, then the end, as ``String.slice``.
Higher-order functions call back into ChatML through
:func:`chatml.stdlib.checks.first_call` (stdlib spec 1.4: callbacks run left
to right in index order; the short-circuiting ones stop at the first decisive
element; ``init`` checks its length before calling anything). Every in-place
change of an existing array is journalled first (:mod:`chatml.calls`) so a
failed transactional run can be rolled back; new arrays are charged to the
memory budget before they are built.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import compress, islice

from chatml import calls
from chatml.registration import implements
from chatml.stdlib.checks import TAIL_CALL, bounce, charge_array, charge_scan, first_call, shape
from chatml.values import ChatMLFailure, Value, Variant

NONE = Variant("None")


def _array(qualified: str, value: Value) -> list[Value]:
    if type(value) is not list:
        raise shape(qualified, "an array")
    return value


def _index(qualified: str, value: Value) -> int:
    if type(value) is not int:
        raise shape(qualified, "an int")
    return value


@implements("Array.length", inline="array_length")
def length(array: Value) -> int:
    if type(array) is not list:
        raise shape("Array.length", "an array")
    return len(array)


@implements("Array.copy")
def copy(array: Value) -> list[Value]:
    _array("Array.copy", array)
    charge_array(len(array))
    return array.copy()


@implements("Array.get")
def get(array: Value, index: Value) -> Value:
    if type(array) is not list:
        raise shape("Array.get", "an array")
    if type(index) is not int:
        raise shape("Array.get", "an int")
    if index < 0 or index >= len(array):
        raise ChatMLFailure("Array.get: index out of bounds")
    return array[index]


@implements("Array.set")
def set_(array: Value, index: Value, value: Value) -> None:
    if type(array) is not list:
        raise shape("Array.set", "an array")
    if type(index) is not int:
        raise shape("Array.set", "an int")
    if index < 0 or index >= len(array):
        raise ChatMLFailure("Array.set: index out of bounds")
    calls.journal_item(array, index)
    array[index] = value


@implements("Array.make")
def make(count: Value, value: Value) -> list[Value]:
    _index("Array.make", count)
    if count < 0:
        raise ChatMLFailure("Array.make: length must be non-negative")
    charge_array(count)
    return [value] * count


@implements("Array.append")
def append(left: Value, right: Value) -> list[Value]:
    _array("Array.append", left)
    _array("Array.append", right)
    charge_array(len(left) + len(right))
    return left + right


@implements("Array.sub")
def sub(array: Value, start: Value, count: Value) -> list[Value]:
    _array("Array.sub", array)
    _index("Array.sub", start)
    _index("Array.sub", count)
    if start < 0 or count < 0:
        raise ChatMLFailure("Array.sub: start and len must be non-negative")
    if start > len(array):
        raise ChatMLFailure("Array.sub: start out of bounds")
    if start + count > len(array):
        raise ChatMLFailure("Array.sub: start+len out of bounds")
    charge_array(count)
    return array[start:start + count]


@implements("Array.reverse")
def reverse(array: Value) -> list[Value]:
    _array("Array.reverse", array)
    charge_array(len(array))
    return array[::-1]


@implements("Array.reverse_in_place")
def reverse_in_place(array: Value) -> None:
    _array("Array.reverse_in_place", array)
    charge_scan(len(array))
    calls.journal_whole(array)
    array.reverse()


@implements("Array.swap")
def swap(array: Value, i: Value, j: Value) -> None:
    _array("Array.swap", array)
    _index("Array.swap", i)
    _index("Array.swap", j)
    size = len(array)
    if i < 0 or i >= size or j < 0 or j >= size:
        raise ChatMLFailure("Array.swap: index out of bounds")
    calls.journal_item(array, i)
    calls.journal_item(array, j)
    array[i], array[j] = array[j], array[i]


@implements("Array.fill")
def fill(array: Value, value: Value) -> None:
    _array("Array.fill", array)
    charge_scan(len(array))
    calls.journal_whole(array)
    array[:] = [value] * len(array)


@implements("Array.init")
def init(count: Value, function: Value) -> list[Value]:
    _index("Array.init", count)
    if count < 0:
        raise ChatMLFailure("Array.init: length must be non-negative")
    charge_array(count)
    if not count:
        return []
    first, call = first_call("Array.init", function, (0,))
    return [first] + [result if type(result := call(i)) is not TAIL_CALL else bounce(result)
                      for i in range(1, count)]


@implements("Array.map")
def map_(array: Value, function: Value) -> list[Value]:
    _array("Array.map", array)
    if not array:
        return []
    charge_array(len(array))
    first, call = first_call("Array.map", function, (array[0],))
    return [first] + [result if type(result := call(x)) is not TAIL_CALL else bounce(result)
                      for x in islice(array, 1, None)]


@implements("Array.mapi")
def mapi(array: Value, function: Value) -> list[Value]:
    _array("Array.mapi", array)
    if not array:
        return []
    charge_array(len(array))
    first, call = first_call("Array.mapi", function, (0, array[0]))
    return [first] + [result if type(result := call(i, x)) is not TAIL_CALL else bounce(result)
                      for i, x in islice(enumerate(array), 1, None)]


@implements("Array.iter")
def iter_(array: Value, function: Value) -> None:
    _array("Array.iter", array)
    if array:
        _, call = first_call("Array.iter", function, (array[0],))
        for x in islice(array, 1, None):
            if type(result := call(x)) is TAIL_CALL:
                bounce(result)


@implements("Array.iteri")
def iteri(array: Value, function: Value) -> None:
    _array("Array.iteri", array)
    if array:
        _, call = first_call("Array.iteri", function, (0, array[0]))
        for i, x in islice(enumerate(array), 1, None):
            if type(result := call(i, x)) is TAIL_CALL:
                bounce(result)


@implements("Array.fold")
def fold(array: Value, initial: Value, function: Value) -> Value:
    _array("Array.fold", array)
    if not array:
        return initial
    accumulator, call = first_call("Array.fold", function, (initial, array[0]))
    for x in islice(array, 1, None):
        accumulator = call(accumulator, x)
        if type(accumulator) is TAIL_CALL:
            accumulator = bounce(accumulator)
    return accumulator


def _predicate_result(qualified: str, result: Value) -> bool:
    if type(result) is not bool:
        raise ChatMLFailure(f"{qualified}: predicate must return bool")
    return result


def _predicate(qualified: str, array: list[Value], predicate: Value) -> Iterator[bool]:
    """The predicate's verdicts on the elements, lazily, in index order."""
    first, call = first_call(qualified, predicate, (array[0],))
    yield _predicate_result(qualified, first)
    for x in islice(array, 1, None):
        verdict = call(x)
        if type(verdict) is not bool:
            verdict = _predicate_result(qualified, bounce(verdict))
        yield verdict


@implements("Array.filter")
def filter_(array: Value, predicate: Value) -> list[Value]:
    _array("Array.filter", array)
    if not array:
        return []
    kept = list(compress(array, _predicate("Array.filter", array, predicate)))
    charge_array(len(kept))
    return kept


@implements("Array.exists")
def exists(array: Value, predicate: Value) -> bool:
    _array("Array.exists", array)
    return bool(array) and any(_predicate("Array.exists", array, predicate))


@implements("Array.for_all")
def for_all(array: Value, predicate: Value) -> bool:
    _array("Array.for_all", array)
    return not array or all(_predicate("Array.for_all", array, predicate))


@implements("Array.find")
def find(array: Value, predicate: Value) -> Variant:
    _array("Array.find", array)
    if array:
        for x, verdict in zip(array, _predicate("Array.find", array, predicate)):  # noqa: B905
            if verdict:
                return Variant("Some", (x,))
    return NONE


def _option_result(result: Value) -> Variant | None:
    """``result`` if it is ```Some(x)``, ``None`` for ```None``; anything else is an error."""
    if type(result) is Variant:
        if result.tag == "None" and not result.args:
            return None
        if result.tag == "Some" and len(result.args) == 1:
            return result
    raise ChatMLFailure("Array.find_map: function must return `None or `Some(x)")


@implements("Array.find_map")
def find_map(array: Value, function: Value) -> Variant:
    _array("Array.find_map", array)
    if not array:
        return NONE
    first, call = first_call("Array.find_map", function, (array[0],))
    found = _option_result(first)
    if found is not None:
        return found
    for x in islice(array, 1, None):
        found = _option_result(bounce(call(x)))
        if found is not None:
            return found
    return NONE
