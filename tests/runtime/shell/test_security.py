"""Trusted sources and Ed25519 manifest signatures (shell spec §6.9 step 2), fail closed."""

from __future__ import annotations

import base64
import hashlib
import json
import time
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from chatmd.shell.integration import compile_prompt_shell
from runtime.commands.chatmdc import main
from runtime.shell.errors import InstantiationError
from runtime.shell.host import load_prompt_file, open_shell
from runtime.shell.signature import sign_manifest, signature_payload
from tests.runtime.shell.support import call, host_env, runtime, structured_tool

TEXT = runtime() + structured_tool()
NOW = int(time.time())
FULL_POWERS = {"network": False, "child_processes": True, "arbitrary_code": True,
               "privilege_change": False, "external_backends": False,
               "executable_hooks": False, "model_reviewers": False, "durable_approvals": False}


def write_prompt(tmp_path: Path, text: str = TEXT) -> Path:
    path = tmp_path / "prompt.chatmd"
    path.write_text(text + "\n<user>hi</user>\n", encoding="utf-8")
    return path


def manifest(path: Path) -> tuple[dict[str, Any], str]:
    compiled, diagnostics = compile_prompt_shell(load_prompt_file(path))
    assert compiled is not None and compiled.manifest is not None, diagnostics
    return compiled.manifest.payload, compiled.manifest.sha256


def public_b64(key: Ed25519PrivateKey) -> str:
    raw = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return base64.b64encode(raw).decode("ascii")


def sign(tmp_path: Path, path: Path, key: Ed25519PrivateKey, *, key_id: str = "k1",
         audience: tuple[str, ...] = ("ochat",), issued: int = NOW - 10,
         expires: int | None = NOW + 3600, trusted_key: Ed25519PrivateKey | None = None
         ) -> dict[str, str]:
    """Sign ``path``'s manifest; the environment naming the signature and the key set."""
    payload, digest = manifest(path)
    claims = signature_payload(payload, digest, issuer="ops", audience=list(audience),
                               issued_at_unix=issued, expires_at_unix=expires)
    signature = tmp_path / "manifest.sig.json"
    signature.write_text(json.dumps(sign_manifest(claims, key, key_id)), encoding="utf-8")
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps([{"key_id": key_id,
                                 "public_key_base64": public_b64(trusted_key or key)}]),
                    encoding="utf-8")
    return {"OCHAT_SHELL_MANIFEST_SIGNATURE": str(signature),
            "OCHAT_SHELL_MANIFEST_PUBLIC_KEYS": str(keys)}


def trusted(tmp_path: Path, *entries: dict[str, Any]) -> dict[str, str]:
    path = tmp_path / "trusted.json"
    path.write_text(json.dumps({"entries": list(entries)}), encoding="utf-8")
    return {"OCHAT_SHELL_TRUSTED_SOURCES": str(path)}


def entry(root: Path, *digests: str, **extra: Any) -> dict[str, Any]:
    return {"id": "team", "canonical_root": str(root), "source_sha256": list(digests),
            "capabilities": dict(FULL_POWERS), **extra}


def digest_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def open_with(tmp_path: Path, path: Path, **env: str) -> Any:
    return open_shell(path, workspace=tmp_path, approvals="allow", environ=host_env(**env))


def failure(tmp_path: Path, path: Path, **env: str) -> InstantiationError:
    with pytest.raises(InstantiationError) as caught:
        open_with(tmp_path, path, **env)
    return caught.value


def admin(tmp_path: Path, **flags: bool) -> dict[str, str]:
    policy = tmp_path / "admin.json"
    policy.write_text(json.dumps(flags), encoding="utf-8")
    return {"OCHAT_SHELL_ADMIN_POLICY": str(policy)}


# ------------------------------------------------------------------ signatures

def test_a_valid_signature_opens_the_runtime(tmp_path: Path) -> None:
    path = write_prompt(tmp_path)
    env = sign(tmp_path, path, Ed25519PrivateKey.generate())
    session = open_with(tmp_path, path, **env, **admin(tmp_path, require_signature=True))
    assert call(session, "run", program="echo", arguments=["signed"]).text == "signed\n"


