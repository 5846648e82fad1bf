"""``<approvals durable>`` decides where a ``durable_exact`` grant goes (shell spec §3.8, §8.7)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from runtime.shell.approvals import ApprovalAnswer
from tests.runtime.shell.support import call
from tests.runtime.shell.test_approvals import Recorder, ask_session

DURABLE = ApprovalAnswer("approve", scope="durable_exact")


def test_durable_true_writes_the_grant_file_and_a_new_session_reuses_it(tmp_path: Path) -> None:
    body = '<approvals scopes="once,durable_exact" durable="true"/>'
    grants = tmp_path / "grants.json"
    first = ask_session(tmp_path, Recorder(DURABLE), body, grants_path=grants)
    assert call(first, "run", program="echo", arguments=["d"]).text == "d\n"
    assert len(json.loads(grants.read_text())["grants"]) == 1
    assert stat.S_IMODE(os.stat(grants).st_mode) == 0o600
    later = Recorder()
    second = ask_session(tmp_path, later, body, grants_path=grants)
    assert call(second, "run", program="echo", arguments=["d"]).text == "d\n"
    assert later.requests == []


def test_durable_false_keeps_the_grant_for_the_session_only(tmp_path: Path) -> None:
    body = '<approvals scopes="once,durable_exact"/>'  # durable defaults to false (§6.4)
    grants = tmp_path / "grants.json"
    reviewer = Recorder(DURABLE)
    first = ask_session(tmp_path, reviewer, body, grants_path=grants)
    for _ in range(3):
        assert call(first, "run", program="echo", arguments=["d"]).text == "d\n"
    assert len(reviewer.requests) == 1  # the answer holds for this session...
    assert not grants.exists()  # ...and nothing was written
    later = Recorder(True)
    second = ask_session(tmp_path, later, body, grants_path=grants)
    assert call(second, "run", program="echo", arguments=["d"]).text == "d\n"
    assert len(later.requests) == 1  # a new session asks again


def test_durable_false_ignores_grants_already_on_disk(tmp_path: Path) -> None:
    grants = tmp_path / "grants.json"
    allowing = '<approvals scopes="once,durable_exact" durable="true"/>'
    first = ask_session(tmp_path, Recorder(DURABLE), allowing, grants_path=grants)
    call(first, "run", program="echo", arguments=["d"])
    assert grants.exists()
    # the same runtime, now without durable grants: the stored grant must not approve
    # (a different manifest anyway; the file is not even read)
    refusing = '<approvals scopes="once,durable_exact" durable="false"/>'
    reviewer = Recorder(False)
    second = ask_session(tmp_path, reviewer, refusing, grants_path=grants)
    assert json.loads(call(second, "run", program="echo", arguments=["d"]).text)["error"][
        "code"] == "denied"
    assert len(reviewer.requests) == 1


def test_the_grant_store_reads_the_file_only_for_durable_runtimes(tmp_path: Path) -> None:
    from runtime.shell.approvals import GrantStore, approval_identity

    identity = approval_identity(manifest_sha256="m", runtime_id="r", request_kind="structured",
                                 executable="/bin/echo", executable_sha256="e", cwd="/",
                                 env={}, stdin=b"", script_sha256=None, argv=("echo", "d"))
    path = tmp_path / "grants.json"
    GrantStore(str(path)).store(identity, DURABLE, durable=True)
    fresh = GrantStore(str(path))
    assert fresh.lookup(identity, durable=True) == "durable_exact"
    assert fresh.lookup(identity, durable=False) is None
    session_only = GrantStore(str(tmp_path / "other.json"))
    session_only.store(identity, DURABLE, durable=False)
    assert not (tmp_path / "other.json").exists()
    assert session_only.lookup(identity, durable=False) == "exact_session"
