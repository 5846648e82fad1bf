"""Administrative ceilings (spec §6.9 step 1): loading the policy and reporting violations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatmd.shell import (
    AdminPolicyError,
    admin_policy_from_environment,
    check_admin_ceilings,
    load_admin_policy,
)
from chatmd.shell.declare.values import ValueProblem
from chatmd.shell.secure.admin import parse_admin_policy
from tests.chatmd.shell.support import compile_text

YOLO = ('<shell_access id="y" extends="builtin:yolo@1"><approvals scopes="once,prefix_session"/>'
        "</shell_access>"
        '<tool name="raw" type="shell" mode="raw" runtime="y" executable="/bin/sh"/>')


def codes(policy: dict[str, object], text: str = YOLO) -> list[str]:
    compiled = compile_text(text)
    assert compiled.ok, [str(d) for d in compiled.diagnostics]
    return sorted(d.code for d in check_admin_ceilings(compiled,
                                                       parse_admin_policy(policy, "p.json")))


def test_a_permissive_policy_reports_nothing() -> None:
    assert codes({}) == []


def test_every_violation_is_reported() -> None:
    found = codes({"allow_network": False, "allow_child_processes": False,
                   "allow_arbitrary_code": False, "allow_privilege_change": False,
                   "require_sandbox": True, "allow_direct_backend": False, "allow_yolo": False,
                   "allowed_read_roots": ["${workspace}"], "allowed_write_roots": [],
                   "allowed_approval_scopes": ["once"], "allow_raw_prefix_grants": False,
                   "require_audit": True, "require_durable_audit": True,
                   "limits": {"wall_time": "1m", "memory": "1GiB"}})
    assert found == sorted([
        "shell.admin_network_denied", "shell.admin_child_processes_denied",
        "shell.admin_arbitrary_code_denied", "shell.admin_privilege_change_denied",
        "shell.admin_sandbox_required", "shell.admin_direct_backend_denied",
        "shell.admin_yolo_denied", "shell.admin_read_root_denied",
        "shell.admin_write_root_denied", "shell.admin_approval_scope_denied",
        "shell.admin_raw_prefix_grant_denied", "shell.admin_audit_required",
        "shell.admin_durable_audit_required", "shell.admin_limit_wall_time",
        "shell.admin_limit_memory"])


def test_root_ceilings_compare_the_written_path_expression() -> None:
    text = ('<shell_access id="r" extends="builtin:workspace-readonly@1"><capabilities>'
            '<read path="${workspace}/docs"/><read path_env="HOME"/></capabilities>'
            "</shell_access>")
    compiled = compile_text(text)
    found = check_admin_ceilings(compiled, parse_admin_policy(
        {"allowed_read_roots": ["${workspace}"]}, "p.json"))
    assert [d.code for d in found] == ["shell.admin_read_root_denied"]
    assert "path_env:HOME" in found[0].message


def test_violations_point_at_the_setting_and_carry_a_remediation() -> None:
    text = '<shell_access id="n" extends="builtin:yolo@1">\n<capabilities network="true"/>' \
           "</shell_access>"
    compiled = compile_text(text)
    [diagnostic] = [d for d in check_admin_ceilings(
        compiled, parse_admin_policy({"allow_network": False}, "policy.json"))]
    assert (diagnostic.line, diagnostic.column) == (2, 15)
    assert diagnostic.path == ("runtime", "n", "capabilities.network")
    assert "policy.json" in diagnostic.message and diagnostic.hint


def test_hooks_reviewers_and_hashes() -> None:
    text = ('<shell_access id="w" extends="builtin:yolo@1"/>'
            '<shell_access id="h" extends="builtin:yolo@1"><reviewers>'
            '<reviewer id="m" kind="model" agent="a"/>'
            '<reviewer id="x" kind="executable" executable="/opt/x" runtime="w"/></reviewers>'
            '<resolver><executable id="rg" path="/usr/bin/rg"/></resolver></shell_access>')
    assert codes({"allow_hooks": False, "allowed_reviewer_kinds": ["ui"],
                  "require_executable_hashes": True}, text) == sorted([
        "shell.admin_hooks_denied", "shell.admin_reviewer_denied",
        "shell.admin_reviewer_denied", "shell.admin_executable_hash_required",
        "shell.admin_executable_hash_required"])


@pytest.mark.parametrize(("data", "fragment"), [
    ([], "JSON object"), ({"allow_network": "no"}, "true or false"),
    ({"surprise": True}, "unknown key"), ({"allowed_read_roots": "/"}, "list of strings"),
    ({"limits": {"forever": 1}}, "unknown limit"), ({"limits": {"wall_time": "soon"}}, "soon"),
    ({"require_signature": "yes"}, "true or false"),
])
def test_bad_policies_are_rejected(data: object, fragment: str) -> None:
    with pytest.raises(ValueProblem, match=fragment):
        parse_admin_policy(data, "p.json")


def test_trust_and_signature_requirements_load(tmp_path: Path) -> None:
    """Enforced before instantiation (runtime.shell.security), so the policy accepts them."""
    policy = parse_admin_policy({"require_signature": True, "require_trusted_source": True},
                                "p.json")
    assert policy.flag("require_signature") and policy.flag("require_trusted_source")


def test_loading_from_a_file_and_the_environment(tmp_path: Path) -> None:
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({"source": "corp", "allow_network": False}), encoding="utf-8")
    policy = load_admin_policy(str(path))
    assert policy.source == "corp" and policy.flag("allow_network") is False
    assert admin_policy_from_environment({}) is None
    from_environment = admin_policy_from_environment(
        {"OCHAT_SHELL_ADMIN_POLICY": str(path)})
    assert from_environment == policy


@pytest.mark.parametrize("content", ['{"a": 1, "a": 2}', "{", None])
def test_unreadable_policies_fail_with_a_diagnostic(tmp_path: Path, content: str | None) -> None:
    path = tmp_path / "policy.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(AdminPolicyError) as error:
        load_admin_policy(str(path))
    diagnostic = error.value.diagnostic
    assert diagnostic.code == "shell.admin_policy_load_failed"
    assert diagnostic.file == str(path) and diagnostic.line == 1
