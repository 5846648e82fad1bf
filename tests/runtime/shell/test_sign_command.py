"""``chatmdc shell keygen`` / ``chatmdc shell sign``: a signature ``chatmdc shell exec`` accepts."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from runtime.commands.chatmdc import main
from tests.runtime.shell.support import runtime, structured_tool


def prompt(tmp_path: Path) -> Path:
    path = tmp_path / "p.chatmd"
    path.write_text(runtime() + structured_tool() + "\n<user>hi</user>\n", encoding="utf-8")
    return path


def test_keygen_sign_and_a_verified_exec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    key = tmp_path / "release.pem"
    assert main(["shell", "keygen", "release", str(key)]) == 0
    entry = json.loads(capsys.readouterr().out)
    assert entry["key_id"] == "release" and len(entry["public_key_base64"]) == 44
    assert stat.S_IMODE(os.stat(key).st_mode) == 0o600
    assert main(["shell", "keygen", "release", str(key)]) == 2  # never overwritten
    capsys.readouterr()
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps([entry]))
    path = prompt(tmp_path)
    signature = tmp_path / "sig.json"
    assert main(["shell", "sign", str(path), "--key", str(key), "--key-id", "release",
                 "--issuer", "ops", "--expires-in", "1h", "-o", str(signature)]) == 0
    document = json.loads(signature.read_text())
    assert document["payload"]["issuer"] == "ops" and document["payload"]["audience"] == [
        "ochat"]
    monkeypatch.setenv("OCHAT_SHELL_MANIFEST_SIGNATURE", str(signature))
    monkeypatch.setenv("OCHAT_SHELL_MANIFEST_PUBLIC_KEYS", str(keys))
    run = ["shell", "exec", str(path), "run", "--args", '{"program": "echo", "arguments": '
           '["signed"]}', "--workspace", str(tmp_path), "--approvals", "allow"]
    assert main(run) == 0 and capsys.readouterr().out == "signed\n"
    path.write_text(path.read_text().replace('wall_time="1s"', 'wall_time="2s"'))
    assert main(run) == 1
    assert "shell.signature_payload_mismatch" in capsys.readouterr().err


def test_sign_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = prompt(tmp_path)
    base = ["shell", "sign", str(path), "--key-id", "k", "--issuer", "ops"]
    assert main([*base, "--key", str(tmp_path / "missing.pem")]) == 2
    not_a_key = tmp_path / "junk.pem"
    not_a_key.write_text("not a key")
    assert main([*base, "--key", str(not_a_key)]) == 2
    key = tmp_path / "k.pem"
    assert main(["shell", "keygen", "k", str(key)]) == 0
    assert main([*base, "--key", str(key), "--expires-in", "soon"]) == 2
    empty = tmp_path / "empty.chatmd"
    empty.write_text("<user>hi</user>\n")
    assert main(["shell", "sign", str(empty), "--key", str(key), "--key-id", "k",
                 "--issuer", "ops"]) == 1
    assert main([*base, "--key", str(key), "-o", str(tmp_path / "no" / "sig.json")]) == 2
    err = capsys.readouterr().err
    assert "cannot use the key" in err and "--expires-in" in err and "no shell runtime" in err
