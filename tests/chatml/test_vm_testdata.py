"""Runs the data-driven VM cases in tests/chatml/testdata/run (marker syntax: harness.py).

Each file is compiled with the core surface and run; its printed output must
be exactly its ``(*> *)`` markers and its diagnostics (warnings, the runtime
error) exactly its ``(*! *)`` markers. Options: ``max-steps``, ``max-memory``
(bytes), ``max-depth``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from chatml.limits import Limits
from tests.chatml.harness import TESTDATA, Outcome, case_files, check, parse_expectations
from tests.chatml.vm_support import run_source

CASES = case_files("run")


def test_there_are_enough_run_cases() -> None:
    assert len(CASES) >= 30


def _limits(options: dict[str, str]) -> Limits:
    defaults = Limits()
    return Limits(
        max_steps=int(options.get("max-steps", defaults.max_steps or 0)),
        max_memory=int(options.get("max-memory", defaults.max_memory or 0)),
        max_depth=int(options.get("max-depth", defaults.max_depth)),
    )


@pytest.mark.parametrize("path", CASES, ids=lambda p: str(p.relative_to(TESTDATA)))
def test_run_case(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    expectations = parse_expectations(text)
    outcome = run_source(text, path.name, limits=_limits(dict(expectations.options)))
    problems = check(expectations, Outcome(tuple(outcome.diagnostics), stdout=outcome.stdout))
    assert not problems, f"{path.name}:\n" + "\n".join(problems)