def test_an_edited_prompt_no_longer_matches_its_signature(tmp_path: Path) -> None:
    path = write_prompt(tmp_path)
    env = sign(tmp_path, path, Ed25519PrivateKey.generate())
    # whitespace: same manifest digest (provenance is not semantic), another source digest
    write_prompt(tmp_path, TEXT + "\n")
    error = failure(tmp_path, path, **env)
    assert error.code == "shell.signature_payload_mismatch"
    assert "imported_source_sha256" in error.message
    write_prompt(tmp_path, TEXT.replace('wall_time="1s"', 'wall_time="2s"'))
    error = failure(tmp_path, path, **env)
    assert error.code == "shell.signature_payload_mismatch"
    assert "canonical_manifest_sha256" in error.message


def test_a_signature_by_another_key_is_invalid(tmp_path: Path) -> None:
    path = write_prompt(tmp_path)
    env = sign(tmp_path, path, Ed25519PrivateKey.generate(),
               trusted_key=Ed25519PrivateKey.generate())
    assert failure(tmp_path, path, **env).code == "shell.signature_invalid"


def test_a_tampered_claim_breaks_the_signature(tmp_path: Path) -> None:
    path = write_prompt(tmp_path)
    env = sign(tmp_path, path, Ed25519PrivateKey.generate())
    document = json.loads(Path(env["OCHAT_SHELL_MANIFEST_SIGNATURE"]).read_text())
    document["payload"]["issuer"] = "someone else"
    Path(env["OCHAT_SHELL_MANIFEST_SIGNATURE"]).write_text(json.dumps(document))
    assert failure(tmp_path, path, **env).code == "shell.signature_invalid"


@pytest.mark.parametrize(("options", "extra_env", "code"), [
    ({"audience": ("other",)}, {}, "shell.signature_audience"),
    ({"expires": NOW - 5}, {}, "shell.signature_expired"),
    ({"issued": NOW + 3600}, {}, "shell.signature_not_yet_valid"),
    ({"audience": ("ochat",)}, {"OCHAT_SHELL_SIGNATURE_AUDIENCE": "ci"},
     "shell.signature_audience"),
])
def test_claims_are_checked(tmp_path: Path, options: dict[str, Any], extra_env: dict[str, str],
                            code: str) -> None:
    path = write_prompt(tmp_path)
    env = sign(tmp_path, path, Ed25519PrivateKey.generate(), **options)
    assert failure(tmp_path, path, **env, **extra_env).code == code


def test_a_custom_audience_is_accepted_when_signed_for(tmp_path: Path) -> None:
    path = write_prompt(tmp_path)
    env = sign(tmp_path, path, Ed25519PrivateKey.generate(), audience=("ci", "ochat"),
               expires=None)
    open_with(tmp_path, path, **env, OCHAT_SHELL_SIGNATURE_AUDIENCE="ci")


def test_unknown_key_and_broken_documents(tmp_path: Path) -> None:
    path = write_prompt(tmp_path)
    env = sign(tmp_path, path, Ed25519PrivateKey.generate(), key_id="k1")
    keys = Path(env["OCHAT_SHELL_MANIFEST_PUBLIC_KEYS"])
    good_keys = keys.read_text()
    keys.write_text(good_keys.replace('"k1"', '"k2"'))
    assert failure(tmp_path, path, **env).code == "shell.signature_key_missing"
    keys.write_text('[{"key_id": "k1", "public_key_base64": "!!"}]')
    assert failure(tmp_path, path, **env).code == "shell.signature_public_key"
    keys.write_text('[{"key_id": "k1", "public_key_base64": "AAAA"}]')
    assert failure(tmp_path, path, **env).code == "shell.signature_public_key"
    keys.write_text('{"key_id": "k1"}')
    assert failure(tmp_path, path, **env).code == "shell.signature_keys_load_failed"
    keys.write_text(good_keys)
    signature = Path(env["OCHAT_SHELL_MANIFEST_SIGNATURE"])
    document = json.loads(signature.read_text())
    for broken, code in [("not json", "shell.signature_load_failed"),
                         ('{"key_id": "k1", "key_id": "k1"}', "shell.signature_load_failed"),
                         (json.dumps({**document, "extra": 1}), "shell.signature_load_failed"),
                         (json.dumps({**document, "signature_base64": "@@"}),
                          "shell.signature_encoding"),
                         (json.dumps({**document, "algorithm": "rsa"}),
                          "shell.signature_algorithm")]:
        signature.write_text(broken)
        assert failure(tmp_path, path, **env).code == code, broken


