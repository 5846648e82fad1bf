"""How long the fuzzing suite runs: a short budget by default, a long one on request.

Two hypothesis profiles apply to the fuzz tests only (the other property tests
keep their own settings):

* ``fuzz-ci`` (default): a few examples per test, so that the whole suite adds a
  few seconds to every ``pytest`` run (CI);
* ``fuzz-long``: many examples per test. It is chosen by ``pytest -m fuzz`` (the
  documented command) or by ``CHATMD_FUZZ=long``; ``CHATMD_FUZZ=ci`` forces
  the short budget, and ``CHATMD_FUZZ_EXAMPLES=N`` sets the examples per test.

Every example has a deadline (:data:`DEADLINE`, 10 s; :data:`CI_DEADLINE`, 30 s, in
the short budget): an input that takes longer is a failure (a hang or
super-linear work), minimised by hypothesis like a crash.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import timedelta
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, settings

#: The per-example deadline of the long budget: a hang or a super-linear blow-up fails.
DEADLINE = timedelta(seconds=10)
#: The short (CI) budget's deadline: wider, so that a loaded CI machine does not fail a run.
CI_DEADLINE = timedelta(seconds=30)
SHORT_EXAMPLES = 12
LONG_EXAMPLES = 400

_SUPPRESSED = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
               HealthCheck.function_scoped_fixture]
settings.register_profile("fuzz-ci", max_examples=SHORT_EXAMPLES, deadline=CI_DEADLINE,
                          suppress_health_check=_SUPPRESSED, derandomize=True, database=None)
settings.register_profile("fuzz-long", max_examples=LONG_EXAMPLES, deadline=DEADLINE,
                          suppress_health_check=_SUPPRESSED)

#: Set by tests/fuzz/conftest.py from the command line (``-m fuzz`` selects the long budget).
state = {"long": False}

F = TypeVar("F", bound=Callable[..., Any])


def profile_name() -> str:
    chosen = os.environ.get("CHATMD_FUZZ", "")
    if chosen in ("long", "ci"):
        return f"fuzz-{chosen}"
    return "fuzz-long" if state["long"] else "fuzz-ci"


def examples() -> int:
    override = os.environ.get("CHATMD_FUZZ_EXAMPLES", "")
    if override.isdigit():
        return int(override)
    return LONG_EXAMPLES if profile_name() == "fuzz-long" else SHORT_EXAMPLES


def fuzz(test: F) -> F:
    """Mark ``test`` (a hypothesis test) as a fuzz test with the selected budget."""
    budgeted = settings(settings.get_profile(profile_name()), max_examples=examples())(test)
    return pytest.mark.fuzz(budgeted)  # type: ignore[no-any-return]
