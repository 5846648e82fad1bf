"""Promises about the project itself: the README's commands, CI, and module docstrings."""

from __future__ import annotations

import ast
import re

from tests.support import REPO_ROOT

PACKAGES = ("chatcommon", "chatmd", "chatml", "runtime")


def _readme_commands() -> list[str]:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    setup = readme.split("## Set up on a fresh machine", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)\n```", setup, re.S)


def test_readme_gives_the_two_setup_commands() -> None:
    commands = _readme_commands()
    assert len(commands) == 2
    run_example, run_tests = commands
    assert "chatmdc check examples/" in run_example
    assert "pytest" in run_tests
    example = run_example.split("chatmdc check ", 1)[1].split()[0]
    assert (REPO_ROOT / example).is_file()


def test_ci_runs_exactly_the_readme_test_command() -> None:
    ci_script = (REPO_ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert _readme_commands()[1] in ci_script.splitlines()


def test_every_module_has_a_docstring() -> None:
    missing = []
    for package in PACKAGES:
        for path in (REPO_ROOT / package).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            if ast.get_docstring(tree) is None and path.stat().st_size > 0:
                missing.append(str(path.relative_to(REPO_ROOT)))
    assert not missing, f"modules without a docstring: {missing}"
