"""External wrapper backends: template expansion, pinning, eligibility (spec §3.6, §8.10)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from runtime.shell.errors import InstantiationError
from tests.runtime.shell.support import call, error, open_prompt, runtime, structured_tool

WRAPPER = """#!/bin/sh
for a in "$@"; do echo "$a"; done > "$(dirname "$0")/wrapper.log"
while [ "$1" != "--" ]; do shift; done
shift
exec "$@"
"""
TEMPLATE = ('<cwd_value/><read_roots flag="--ro"/><network_flag value="--net"/>'
            '<resource_limit_args/><arg value="--"/><command_argv/>')


def wrapper(tmp_path: Path) -> Path:
    path = tmp_path / "wrap.sh"
    path.write_text(WRAPPER)
    path.chmod(0o755)
    return path


def backends(path: Path, confinement: str, accept: bool = False, extra: str = "") -> str:
    flag = ' accept_declared_confinement="true"' if accept else ""
    return (f'<backends merge="replace"{flag}><external_backend id="wrap" executable="{path}" '
            f'confinement="{confinement}" {extra}>{TEMPLATE}</external_backend></backends>')


def test_declared_confinement_serves_required_when_accepted(tmp_path: Path) -> None:
    path = wrapper(tmp_path)
    caps = ('<capabilities sandbox="required" child_processes="true">'
            '<read path="${workspace}"/></capabilities>')
    text = runtime(caps=caps, backends=backends(path, "declared", accept=True),
                   limits='<limits wall_time="1s" cpu_time="1.5s"/>') + structured_tool(
        result="structured")
    session = open_prompt(tmp_path, text)
    data = json.loads(call(session, "run", program="echo", arguments=["hi"]).text)
    assert data["stdout"] == "hi\n" and data["backend"] == "wrap"
    logged = (tmp_path / "wrapper.log").read_text().splitlines()
    echo = data["commands"][0]["argv"][0]
    assert echo == "echo"
    assert logged == [str(tmp_path), "--ro", str(tmp_path), "--cpu", "2", "--",
                      os.path.realpath("/usr/bin/echo"), "hi"]


def test_declared_confinement_is_not_accepted_by_default(tmp_path: Path) -> None:
    caps = '<capabilities sandbox="required"/>'
    with pytest.raises(InstantiationError) as raised:
        open_prompt(tmp_path, runtime(caps=caps, backends=backends(wrapper(tmp_path), "declared"))
                    + structured_tool())
    assert raised.value.code == "sandbox_unavailable"


def test_wrapper_pin_and_swap(tmp_path: Path) -> None:
    path = wrapper(tmp_path)
    with pytest.raises(InstantiationError) as raised:
        open_prompt(tmp_path, runtime(backends=backends(path, "none", extra=f'sha256="{"0" * 64}"'))
                    + structured_tool())
    assert raised.value.code == "shell.external_backend_digest_mismatch"
    session = open_prompt(tmp_path, runtime(backends=backends(path, "none")) + structured_tool())
    assert call(session, "run", program="echo", arguments=["a"]).text == "a\n"
    path.write_text(WRAPPER + "# changed\n")
    assert error(call(session, "run", program="echo", arguments=["a"]))[0] == (
        "executable_changed")
