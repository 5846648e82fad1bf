"""Running both command lines in-process on generated files, for the robustness tests."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest

from chatml.cli import main as chatml_main
from runtime.commands.chatmdc import main as chatmdc_main

Files = dict[str, "str | bytes"]


@attrs.frozen
class Outcome:
    """Exit status and what a command printed."""

    status: int
    out: str
    err: str

    def json(self, stream: str = "out") -> dict[str, Any]:
        """The one JSON document printed on ``stream`` (fails if there is not exactly one)."""
        text = self.out if stream == "out" else self.err
        document = json.loads(text)
        assert isinstance(document, dict)
        return document

    def codes(self, stream: str = "out") -> list[str]:
        return [d["code"] for d in self.json(stream)["diagnostics"]]


def write_files(root: Path, files: Files) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def run(main: Callable[[Sequence[str]], int], argv: Sequence[str],
        capsys: pytest.CaptureFixture[str]) -> Outcome:
    """``main(argv)``: it must return (no exception) and print no traceback."""
    status = main(list(argv))
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err, captured.err[-2000:]
    return Outcome(status, captured.out, captured.err)


def chatmdc(argv: Sequence[str], capsys: pytest.CaptureFixture[str]) -> Outcome:
    return run(chatmdc_main, argv, capsys)


def chatml(argv: Sequence[str], capsys: pytest.CaptureFixture[str]) -> Outcome:
    return run(chatml_main, argv, capsys)
