"""The optional wall-time limit of a ChatML run (``Limits.max_wall_time``): preemptive, per run."""

from __future__ import annotations

import io

import pytest

from chatml.calls import ChatMLRuntimeError
from chatml.engine import Engine
from chatml.limits import METER, Limits

LOOP = "let spin () = while true do () done\nlet count n = let r = ref 0 in " \
       "while !r < n do r := !r + 1 done; !r\n"


def engine(limits: Limits) -> Engine:
    return Engine("core", limits=limits, sink=io.StringIO().write)


def test_an_endless_loop_stops_at_the_deadline() -> None:
    script = engine(Limits(max_steps=None, max_wall_time=0.2)).compile(LOOP)
    script.run()
    with pytest.raises(ChatMLRuntimeError, match="wall-time limit exceeded"):
        script.call("spin")
    assert METER.deadline is None  # restored after the run


def test_each_run_gets_a_fresh_deadline_and_work_within_it_completes() -> None:
    script = engine(Limits(max_steps=None, max_wall_time=5.0)).compile(LOOP)
    script.run()
    assert [script.call("count", 20_000) for _ in range(3)] == [20_000] * 3


def test_without_a_wall_time_only_the_steps_bound_the_loop() -> None:
    script = engine(Limits(max_steps=50_000)).compile(LOOP)
    script.run()
    with pytest.raises(ChatMLRuntimeError, match="step limit exceeded"):
        script.call("spin")
