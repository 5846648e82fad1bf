"""Raw and script modes: argv construction, pinned script digests re-read before spawn (§8.1, §8.3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runtime.shell.errors import InstantiationError
from tests.runtime.shell.support import call, error, open_prompt, runtime


def test_raw_tool_runs_the_script_through_the_declared_shell(tmp_path: Path) -> None:
    text = runtime() + ('<tool name="raw" type="shell" mode="raw" runtime="r" '
                        'executable="/bin/sh" result="structured"/>')
    session = open_prompt(tmp_path, text)
    outcome = call(session, "raw", script="for i in 1 2; do echo $i; done")
    data = json.loads(outcome.text)
    assert data["stdout"] == "1\n2\n"
    assert data["commands"][0]["argv"][1:] == ["-c", "for i in 1 2; do echo $i; done"]
    assert error(call(session, "raw"))[0] == "shell.tool_script_required"
    assert error(call(session, "raw", script="x", arguments=[]))[0] == "shell.tool_field_forbidden"


def test_raw_shell_needs_arbitrary_code(tmp_path: Path) -> None:
    caps = '<capabilities sandbox="preferred" child_processes="true"/>'
    text = runtime(caps=caps) + ('<tool name="raw" type="shell" mode="raw" runtime="r" '
                                 'executable="/bin/sh"/>')
    session = open_prompt(tmp_path, text)
    assert error(call(session, "raw", script="echo hi"))[0] == "capability_violation"


def script_session(tmp_path: Path, attrs: str = 'interpreter="/bin/sh"',  # type: ignore[no-untyped-def]
                   fixed: str = '["-e"]'):
    script = tmp_path / "job.sh"
    if not script.exists():
        script.write_text('echo "job $*"\n')
    text = runtime() + (f'<tool name="job" type="shell" mode="script" runtime="r" '
                        f'script="job.sh" {attrs} fixed_arguments=\'{fixed}\'/>')
    return open_prompt(tmp_path, text), script


def test_script_with_interpreter(tmp_path: Path) -> None:
    session, _ = script_session(tmp_path)
    # [interpreter] + fixed_arguments + [script] + model arguments
    assert call(session, "job", arguments=["a b"]).text == "job a b\n"


def test_executable_script_without_interpreter(tmp_path: Path) -> None:
    script = tmp_path / "job.sh"
    script.write_text('#!/bin/sh\necho "exe $*"\n')
    script.chmod(0o755)
    session, _ = script_session(tmp_path, "", '["--fixed"]')
    assert call(session, "job", arguments=["x"]).text == "exe --fixed x\n"


def test_script_edited_after_instantiation(tmp_path: Path) -> None:
    session, script = script_session(tmp_path)
    script.write_text("echo tampered\n")
    assert error(call(session, "job"))[0] == "script_changed"


def test_script_instantiation_errors(tmp_path: Path) -> None:
    with pytest.raises(InstantiationError) as raised:
        open_prompt(tmp_path, runtime() + '<tool name="job" type="shell" mode="script" '
                    'runtime="r" script="missing.sh" interpreter="/bin/sh"/>')
    assert raised.value.code == "shell.script_unavailable"
    (tmp_path / "big.sh").write_text("#" * 100)
    with pytest.raises(InstantiationError) as raised:
        open_prompt(tmp_path, runtime() + '<tool name="job" type="shell" mode="script" '
                    'runtime="r" script="big.sh" interpreter="/bin/sh" max_source_bytes="10"/>')
    assert raised.value.code == "shell.script_too_large"
