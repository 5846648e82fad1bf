"""Helpers for the driver tests: run ``chatmdc`` in-process or as a real process, read
transcripts and event logs back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest

from chatmd.frontend import check_prompt
from runtime.commands.chatmdc import main
from tests.support import REPO_ROOT

CHATMDC = [sys.executable, "-m", "runtime.commands.chatmdc"]


@attrs.frozen
class Ran:
    code: int
    out: str
    err: str


def run_inprocess(capsys: pytest.CaptureFixture[str], args: Sequence[str]) -> Ran:
    code = main(list(args))
    captured = capsys.readouterr()
    return Ran(code, captured.out, captured.err)


def run_process(args: Sequence[str], *, cwd: Path, env: dict[str, str] | None = None,
                timeout: float = 60) -> Ran:
    environment = dict(os.environ, OPENAI_API_KEY="test-key", PYTHONPATH=str(REPO_ROOT))
    environment.update(env or {})
    done = subprocess.run([*CHATMDC, *args], cwd=cwd, env=environment, capture_output=True,
                          text=True, timeout=timeout, check=False)
    return Ran(done.returncode, done.stdout, done.stderr)


def parses(path: Path) -> Any:
    """The transcript's prompt (asserting it checks without errors)."""
    result = check_prompt(path)
    assert result.prompt is not None, [d.message for d in result.diagnostics]
    return result.prompt


def events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def names(log: list[dict[str, Any]]) -> list[str]:
    return [event["event"] for event in log]


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


__all__ = ["Ran", "events", "names", "parses", "run_inprocess", "run_process", "write"]