def test_half_configured_or_required_but_missing(tmp_path: Path) -> None:
    path = write_prompt(tmp_path)
    env = sign(tmp_path, path, Ed25519PrivateKey.generate())
    missing = "shell.manifest_security_configuration_missing"
    only_signature = {"OCHAT_SHELL_MANIFEST_SIGNATURE": env["OCHAT_SHELL_MANIFEST_SIGNATURE"]}
    assert failure(tmp_path, path, **only_signature).code == missing
    only_keys = {"OCHAT_SHELL_MANIFEST_PUBLIC_KEYS": env["OCHAT_SHELL_MANIFEST_PUBLIC_KEYS"]}
    assert failure(tmp_path, path, **only_keys).code == missing
    error = failure(tmp_path, path, **admin(tmp_path, require_signature=True))
    assert error.code == missing and "OCHAT_SHELL_MANIFEST_SIGNATURE" in error.message
    error = failure(tmp_path, path, **admin(tmp_path, require_trusted_source=True))
    assert error.code == missing and "OCHAT_SHELL_TRUSTED_SOURCES" in error.message


# ------------------------------------------------------------------ trusted sources

def test_a_trusted_source_opens_the_runtime(tmp_path: Path) -> None:
    path = write_prompt(tmp_path)
    env = trusted(tmp_path, entry(tmp_path, digest_of(path)))
    session = open_with(tmp_path, path, **env, **admin(tmp_path, require_trusted_source=True))
    assert call(session, "run", program="echo", arguments=["ok"]).text == "ok\n"


@pytest.mark.parametrize("change", ["digest", "root", "power", "repository"])
def test_untrusted_sources_are_refused(tmp_path: Path, change: str) -> None:
    path = write_prompt(tmp_path)
    other = tmp_path / "elsewhere"
    other.mkdir()
    listed = entry(other if change == "root" else tmp_path,
                   "0" * 64 if change == "digest" else digest_of(path))
    if change == "power":
        listed["capabilities"]["arbitrary_code"] = False
    if change == "repository":
        listed["repository_identity"] = "git@host:team/agents"
    error = failure(tmp_path, path, **trusted(tmp_path, listed))
    assert error.code == "shell.trusted_source_mismatch"
    assert str(path) in error.message or "prompt.chatmd" in error.message
    if change == "power":
        assert "arbitrary_code" in error.message


def test_repository_identity_and_signer_must_match(tmp_path: Path) -> None:
    path = write_prompt(tmp_path)
    key = Ed25519PrivateKey.generate()
    signed = sign(tmp_path, path, key, key_id="release")
    listed = entry(tmp_path, digest_of(path), repository_identity="repo-a",
                   signer_ids=["release"])
    env = trusted(tmp_path, listed)
    repo = {"OCHAT_SHELL_REPOSITORY_IDENTITY": "repo-a"}
    assert failure(tmp_path, path, **env, **repo).code == "shell.trusted_source_mismatch"
    open_with(tmp_path, path, **env, **repo, **signed)
    assert failure(tmp_path, path, **env, **signed).code == "shell.trusted_source_mismatch"


def test_a_src_hook_script_is_a_source_of_its_own(tmp_path: Path) -> None:
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    script = hooks / "m.chatml"
    script.write_text('let initial_state = 0\nlet match_command event state = '
                      'Task.bind(Match.yes("ok"), fun u -> Task.pure(state))\n',
                      encoding="utf-8")
    policy = ('<policy default="deny"><rule id="a" action="allow"><chatml_match script="m"/>'
              '</rule></policy>')
    text = ('<script id="m" language="chatml" kind="shell_matcher" src="hooks/m.chatml"/>\n'
            + runtime(policy=policy) + structured_tool())
    path = write_prompt(tmp_path, text)
    only_prompt = trusted(tmp_path, entry(tmp_path, digest_of(path)))
    error = failure(tmp_path, path, **only_prompt)
    assert error.code == "shell.trusted_source_mismatch" and "m.chatml" in error.message
    both = trusted(tmp_path, entry(tmp_path, digest_of(path), digest_of(script)))
    session = open_with(tmp_path, path, **both)
    assert call(session, "run", program="echo", arguments=["hooked"]).text == "hooked\n"


