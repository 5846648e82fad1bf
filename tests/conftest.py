"""Shared pytest fixtures: where the shared conformance corpus and specs live."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import SHARED


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    assert SHARED.is_dir(), f"the shared folder is expected beside the project at {SHARED}"
    return SHARED
