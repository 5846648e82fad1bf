"""The README's five-minute tour: every ``$ command`` in its console blocks prints what follows it."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import REPO_ROOT


def _tour_steps() -> list[tuple[str, str]]:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    tour = readme.split("## A five-minute tour", 1)[1].split("\n## ", 1)[0]
    steps: list[tuple[str, str]] = []
    for block in re.findall(r"```console\n(.*?)```", tour, re.S):
        for chunk in re.split(r"^\$ ", block, flags=re.M)[1:]:
            command, _, expected = chunk.partition("\n")
            steps.append((command, expected))
    return steps


def test_the_tour_has_steps() -> None:
    assert len(_tour_steps()) >= 4


@pytest.mark.parametrize(("command", "expected"), _tour_steps(), ids=lambda value: value[:50])
def test_a_tour_step_prints_what_the_readme_shows(command: str, expected: str) -> None:
    argv = shlex.split(command)
    tool = Path(argv[0])
    assert tool.parts[:2] == (".venv", "bin"), "tour commands run the installed scripts"
    executable = Path(sys.executable).parent / tool.name  # the environment running the tests
    run = subprocess.run([str(executable), *argv[1:]], cwd=REPO_ROOT, capture_output=True,
                         text=True, timeout=60)
    assert run.stdout + run.stderr == expected