@pytest.mark.parametrize("document", [
    "[]", '{"entries": {}}', '{"entries": [{"id": "x"}]}',
    '{"entries": [], "extra": 1}',
    json.dumps({"entries": [{"id": "t", "canonical_root": "relative", "source_sha256": [],
                             "capabilities": FULL_POWERS}]}),
    json.dumps({"entries": [{"id": "t", "canonical_root": "/", "source_sha256": [],
                             "capabilities": {"network": True}}]}),
])
def test_a_malformed_trusted_source_policy_fails_closed(tmp_path: Path, document: str) -> None:
    path = write_prompt(tmp_path)
    policy = tmp_path / "trusted.json"
    policy.write_text(document, encoding="utf-8")
    error = failure(tmp_path, path, OCHAT_SHELL_TRUSTED_SOURCES=str(policy))
    assert error.code == "shell.trusted_source_load_failed"


def test_shell_exec_reports_the_security_failure(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = write_prompt(tmp_path)
    monkeypatch.setenv("OCHAT_SHELL_TRUSTED_SOURCES", str(tmp_path / "missing.json"))
    status = main(["shell", "exec", str(path), "run", "--args",
                   '{"program": "echo", "arguments": ["x"]}', "--workspace", str(tmp_path),
                   "--approvals", "allow"])
    captured = capsys.readouterr()
    assert status == 1 and captured.out == ""
    assert "shell.trusted_source_load_failed" in captured.err


def test_a_script_mode_tool_script_is_a_source_too(tmp_path: Path) -> None:
    job = tmp_path / "tools" / "job.sh"
    job.parent.mkdir()
    job.write_text("#!/bin/sh\necho job\n")
    job.chmod(0o755)
    text = runtime() + ('<tool name="job" type="shell" mode="script" runtime="r" '
                        'script="tools/job.sh"/>')
    path = write_prompt(tmp_path, text)
    error = failure(tmp_path, path, **trusted(tmp_path, entry(tmp_path, digest_of(path))))
    assert error.code == "shell.trusted_source_mismatch" and "job.sh" in error.message
    both = trusted(tmp_path, entry(tmp_path, digest_of(path), digest_of(job)))
    assert call(open_with(tmp_path, path, **both), "job").text == "job\n"


def test_an_executable_hook_is_a_source_too(tmp_path: Path) -> None:
    from tests.runtime.shell.test_exec_hooks import WORKER, hook_file

    hook = hook_file(tmp_path)
    body = (f'<reviewers><reviewer id="x" kind="executable" executable="{hook}" '
            'runtime="w"/></reviewers>')
    powers = {**FULL_POWERS, "executable_hooks": True}
    path = write_prompt(tmp_path, WORKER + runtime(body, policy='<policy default="ask"/>')
                        + structured_tool())
    only_prompt = trusted(tmp_path, entry(tmp_path, digest_of(path), capabilities=powers))
    error = failure(tmp_path, path, **only_prompt)
    assert error.code == "shell.trusted_source_mismatch" and "hook.py" in error.message
    both = trusted(tmp_path, entry(tmp_path, digest_of(path), digest_of(hook),
                                   capabilities=powers))
    session = open_with(tmp_path, path, **both)
    assert call(session, "run", program="echo", arguments=["yes"]).text == "yes\n"


def test_executable_hooks_need_the_executable_hooks_ceiling(tmp_path: Path) -> None:
    from tests.runtime.shell.test_exec_hooks import WORKER, hook_file

    hook = hook_file(tmp_path)
    body = (f'<reviewers><reviewer id="x" kind="executable" executable="{hook}" '
            'runtime="w"/></reviewers>')
    path = write_prompt(tmp_path, WORKER + runtime(body) + structured_tool())
    error = failure(tmp_path, path, **trusted(tmp_path, entry(tmp_path, digest_of(path),
                                                              digest_of(hook))))
    assert error.code == "shell.trusted_source_mismatch"
    assert "executable_hooks" in error.message
