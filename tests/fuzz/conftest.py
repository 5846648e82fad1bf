"""Fuzz-suite configuration: ``pytest -m fuzz`` selects the long budget (tests/fuzz/budget.py)."""

from __future__ import annotations

import pytest

from tests.fuzz import budget


def pytest_configure(config: pytest.Config) -> None:
    markexpr = getattr(config.option, "markexpr", "") or ""
    budget.state["long"] = markexpr.strip() == "fuzz"
