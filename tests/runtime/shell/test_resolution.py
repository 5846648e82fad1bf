"""Resolution with fingerprints, re-verification before spawn, effects and capabilities (§8.4-8.5)."""

from __future__ import annotations

import os
from pathlib import Path

from runtime.shell.approvals import ApprovalRequest
from runtime.shell.resolve import HASH_CACHE, fingerprint
from tests.runtime.shell.support import call, error, open_prompt, runtime, structured_tool

ASK = '<policy default="ask"/>'


def executable(path: Path, text: str = "#!/bin/sh\necho one\n") -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


def test_executable_swapped_between_resolution_and_spawn(tmp_path: Path) -> None:
    tool = executable(tmp_path / "tool.sh")

    def swap(_request: ApprovalRequest) -> bool:
        replacement = executable(tmp_path / "other.sh", "#!/bin/sh\necho two\n")
        os.replace(replacement, tool)
        return True
    session = open_prompt(tmp_path, runtime(policy=ASK) + structured_tool(), approvals="ask",
                          ask=swap)
    outcome = call(session, "run", program=str(tool), arguments=[])
    assert error(outcome)[0] == "executable_changed"


def test_missing_program_is_a_resolution_error_naming_it(tmp_path: Path) -> None:
    session = open_prompt(tmp_path, runtime() + structured_tool())
    code, message = error(call(session, "run", program="no-such-program-x", arguments=[]))
    assert code == "resolution_error" and "no-such-program-x" in message


def test_non_executable_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("x")
    session = open_prompt(tmp_path, runtime() + structured_tool())
    assert error(call(session, "run", program="./plain", arguments=[]))[0] == "resolution_error"


def test_fingerprint_is_cached_by_stat_identity(tmp_path: Path) -> None:
    tool = executable(tmp_path / "t.sh")
    first = fingerprint(str(tool), "t")
    assert HASH_CACHE.get(first.identity) == first.sha256
    executable(tmp_path / "t.sh", "#!/bin/sh\necho changed\n")
    assert fingerprint(str(tool), "t").sha256 != first.sha256


def test_alias_with_pinned_digest_and_trust(tmp_path: Path) -> None:
    tool = executable(tmp_path / "lint.sh")
    digest = fingerprint(str(tool), "lint").sha256
    body = (f'<resolver><executable id="lint" path="{tool}" sha256="{digest.upper()}" '
            'trusted="true"/></resolver>')
    policy = ('<policy default="deny"><rule id="t" action="allow"><trusted_executable/></rule>'
              '</policy>')
    text = runtime(body, policy=policy) + '<tool name="lint" type="shell" runtime="r" ' \
        'executable_ref="lint"/>'
    session = open_prompt(tmp_path, text)
    assert call(session, "lint").text == "one\n"
    tool.chmod(0o777)  # group/other writable: no longer trusted
    assert error(call(session, "lint"))[0] in ("denied", "resolution_error")


def test_symlink_escaping_the_read_roots_is_outside_them(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "escape").symlink_to("/etc")
    caps = ('<capabilities sandbox="preferred"><read path="${workspace}/work"/></capabilities>')
    session = open_prompt(tmp_path, runtime(caps=caps) + structured_tool())
    (work / "ok.txt").write_text("fine")
    assert call(session, "run", program="cat", arguments=["work/ok.txt"]).text == "fine"
    outcome = call(session, "run", program="cat", arguments=["work/escape/hostname"])
    assert error(outcome)[0] == "capability_violation"
    outcome = call(session, "run", program="cat", arguments=["work/../prompt.chatmd"])
    assert error(outcome)[0] == "capability_violation"


def test_symlink_escaping_the_write_roots_is_outside_them(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "link").symlink_to(tmp_path)
    caps = ('<capabilities sandbox="preferred"><read path="${workspace}"/>'
            '<write path="${workspace}/out"/></capabilities>')
    session = open_prompt(tmp_path, runtime(caps=caps) + structured_tool())
    assert call(session, "run", program="touch", arguments=["out/new"]).result is not None
    assert (out / "new").exists()
    outcome = call(session, "run", program="touch", arguments=["out/link/escaped"])
    assert error(outcome)[0] == "capability_violation"
    assert not (tmp_path / "escaped").exists()


def test_powers_are_checked(tmp_path: Path) -> None:
    caps = '<capabilities sandbox="preferred"><read path="${workspace}"/></capabilities>'
    session = open_prompt(tmp_path, runtime(caps=caps) + structured_tool())
    for program in ("sh", "curl", "sudo", "git"):
        assert error(call(session, "run", program=program, arguments=[]))[0] in (
            "capability_violation", "resolution_error")
    assert error(call(session, "run", program="sh", arguments=[]))[0] == "capability_violation"
