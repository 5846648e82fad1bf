"""chatcommon.numbers and the readers routed through it: digit strings past CPython's int() limit."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatcommon.numbers import MAX_DIGITS, NumberTooLong, abbreviate_digits, int_or_raise, parse_int
from runtime.errors import SnapshotDecodeError
from runtime.ids import EntryId, InvalidEntryId
from runtime.snapshot import loads_json

LONG = "9" * 5000


def test_the_bound_is_below_cpythons_limit() -> None:
    assert sys.get_int_max_str_digits() > MAX_DIGITS
    with pytest.raises(ValueError):
        int(LONG)  # the crash this module exists to prevent


def test_short_text_converts_like_int() -> None:
    assert parse_int("42") == 42
    assert parse_int("-7") == -7
    assert parse_int(b"123") == 123
    assert parse_int("ff", 16) == 255


def test_long_text_is_out_of_range() -> None:
    assert parse_int(LONG) is None
    assert parse_int("-" + LONG) is None
    assert parse_int(LONG.encode()) is None


def test_leading_zeros_and_separators_do_not_count() -> None:
    assert parse_int("0" * 5000 + "12") == 12
    assert parse_int("-" + "0" * 5000 + "3") == -3
    assert parse_int("0" * 5000) == 0
    assert parse_int("1" + "_0" * 3000) == 10**3000


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=-(10**MAX_DIGITS) + 1, max_value=10**MAX_DIGITS - 1),
       st.integers(min_value=0, max_value=5000))
def test_in_range_values_round_trip_whatever_the_padding(value: int, zeros: int) -> None:
    sign = "-" if value < 0 else ""
    assert parse_int(sign + "0" * zeros + str(abs(value))) == value


def test_int_or_raise_raises_a_value_error_subclass() -> None:
    assert int_or_raise("5") == 5
    with pytest.raises(NumberTooLong, match="more than 4000 digits"):
        int_or_raise(LONG)
    assert issubclass(NumberTooLong, ValueError)


def test_abbreviation_keeps_messages_short() -> None:
    assert abbreviate_digits("123") == "123"
    short = abbreviate_digits(LONG)
    assert len(short) < 60 and short.endswith("(5000 characters)")


def test_entry_ids_with_long_numbers_are_invalid_not_crashes() -> None:
    with pytest.raises(InvalidEntryId, match="namespace length"):
        EntryId.parse(f"{LONG}:session:1")
    with pytest.raises(InvalidEntryId, match="sequence"):
        EntryId.parse(f"7:session:{LONG}")
    assert EntryId.parse(f"7:session:{'1' * 300}").sequence == int("1" * 300)


def test_snapshot_json_with_a_long_integer_is_a_decode_error() -> None:
    with pytest.raises(SnapshotDecodeError, match="more than 4000 digits"):
        loads_json('{"state": ' + LONG + "}", "snap.json")
    with pytest.raises(SnapshotDecodeError, match="nested too deeply"):
        loads_json("[" * 100_000 + "]" * 100_000, "snap.json")
    assert loads_json('{"n": 12}', "snap.json") == {"n": 12}


def test_a_long_literal_in_a_repl_load_is_a_diagnostic(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from chatml.repl import ReplState, step

    path = tmp_path / "long.chatml"
    path.write_text(f"let x = {LONG}\n", encoding="utf-8")
    state, output = step(ReplState.start(), f":load {path}")
    assert "error[chatml.int_out_of_range]" in output and "(5000 characters)" in output
    assert len(output) < 20_000  # the message abbreviates the literal (the source line is shown)
    state, output = step(state, "1 + 1")
    assert output == "- : int = 2\n"
