"""How much the fuzz suite does: the short CI budget, or the long one on request.

The long budget is selected by ``CHATMD_FUZZ=long`` or by loading the
hypothesis profile ``fuzz-long`` (``--hypothesis-profile=fuzz-long``); both
are registered in ``tests/conftest.py``. :func:`fuzz_settings` gives a fuzz
test its example count (scaled for the long budget) and turns hypothesis' own
deadline off: the per-call deadline of :mod:`tests.fuzzing.harness` is the one
that counts, and it interrupts a hang instead of timing it afterwards.

Sizes grow with the budget too: :data:`MAX_DEPTH` bounds generated nesting,
:data:`MAX_REPEAT` repetition. The short budget stays below the depths the
issue-16 fixes are raising (see docs/fuzzing.md), so CI is green on main.
"""

from __future__ import annotations

import os
from typing import Any

from hypothesis import HealthCheck, settings

LONG_PROFILE = "fuzz-long"


def is_long() -> bool:
    """True when the long budget was asked for (environment or hypothesis profile)."""
    if os.environ.get("CHATMD_FUZZ", "").strip().lower() == "long":
        return True
    return settings.get_current_profile_name() == LONG_PROFILE


#: Whether the strategies generate the shapes of issue 16's table (raw NUL and over-long
#: file references, nesting deeper than the short budget): on by default now that they are
#: fixed; ``CHATMD_FUZZ_PENDING=0`` turns them off (to look for other crashers).
_PENDING_SWITCH = os.environ.get("CHATMD_FUZZ_PENDING", "").strip()
PENDING_SHAPES = _PENDING_SWITCH != "0"  # the issue-16 table's shapes are fixed: on by default

#: Example-count multiplier of the long budget.
LONG_FACTOR = 20
#: Deepest generated nesting (elements, expressions) and longest repetition.
MAX_DEPTH = 1500 if is_long() else 40
MAX_REPEAT = 3000 if is_long() else 60


def fuzz_settings(examples: int, **extra: Any) -> settings:
    """Settings for one fuzz test: ``examples`` per run (x :data:`LONG_FACTOR` when long)."""
    count = examples * LONG_FACTOR if is_long() else examples
    return settings(max_examples=count, deadline=None, derandomize=not is_long(),
                    suppress_health_check=list(HealthCheck), **extra)
