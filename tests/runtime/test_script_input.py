"""``ScriptInputs``: the ``ctx.items`` array stays exact while conversions are reused."""

from __future__ import annotations

from chatml.json_values import to_host
from chatml.values import Value, Variant
from runtime.ids import Entry, EntryAllocator
from runtime.script_input import ScriptInputs, json_value


def _entries(count: int, allocator: EntryAllocator) -> list[Entry]:
    return [Entry(allocator.allocate(), {"type": "message", "role": "user",
                                         "content": f"text {index}"})
            for index in range(count)]


def _expected(history: list[Entry]) -> list[tuple[str, object]]:
    return [(entry.entry_id, to_host(json_value(entry.item))) for entry in history]


def _plain(records: list[dict[str, Value]]) -> list[tuple[str, object]]:
    """Records as comparable host data (variants compare by identity)."""
    return [(record["id"], to_host(record["value"])) for record in records]


def test_growing_history_gets_the_new_tail() -> None:
    inputs = ScriptInputs()
    allocator = EntryAllocator("t")
    history = _entries(5, allocator)
    assert _plain(inputs.items(history)) == _expected(history)
    history += _entries(3, allocator)
    assert _plain(inputs.items(history)) == _expected(history)


def test_replaced_and_shortened_histories_are_converted_again() -> None:
    inputs = ScriptInputs()
    allocator = EntryAllocator("t")
    history = _entries(6, allocator)
    inputs.items(history)
    replaced = list(history)
    replaced[2] = Entry(history[2].entry_id, {"type": "message", "role": "assistant",
                                              "content": "changed"})
    assert _plain(inputs.items(replaced)) == _expected(replaced)
    shortened = replaced[:3]
    assert _plain(inputs.items(shortened)) == _expected(shortened)
    assert _plain(inputs.items(history)) == _expected(history)


def test_each_call_returns_a_fresh_array() -> None:
    inputs = ScriptInputs()
    history = _entries(4, EntryAllocator("t"))
    first = inputs.items(history)
    first[0] = {"id": "x", "value": Variant("Null", ())}
    first.append(first[1])
    assert _plain(inputs.items(history)) == _expected(history)


def test_forget_drops_reused_records() -> None:
    inputs = ScriptInputs()
    history = _entries(3, EntryAllocator("t"))
    before = inputs.items(history)
    inputs.forget()
    after = inputs.items(history)
    assert _plain(after) == _plain(before)
    assert all(a is not b for a, b in zip(after, before, strict=True))


def test_an_equal_but_different_item_is_converted_again() -> None:
    inputs = ScriptInputs()
    first = [Entry("7:session:0", {"n": 1})]
    inputs.items(first)
    second = [Entry("7:session:0", {"n": True})]  # == first[0] in Python, not in ChatML
    assert _plain(inputs.items(second)) == [("7:session:0", {"n": True})]
    assert type(_plain(inputs.items(second))[0][1]["n"]) is bool
