"""Driver test fixtures: a clean model environment and the test folder as working directory."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def model_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    for name in ("OCHAT_OPENAI_IDLE_TIMEOUT_SECONDS", "OCHAT_STREAM_TIMEOUT_SECONDS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
