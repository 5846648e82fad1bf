"""Fuzzing the ChatML frontend in-process: any input gives a result or a diagnostic.

Structure-aware programs (nesting, repetition, size), byte-level damage of the
valid test programs, and damaged bytecode go through every entry point
(:mod:`tests.fuzz.harness`). Budget: tests/fuzz/budget.py (``pytest -m fuzz``
for the long one).
"""

from __future__ import annotations

import zlib

from hypothesis import given
from hypothesis import strategies as st

from chatml.build import build_source
from chatml.bytecode.serialize import MAGIC, serialize
from tests.fuzz import strategies
from tests.fuzz.budget import fuzz
from tests.fuzz.harness import exercise_bytecode, exercise_chatml


@fuzz
@given(strategies.chatml_programs)
def test_structured_programs(text: str) -> None:
    exercise_chatml(text)


@fuzz
@given(strategies.any_chatml_expr)
def test_structured_expressions(expr: str) -> None:
    exercise_chatml(f"let f x = {expr}\nlet v = f(1)\n")


@fuzz
@given(strategies.damaged_samples(strategies.CHATML_SAMPLES))
def test_damaged_test_programs(data: bytes) -> None:
    exercise_chatml(data.decode("utf-8", errors="replace"))


_VALID = build_source("let rec f n = if n < 1 then 0 else n + f(n - 1)\n"
                      "let g x = match x with | `A(y) -> y | `B -> 0\n"
                      "print(f(10) + g(`A(2)))\n", "valid.chatml").module
_BYTECODE = serialize(_VALID)
_HEADER = len(MAGIC) + 2
_JSON = zlib.decompress(_BYTECODE[_HEADER:])


@fuzz
@given(st.one_of(
    strategies.damaged(_BYTECODE),
    strategies.damaged(_JSON).map(lambda body: _BYTECODE[:_HEADER] + zlib.compress(body)),
))
def test_damaged_bytecode(data: bytes) -> None:
    exercise_bytecode(data)
