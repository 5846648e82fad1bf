"""Shared pytest fixtures (where the shared conformance corpus lives) and hypothesis profiles.

Profiles: ``fuzz-long`` is the long budget of the fuzzing suite (tests/fuzzing,
docs/fuzzing.md); it is loaded by ``--hypothesis-profile=fuzz-long`` or by the
environment variable ``CHATMD_FUZZ=long``. Without either, hypothesis' default
profile applies and the fuzz tests run their short CI budget.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.support import SHARED

settings.register_profile("fuzz-long", deadline=None, print_blob=True,
                          suppress_health_check=list(HealthCheck))
if os.environ.get("CHATMD_FUZZ", "").strip().lower() == "long":
    settings.load_profile("fuzz-long")


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    assert SHARED.is_dir(), f"the shared folder is expected beside the project at {SHARED}"
    return SHARED
