"""The bubblewrap backend: real confinement of writes and network (spec §8.10)."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest

from runtime.shell.errors import InstantiationError
from tests.runtime.shell.support import call, error, open_prompt, runtime, structured_tool

CAPS = ('<capabilities sandbox="required" child_processes="true" arbitrary_code="true">'
        '<read path="${workspace}"/><write path="${workspace}/out"/></capabilities>')
BWRAP = '<backends merge="replace"><bubblewrap/></backends>'


def sandboxed(tmp_path: Path, caps: str = CAPS):  # type: ignore[no-untyped-def]
    (tmp_path / "out").mkdir(exist_ok=True)
    return open_prompt(tmp_path, runtime(caps=caps, backends=BWRAP)
                       + structured_tool(result="structured"))


def test_writes_inside_the_write_roots_only(tmp_path: Path) -> None:
    session = sandboxed(tmp_path)
    inside = call(session, "run", program="sh", arguments=["-c", "echo ok > out/file"])
    assert inside.result is not None and inside.result.status == ("exited", 0)
    assert inside.result.backend == "linux-bubblewrap"
    assert (tmp_path / "out" / "file").read_text() == "ok\n"
    outside = call(session, "run", program="sh", arguments=["-c", "echo bad > escaped"])
    assert outside.result is not None and outside.result.status != ("exited", 0)
    assert not (tmp_path / "escaped").exists()
    # the capability check refuses what it can see before the sandbox is even reached
    assert error(call(session, "run", program="touch", arguments=["escaped"]))[0] == (
        "capability_violation")


def test_network_is_unshared_unless_granted(tmp_path: Path) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(2)
    port = server.getsockname()[1]
    accepted: list[bool] = []

    def serve() -> None:
        try:
            connection, _ = server.accept()
            accepted.append(True)
            connection.close()
        except OSError:
            pass
    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    probe = (f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=0.5); "
             "print('connected')")
    session = sandboxed(tmp_path)
    outcome = call(session, "run", program="python3", arguments=["-c", probe])
    assert outcome.result is not None and outcome.result.status != ("exited", 0)
    assert "connected" not in outcome.result.stdout
    granted = sandboxed(tmp_path, CAPS.replace('sandbox="required"',
                                               'sandbox="required" network="true"'))
    outcome = call(granted, "run", program="python3", arguments=["-c", probe])
    assert outcome.result is not None and outcome.result.stdout == "connected\n"
    thread.join(2)
    server.close()
    assert accepted == [True]


def test_missing_bwrap_is_sandbox_unavailable_with_a_hint(tmp_path: Path) -> None:
    backends = '<backends merge="replace"><bubblewrap executable="/nonexistent/bwrap"/></backends>'
    with pytest.raises(InstantiationError) as raised:
        open_prompt(tmp_path, runtime(caps=CAPS, backends=backends) + structured_tool())
    assert raised.value.code == "sandbox_unavailable"
    assert "bubblewrap" in raised.value.hint


def test_required_confinement_never_falls_back_to_direct(tmp_path: Path) -> None:
    backends = ('<backends merge="replace"><bubblewrap executable="/nonexistent/bwrap"/>'
                '<direct/></backends>')
    text = runtime(caps=CAPS, backends=backends) + structured_tool()
    with pytest.raises(InstantiationError) as raised:
        open_prompt(tmp_path, text)
    assert raised.value.code in ("sandbox_unavailable", "shell.incompatible_backend")


def test_a_root_of_slash_keeps_proc_tmp_and_deeper_write_roots(tmp_path: Path) -> None:
    caps = ('<capabilities sandbox="required" child_processes="true" arbitrary_code="true">'
            '<read path="/"/><write path="${workspace}/out"/></capabilities>')
    session = sandboxed(tmp_path, caps)
    script = "cat /proc/self/status > /dev/null && touch /tmp/t && echo ok > out/w && echo fine"
    outcome = call(session, "run", program="sh", arguments=["-c", script])
    assert outcome.result is not None and outcome.result.stdout == "fine\n", outcome.text
    assert (tmp_path / "out" / "w").read_text() == "ok\n"
    # the workspace lies under /tmp, which is a private tmpfs here: the write lands there
    call(session, "run", program="sh", arguments=["-c", "echo x > escaped"])
    assert not (tmp_path / "escaped").exists()
