"""Arithmetic on call results computed in place (``_Body.fuse`` in chatml.vm.translate).

``f(a) + g(b)`` translates to one assignment that makes both calls, each on its
own line, instead of two temporaries and a third line. These tests check that
the fused form is used where it applies and not where it would reorder reads,
and that it changes nothing observable: output order, the runtime diagnostic
(position and stack trace of a failure inside either call, of the overflow of
the operation itself), and steps and memory when a budget runs out at any point
-- each run compared with the reference interpreter.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatml.build import build_source
from chatml.limits import Limits
from chatml.vm.translate import translate
from tests.chatml.differential import both
from tests.chatml.vm_support import core_values

FIB = "let rec fib n = if n < 2 then n else fib(n - 1) + fib(n - 2)\nprint(fib(12))\n"

_HELPERS = """\
let noisy tag n = print(tag); n
let boom n = if n > 2 then 1 / (n - n) else n
let rec deep n = if n == 0 then 0 else 1 + deep(n - 1)
let big n = n * 1000000000
"""

PROGRAMS = {
    "two calls": 'print(to_string(noisy("a", 1) + noisy("b", 2)))',
    "two calls, minus": 'print(to_string(noisy("a", 5) - noisy("b", 2)))',
    "two calls, times": 'print(to_string(noisy("a", 5) * noisy("b", 2)))',
    "call then variable": 'let x = 7\nprint(to_string(noisy("a", 1) + x))',
    "literal then call": 'print(to_string(3 + noisy("a", 1)))',
    "variable then call": 'let y = noisy("y", 4)\nprint(to_string(y - noisy("a", 1)))',
    "same temporary twice": 'let x = noisy("a", 2)\nprint(to_string(x + x))',
    "failure in the first call": 'print(to_string(boom(5) + noisy("b", 2)))',
    "failure in the second call": 'print(to_string(noisy("a", 1) + boom(7)))',
    "failure deep in the first call":
        'let rec down n = if n == 0 then boom(9) else 1 + down(n - 1)\n'
        'print(to_string(down(4) + noisy("b", 1)))',
    "overflow of the operation":
        'print(to_string(big(4611686018) + big(4611686018)))',
    "overflow of a subtraction":
        'print(to_string(noisy("a", 0 - 4611686018427387903) - noisy("b", 9)))',
    "recursion through both": 'print(to_string(deep(30) + deep(40)))',
    "chain of sums": 'print(to_string(noisy("a", 1) + noisy("b", 2) + noisy("c", 3)))',
    "nested": 'print(to_string((noisy("a", 1) + noisy("b", 2)) * (noisy("c", 3) - noisy("d", 4))))',
}


_ALONE = re.compile(r"t\d+ = g\d+\('a', 1\)$")
"""The call ``noisy("a", 1)`` into a temporary of its own (not fused)."""


def _agree(text: str, limits: Limits) -> None:
    outcomes = both(text, "fused.chatml", limits)
    assert outcomes is not None, "the program builds and loads"
    translated, referenced = outcomes
    assert translated.comparable() == referenced.comparable()


def _python(text: str) -> str:
    built = build_source(text, "fused.chatml", values=core_values())
    return translate(built.module).source


def test_fib_computes_both_calls_in_the_addition() -> None:
    source = _python(FIB)
    assert "= (g" in source and "\n                + g" in source
    calls = [line.strip() for line in source.splitlines() if "(v1_0 - " in line]
    assert len(calls) == 2 and calls[0].startswith("t") and calls[1].startswith("+ g"), calls


def test_a_variable_before_a_call_keeps_its_temporary() -> None:
    """``y - noisy(...)`` would read ``y`` before the call if fused: not fused."""
    source = _python(_HELPERS + PROGRAMS["variable then call"] + "\n")
    assert any(_ALONE.match(line.strip()) for line in source.splitlines())


def test_literal_then_call_and_call_then_variable_are_fused() -> None:
    for name in ("literal then call", "call then variable"):
        source = _python(_HELPERS + PROGRAMS[name] + "\n")
        assert not any(_ALONE.match(line.strip()) for line in source.splitlines()), name


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_fused_programs_agree_with_the_reference(name: str) -> None:
    text = _HELPERS + PROGRAMS[name] + "\n"
    _agree(text, Limits())


@pytest.mark.parametrize("name", ["two calls", "nested", "failure in the second call",
                                  "chain of sums"])
def test_every_step_budget_stops_both_at_the_same_point(name: str) -> None:
    text = _HELPERS + PROGRAMS[name] + "\n"
    for steps in range(1, 40):
        _agree(text, Limits(max_steps=steps))


@pytest.mark.parametrize("name", ["two calls", "nested", "chain of sums"])
def test_every_memory_budget_stops_both_at_the_same_point(name: str) -> None:
    text = _HELPERS + PROGRAMS[name] + "\n"
    for memory in range(0, 2_000, 40):
        _agree(text, Limits(max_memory=memory))


_CALLS = st.sampled_from(["noisy(\"p\", 3)", "noisy(\"q\", 0 - 2)", "boom(1)", "boom(3)",
                          "big(5)", "big(4611686018)", "deep(3)", "7", "x"])


@st.composite
def _sums(draw: st.DrawFn, depth: int = 3) -> str:
    if depth == 0 or draw(st.booleans()):
        return str(draw(_CALLS))
    operator = draw(st.sampled_from(["+", "-", "*"]))
    return f"({draw(_sums(depth - 1))} {operator} {draw(_sums(depth - 1))})"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_sums(), st.sampled_from([5, 25, 200_000]))
def test_random_sums_of_calls_agree(expression: str, steps: int) -> None:
    text = _HELPERS + f"let x = noisy(\"x\", 11)\nprint(to_string({expression}))\n"
    _agree(text, Limits(max_steps=steps))
