"""Shell spec §10: every conformance checklist statement in scope (1-69, and 72-73 at parse level).

Items 70-71 and 74-89 describe execution (spec §8): they are tested against
real processes in ``tests/runtime/shell/test_checklist_exec.py``; 72 and 73
are also checked here on the chain parser that compilation uses.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from chatmd.shell import (
    ALL_FEATURES,
    SUPPORTED_FEATURES,
    AdminPolicy,
    check_admin_ceilings,
    compile_runtimes,
    tool_schema,
)
from chatmd.shell.compile.chain import ChainError, parse_chain
from chatmd.shell.declare.values import PathExpr
from chatmd.shell.secure.admin import parse_admin_policy
from tests.chatmd.shell.support import codes, compile_text, declarations_of, diagnostics_of

OPEN = ('<capabilities sandbox="preferred"/>'
        '<backends merge="replace"><direct/></backends>')


def runtime_json(text: str, runtime_id: str, **options: Any) -> dict[str, Any]:
    compiled = compile_text(text, **options)
    assert compiled.ok, [str(d) for d in compiled.diagnostics]
    assert compiled.manifest is not None
    for runtime in compiled.manifest.payload["runtimes"]:
        if runtime["id"] == runtime_id:
            return runtime  # type: ignore[no-any-return]
    raise AssertionError(f"no runtime {runtime_id}")


def only(text: str, **options: Any) -> Any:
    """The single diagnostic ``text`` produces."""
    found = diagnostics_of(text, **options)
    assert len(found) == 1, [str(d) for d in found]
    return found[0]


# ------------------------------------------------------------------ declare (1-37)

DECLARE_CASES = [
    ("1", '<shell_access id="x"><wat/></shell_access>', "shell.unexpected_text",
     ("shell_access",)),
    ("2", '<shell_access id="x"><limits/><limits/></shell_access>', "shell.duplicate_section",
     ("shell_access", "limits")),
    ("3", '<shell_access id="x" id="y"/>', "shell.duplicate_attribute", ("shell_access",)),
    ("4", '<shell_access id="x" foo="1"/>', "shell.unknown_attribute", ("shell_access",)),
    ("5", "<shell_access/>", "shell.missing_attribute", ("shell_access", "id")),
    ("6", '<shell_access id="9x"/>', "shell.invalid_runtime_id", ()),
    ("7", '<shell_access id="x"><read path="/"/></shell_access>', "shell.unknown_element",
     ("shell_access",)),
    ("8", '<shell_access id="x"><capabilities network="yes"/></shell_access>',
     "shell.invalid_attribute", ("capabilities", "network")),
    ("9a", '<shell_access id="x"><capabilities><read/></capabilities></shell_access>',
     "shell.invalid_root", ("capabilities", "read")),
    ("9b", '<shell_access id="x"><capabilities><read path="/a" path_env="H"/></capabilities>'
     "</shell_access>", "shell.invalid_root", ("capabilities", "read")),
    ("10", '<shell_access id="x"><capabilities><read path="${nope}/x"/></capabilities>'
     "</shell_access>", "shell.invalid_path", ("capabilities", "read", "path")),
    ("12", '<shell_access id="x"><limits wall_time="30"/></shell_access>',
     "shell.invalid_duration", ("limits", "wall_time")),
    ("14", '<shell_access id="x"><limits stdout="1.5MiB"/></shell_access>',
     "shell.invalid_bytes", ("limits", "stdout")),
    ("17", '<shell_access id="x"><environment><set name="A=B" value="x"/></environment>'
     "</shell_access>", "shell.invalid_env_name", ("environment", "set", "name")),
    ("19", '<shell_access id="x"><policy><rule id="r" action="allow"/></policy></shell_access>',
     "shell.rule_matcher_arity", ("policy", "rule")),
    ("20", '<shell_access id="x"><policy><rule id="r" action="allow"><all></all></rule>'
     "</policy></shell_access>", "shell.empty_matcher", ("policy", "rule", "all")),
    ("21", '<shell_access id="x"><policy><rule id="r" action="allow"><arg value="x"/></rule>'
     "</policy></shell_access>", "shell.unknown_matcher", ("policy", "rule")),
    ("22", '<shell_access id="x"><policy><rule id="r" action="allow">'
     '<argv_prefix values="git,,status"/></rule></policy></shell_access>',
     "shell.invalid_list", ("policy", "rule", "argv_prefix", "values")),
    ("24", '<shell_access id="x"><reviewers><reviewer id="r" kind="robot"/></reviewers>'
     "</shell_access>", "shell.invalid_attribute", ("reviewers", "reviewer", "kind")),
    ("25", '<shell_access id="x"><reviewers><reviewer id="r" kind="chatml"/></reviewers>'
     "</shell_access>", "shell.missing_attribute", ("reviewers", "reviewer", "script")),
    ("26", '<shell_access id="x"><interceptors><interceptor id="i" phase="before"/>'
     "</interceptors></shell_access>", "shell.invalid_extension",
     ("interceptors", "interceptor")),
    ("27", '<shell_access id="x"><interceptors><interceptor id="i" phase="after" script="s">'
     "<match><any_command/></match></interceptor></interceptors></shell_access>",
     "shell.after_interceptor_match", ("interceptors", "interceptor")),
    ("28", '<shell_access id="x"><audit format="jsonl"/></shell_access>',
     "shell.audit_path_required", ("audit", "path")),
    ("29", '<shell_access id="x"><audit/></shell_access>', "shell.missing_attribute",
     ("audit", "format")),
    ("30", '<tool name="x" type="shell" mode="structured" runtime="r" command="pwd"/>',
     "shell.tool_mode_attribute", ()),
    ("31", '<tool name="x" type="shell" mode="structured" runtime="r">'
     '<arguments mode="none"/></tool>', "shell.tool_mode_child", ()),
    ("32", '<tool name="x" type="shell" runtime="r"/>', "shell.tool_missing_command", ()),
    ("33", '<tool name="x" type="shell" runtime="r" command="pwd" executable_ref="e"/>',
     "shell.tool_conflicting_command", ()),
    ("34", '<tool name="x" type="shell" runtime="r" command="pwd"><command program="ls"/>'
     "</tool>", "shell.tool_conflicting_command", ()),
    ("35", '<tool name="x" type="shell" mode="fixed" command="pwd"/>',
     "shell.tool_missing_attribute", ()),
    ("36", '<tool name="x" type="builtin" runtime="r"/>', "shell.tool_invalid_type", ()),
    ("37", '<tool name="x" type="shell" mode="batch" runtime="r"/>',
     "shell.tool_invalid_mode", ()),
    ("39", '<tool name="x" type="shell" mode="script" runtime="r" script="a.sh" '
     'interpreter="/bin/sh" executable="true"/>', "shell.tool_conflicting_script", ()),
]


@pytest.mark.parametrize(("item", "text", "code", "path"), DECLARE_CASES,
                         ids=[case[0] for case in DECLARE_CASES])
def test_declaration_diagnostic(item: str, text: str, code: str, path: tuple[str, ...]) -> None:
    diagnostic = only(text)
    assert diagnostic.code == code
    assert diagnostic.path == path
    assert diagnostic.line == 1 and diagnostic.column > 0 and diagnostic.file


def test_item_2_message_names_the_section() -> None:
    message = only('<shell_access id="x"><limits/><limits/></shell_access>').message
    assert "duplicate section: limits" in message


def test_item_8_points_at_the_attribute() -> None:
    text = '<shell_access id="x"><capabilities network="yes"/></shell_access>'
    assert only(text).column == text.index("network") + 1


def test_item_11_relative_roots_are_anchored_at_the_declaring_folder() -> None:
    found = declarations_of('<shell_access id="x"><capabilities><read path="data"/>'
                            "</capabilities></shell_access>")
    assert not found.diagnostics
    root = found.runtimes[0].capabilities.reads[0]
    assert root.path == PathExpr("source_dir", "data", "/prompts")
    assert str(root.path) == "${source_dir}/data"


def test_item_13_idle_time_none_clears_the_limit() -> None:
    runtime = runtime_json(f'<shell_access id="x"><limits idle_time="none"/>{OPEN}'
                           "</shell_access>", "x")
    assert runtime["limits"]["idle_time"] is None
    assert runtime["limits"]["wall_time"] == 180.0


def test_item_15_kib_sizes_are_binary() -> None:
    runtime = runtime_json(f'<shell_access id="x"><limits total_output="1500KiB"/>{OPEN}'
                           "</shell_access>", "x")
    assert runtime["limits"]["total_output"] == 1536000


def test_item_16_resource_limits_need_their_feature() -> None:
    text = f'<shell_access id="x"><limits memory="2GiB"/>{OPEN}</shell_access>'
    compiled = compile_text(text)
    assert compiled.ok
    assert "shell.resource_limits.v1" in compiled.manifest.payload["required_features"]
    without = compile_text(text, features=ALL_FEATURES - {"shell.resource_limits.v1"})
    assert [d.code for d in without.diagnostics] == ["shell.unsupported_feature"]
    assert without.diagnostics[0].path == ("features", "shell.resource_limits.v1")
    assert without.manifest is None


def test_item_18_path_env_defaults() -> None:
    found = declarations_of('<shell_access id="x"><environment><path_env name="X"/>'
                            "</environment></shell_access>")
    operation = found.runtimes[0].environment.operations[0]
    assert (operation.position, operation.required, operation.suffix) == ("append", False, None)


def test_item_23_entities_are_decoded_before_validation() -> None:
    found = declarations_of('<shell_access id="x"><policy><rule id="r" action="allow">'
                            '<program_regex value="^echo &quot;x&quot; &amp; y$"/></rule>'
                            "</policy></shell_access>")
    assert found.runtimes[0].policy.rules[0].matcher.value == '^echo "x" & y$'


# ------------------------------------------------------------- tools (38-43)

def tool_json(text: str, name: str) -> dict[str, Any]:
    compiled = compile_text(text)
    assert compiled.ok, [str(d) for d in compiled.diagnostics]
    return next(t for t in compiled.manifest.payload["tools"] if t["name"] == name)


def test_item_38_raw_tools_default_to_dash_c() -> None:
    tool = tool_json(f'<shell_access id="r">{OPEN}</shell_access>'
                     '<tool name="x" type="shell" mode="raw" runtime="r" executable="/bin/sh"/>',
                     "x")
    assert tool["mode"]["arguments_before_script"] == ["-c"]


def test_item_40_script_tool_defaults() -> None:
    tool = tool_json(f'<shell_access id="r">{OPEN}</shell_access>'
                     '<tool name="x" type="shell" mode="script" runtime="r" script="run.sh"/>',
                     "x")
    mode = tool["mode"]
    assert (mode["executable"], mode["fixed_arguments"], mode["max_source_bytes"],
            mode["verification"]) == (True, [], 1048576, "sha256")


def test_item_41_fixed_tools_take_optional_arguments_by_default() -> None:
    found = declarations_of('<tool name="x" type="shell" runtime="r" command="ls"/>')
    tool = found.tools[0]
    assert tool.mode.arguments.mode == "optional"
    schema = tool_schema(tool)
    assert "arguments" in schema["properties"]
    assert "arguments" not in schema.get("required", [])


def test_item_42_legacy_tools_desugar_onto_legacy_custom() -> None:
    compiled = compile_text('<tool name="legacy" command="printf ok"/>')
    assert compiled.ok
    payload = compiled.manifest.payload
    tool = payload["tools"][0]
    assert tool["mode"]["type"] == "fixed"
    assert tool["mode"]["command"] == {"type": "compact", "text": "printf ok"}
    assert (tool["runtime"], tool["rationale"], tool["legacy"]) == ("legacy:custom",
                                                                    "optional", True)
    runtime = payload["runtimes"][0]
    assert runtime["id"] == "legacy:custom"
    capabilities = runtime["capabilities"]
    assert capabilities["sandbox"] == "direct_unsafe"
    assert all(capabilities[p] for p in ("network", "child_processes", "arbitrary_code",
                                         "privilege_change"))
    assert [r["path"]["path"] for r in capabilities["reads"]] == ["/"]
    assert [r["path"]["path"] for r in capabilities["writes"]] == ["/"]
    assert runtime["environment"]["inherit"] == "raw"
    assert runtime["backends"]["backends"] == [
        {"kind": "direct", "id": "legacy-direct", "when": "any", "executable": None,
         "sha256": None, "confinement": None, "options": [], "template": []}]
    assert runtime["policy"]["default"] == "ask"
    assert runtime["approvals"]["provider"] == "ui"


def test_item_43_duplicate_shell_tools() -> None:
    found = diagnostics_of(f'<shell_access id="r">{OPEN}</shell_access>'
                           '<tool name="a" type="shell" mode="chain" runtime="r"/>'
                           '<tool name="a" type="shell" mode="chain" runtime="r"/>')
    assert [(d.code, d.path) for d in found] == [("shell.duplicate_tool", ("tool", "a"))]


def test_item_44_duplicate_runtimes() -> None:
    found = diagnostics_of('<shell_access id="a"/><shell_access id="a"/>')
    assert [(d.code, d.path) for d in found] == [("shell.duplicate_runtime", ("runtime", "a"))]


# --------------------------------------------------------- inheritance (45-54)

def test_item_45_one_cycle_is_reported_once_the_same_way_every_time() -> None:
    forward = diagnostics_of('<shell_access id="a" extends="b"/><shell_access id="b" '
                             'extends="a"/>')
    backward = diagnostics_of('<shell_access id="b" extends="a"/><shell_access id="a" '
                              'extends="b"/>')
    assert [d.code for d in forward] == ["shell.inheritance_cycle"]
    assert forward[0].message.endswith("a -> b -> a")
    assert backward[0].message == forward[0].message


def test_item_46_unknown_parent() -> None:
    diagnostic = only('<shell_access id="a" extends="missing"/>')
    assert diagnostic.code == "shell.unknown_runtime"
    assert "unknown parent runtime: missing" in diagnostic.message
    assert diagnostic.path == ("runtime", "a", "extends")


def test_item_47_yolo_profile() -> None:
    runtime = runtime_json('<shell_access id="a" extends="builtin:yolo"/>', "a")
    assert runtime["requested_profile"] == "builtin:yolo"
    assert runtime["resolved_profile"] == "builtin:yolo@1"
    capabilities = runtime["capabilities"]
    assert capabilities["sandbox"] == "direct_unsafe"
    assert [r["path"]["path"] for r in capabilities["reads"]] == ["/"]
    assert [r["path"]["path"] for r in capabilities["writes"]] == ["/"]
    assert all(capabilities[p] for p in ("network", "child_processes", "arbitrary_code",
                                         "privilege_change"))
    assert runtime["resolver"]["search_paths"] == []
    assert runtime["policy"]["default"] == "allow"
    assert runtime["approvals"]["provider"] == "none"


def test_item_48_alias_and_pinned_profiles_differ_only_in_the_requested_spelling() -> None:
    alias = compile_text('<shell_access id="a" extends="builtin:workspace-development"  />',
                         sha256="0" * 64)
    pinned = compile_text('<shell_access id="a" extends="builtin:workspace-development@1"/>',
                          sha256="0" * 64)
    first, second = alias.manifest.payload["runtimes"][0], pinned.manifest.payload["runtimes"][0]
    assert first["resolved_profile"] == second["resolved_profile"]
    assert alias.manifest.sha256 != pinned.manifest.sha256
    first = dict(first, requested_profile=None, source=None)
    second = dict(second, requested_profile=None, source=None)
    assert first == second


PARENT = ('<shell_access id="p" extends="builtin:workspace-development@1">'
          '<capabilities><read path="/data"/></capabilities>'
          '<resolver><executable id="fd" path="/usr/bin/fd"/>'
          '<executable id="rg" path="/usr/bin/rg"/><executable id="jq" path="/usr/bin/jq"/>'
          "</resolver>"
          '<policy default="deny"><rule id="r1" action="allow"><basename value="ls"/></rule>'
          "</policy>"
          '<reviewers><reviewer id="ui" kind="ui"/></reviewers>'
          "</shell_access>")


def test_item_49_child_scalars_win_and_lists_append() -> None:
    runtime = runtime_json(PARENT + '<shell_access id="c" extends="p">'
                           '<capabilities network="true"/></shell_access>', "c")
    capabilities = runtime["capabilities"]
    assert capabilities["network"] is True
    assert [r["path"] for r in capabilities["reads"]] == [
        {"base": "workspace", "path": ""}, {"base": None, "path": "/data"}]


def test_item_50_override_replaces_in_place() -> None:
    runtime = runtime_json(PARENT + '<shell_access id="c" extends="p"><resolver>'
                           '<executable id="rg" path="/opt/bin/rg" override="true"/>'
                           "</resolver></shell_access>", "c")
    executables = runtime["resolver"]["executables"]
    assert [e["id"] for e in executables] == ["fd", "rg", "jq"]
    assert executables[1]["path"]["path"] == "/opt/bin/rg"
    assert executables[1]["override"] is False


def test_item_51_a_clash_without_override() -> None:
    diagnostic = only(PARENT + '<shell_access id="c" extends="p"><resolver>'
                      '<executable id="rg" path="/opt/bin/rg"/></resolver></shell_access>')
    assert diagnostic.code == "shell.duplicate_named_entry"
    assert diagnostic.path == ("runtime", "c", "resolver.executable")


def test_item_52_policy_replace_drops_rules_and_keeps_the_default() -> None:
    runtime = runtime_json(PARENT + '<shell_access id="c" extends="p"><policy merge="replace">'
                           '<rule id="r2" action="ask"><any_command/></rule></policy>'
                           "</shell_access>", "c")
    assert [r["id"] for r in runtime["policy"]["rules"]] == ["r2"]
    assert runtime["policy"]["default"] == "deny"


def test_item_53_backend_ids_never_override() -> None:
    diagnostic = only('<shell_access id="c" extends="builtin:workspace-development@1">'
                      '<backends><direct id="builtin-direct"/></backends></shell_access>')
    assert diagnostic.code == "shell.duplicate_named_entry"
    assert diagnostic.path == ("runtime", "c", "backends")


def test_item_54_reviewers_are_replaced_wholesale() -> None:
    runtime = runtime_json(PARENT + '<shell_access id="c" extends="p">'
                           '<reviewers merge="append"><reviewer id="m" kind="model" '
                           'agent="triage"/></reviewers></shell_access>', "c")
    assert [r["id"] for r in runtime["reviewers"]["reviewers"]] == ["m"]


# ----------------------------------------------------------- validation (55-65)

def test_item_55_required_sandbox_without_a_confining_backend() -> None:
    diagnostic = only('<shell_access id="x"><capabilities sandbox="required"/>'
                      '<backends merge="replace"><direct/></backends></shell_access>')
    assert diagnostic.code == "shell.incompatible_backend"
    assert diagnostic.path == ("runtime", "x", "backends")


@pytest.mark.parametrize(("body", "code"), [
    ("<arg value='x'/>", "shell.external_backend_command_argv"),
    ("<command_argv/><command_argv/>", "shell.external_backend_command_argv"),
])
def test_item_56_external_backends_need_exactly_one_command_argv(body: str, code: str) -> None:
    text = (f'<shell_access id="x">{OPEN[:-len("</backends>")]}'
            f'<external_backend id="w" executable="/opt/w">{body}</external_backend>'
            "</backends></shell_access>")
    assert codes(text) == [code]


def test_item_56_verified_confinement_cannot_be_claimed() -> None:
    text = (f'<shell_access id="x">{OPEN[:-len("</backends>")]}'
            '<external_backend id="w" executable="/opt/w" confinement="verified">'
            "<command_argv/></external_backend></backends></shell_access>")
    assert codes(text) == ["shell.external_backend_unverifiable"]


def test_item_57_executable_ref_must_name_an_alias_of_the_resolved_runtime() -> None:
    text = (f'<shell_access id="r">{OPEN}</shell_access>'
            '<tool name="x" type="shell" runtime="r" executable_ref="lint"/>')
    diagnostic = only(text)
    assert diagnostic.code == "shell.unknown_executable"
    inherited = (f'<shell_access id="p">{OPEN}<resolver><executable id="lint" '
                 'path="/usr/bin/lint"/></resolver></shell_access><shell_access id="r" '
                 'extends="p"/><tool name="x" type="shell" runtime="r" executable_ref="lint"/>')
    assert codes(inherited) == []


def test_item_58_argument_bounds() -> None:
    text = (f'<shell_access id="r">{OPEN}</shell_access><tool name="x" type="shell" '
            'runtime="r" command="ls"><arguments mode="optional" min_count="3" max_count="1"/>'
            "</tool>")
    assert codes(text) == ["shell.invalid_argument_bounds"]


def test_item_59_tool_runtime_must_exist() -> None:
    diagnostic = only('<tool name="x" type="shell" mode="chain" runtime="nope"/>')
    assert diagnostic.code == "shell.unknown_runtime"
    assert diagnostic.path == ("tool", "x", "runtime")


def test_item_60_moderator_runtime() -> None:
    diagnostic = only('<moderator_runtime shell_runtime="nope"/>')
    assert (diagnostic.code, diagnostic.path) == ("shell.unknown_runtime", ("moderator_runtime",))
    assert codes('<moderator_runtime shell_runtime="a" extra="1"/>') == ["shell.unknown_attribute"]
    assert codes('<moderator_runtime shell_runtime="a">x</moderator_runtime>') == [
        "shell.moderator_runtime_content"]


def test_item_61_worker_runtimes_may_not_form_a_cycle() -> None:
    def hook(worker: str) -> str:
        return (f'<reviewers><reviewer id="h" kind="executable" executable="/opt/h" '
                f'runtime="{worker}"/></reviewers>')

    text = (f'<shell_access id="a">{OPEN}{hook("b")}</shell_access>'
            f'<shell_access id="b">{OPEN}{hook("a")}</shell_access>')
    diagnostic = only(text)
    assert diagnostic.code == "shell.runtime_dependency_cycle"
    assert diagnostic.message == "runtime dependency cycle: a -> b -> a"
    assert diagnostic.path == ("dependencies",)


def test_item_61_an_inherited_hook_forms_a_self_cycle() -> None:
    text = (f'<shell_access id="a">{OPEN}<reviewers><reviewer id="h" kind="executable" '
            'executable="/opt/h" runtime="w"/></reviewers></shell_access>'
            '<shell_access id="w" extends="a"/>')
    assert codes(text) == ["shell.runtime_dependency_cycle"]


MATCHER_RUNTIME = (f'<shell_access id="x">{OPEN}<policy><rule id="r" action="deny">'
                   '<chatml_match script="m"/></rule></policy></shell_access>')


def test_item_62_chatml_match_script_must_exist_with_the_right_kind() -> None:
    assert codes(MATCHER_RUNTIME) == ["shell.unknown_script"]
    wrong = MATCHER_RUNTIME + ('<script language="chatml" kind="shell_reviewer" id="m">'
                               "x</script>")
    diagnostic = only(wrong)
    assert diagnostic.code == "shell.script_kind_mismatch"
    assert "script m has kind shell_reviewer, expected shell_matcher" in diagnostic.message


def test_item_63_unused_scripts_warn_and_compilation_succeeds() -> None:
    compiled = compile_text(f'<shell_access id="x">{OPEN}</shell_access>'
                            '<script language="chatml" kind="shell_matcher" id="m">x</script>')
    assert compiled.ok and compiled.manifest is not None
    assert [(d.code, d.severity.value) for d in compiled.diagnostics] == [
        ("chatmd.unused_script", "warning")]
    assert compiled.manifest.payload["extension_scripts"] == []


def test_item_63_used_scripts_enter_the_manifest() -> None:
    compiled = compile_text(MATCHER_RUNTIME + '<script language="chatml" kind="shell_matcher" '
                            'id="m">x</script>')
    assert compiled.ok and not compiled.diagnostics
    scripts = compiled.manifest.payload["extension_scripts"]
    assert [(s["id"], s["kind"], s["entrypoint"]) for s in scripts] == [
        ("m", "shell_matcher", "match_command")]
    assert {"from_id": "x", "to_id": "script:m", "kind": "chatml_extension"} in (
        compiled.manifest.payload["dependencies"])


def test_item_64_raw_tools_fail_closed_without_their_feature() -> None:
    text = (f'<shell_access id="r">{OPEN}</shell_access>'
            '<tool name="x" type="shell" mode="raw" runtime="r" executable="/bin/sh"/>')
    found = diagnostics_of(text, features=SUPPORTED_FEATURES - {"shell.tool.raw.v1"})
    assert [(d.code, d.path) for d in found] == [("shell.unsupported_feature",
                                                  ("features", "shell.tool.raw.v1"))]
    assert not compile_runtimes([], [], features=SUPPORTED_FEATURES).diagnostics


def test_item_65_literal_secrets_never_enter_the_manifest() -> None:
    compiled = compile_text(f'<shell_access id="x">{OPEN}<secrets><literal value="s3cret"/>'
                            "</secrets></shell_access>")
    text = json.dumps(compiled.manifest.payload)
    assert "<literal-secret>" in text
    assert "s3cret" not in text


# -------------------------------------------------------------- digests (66-67)

RULE_ONE = '<rule id="one" action="allow"><basename value="ls"/></rule>'
RULE_TWO = '<rule id="two" action="deny"><basename value="rm"/></rule>'
RULES = RULE_ONE + RULE_TWO


def digest(text: str) -> str:
    compiled = compile_text(text, sha256="f" * 64)
    assert compiled.ok, [str(d) for d in compiled.diagnostics]
    return compiled.manifest.sha256


def test_item_66_runtime_order_does_not_matter_but_rule_order_does() -> None:
    a = f'<shell_access id="a">{OPEN}</shell_access>'
    b = f'<shell_access id="b">{OPEN}<policy>{RULES}</policy></shell_access>'
    found = declarations_of(a + b, sha256="f" * 64)
    forward = compile_runtimes(found.runtimes, platform="linux", features=ALL_FEATURES)
    backward = compile_runtimes(list(reversed(found.runtimes)), platform="linux",
                                features=ALL_FEATURES)
    assert forward.manifest.sha256 == backward.manifest.sha256
    swapped = f'<shell_access id="b">{OPEN}<policy>{RULE_TWO}{RULE_ONE}</policy></shell_access>'
    assert digest(a + b) != digest(a + swapped)


BASE = ('<shell_access id="x" cwd="${workspace}" pipefail="false">'
        '<capabilities sandbox="preferred" network="false"><read path="/a"/></capabilities>'
        '<resolver><search_path path="/usr/bin"/></resolver>'
        '<environment><set name="A" value="1"/></environment>'
        '<limits wall_time="30s"/>'
        '<backends merge="replace"><direct id="d"/></backends>'
        '<policy><rule id="r" action="allow"><any_command/></rule></policy>'
        '<approvals scopes="once,exact_session"/>'
        '<secrets><from_env name="TOKEN"/></secrets>'
        '<audit format="stderr" content="redacted"/>'
        "</shell_access>"
        '<tool name="t" type="shell" mode="chain"      runtime="x"/>')

#: Edits that keep every position (so only the edited meaning can change the digest).
EDITS = [
    ('cwd="${workspace}"', 'cwd="${cache_dir}"'),
    ('pipefail="false"', 'pipefail="true" '),
    ('network="false"', 'network="true" '),
    ('<read path="/a"/>', '<read path="/b"/>'),
    ('<search_path path="/usr/bin"/>', '<search_path path="/opt/bin"/>'),
    ('value="1"', 'value="2"'),
    ('wall_time="30s"', 'wall_time="31s"'),
    ('<direct id="d"/>', '<direct id="e"/>'),
    ('action="allow"', 'action="ask"  '),
    ('scopes="once,exact_session"', 'scopes="exact_session,once"'),
    ('name="TOKEN"', 'name="OTHER"'),
    ('content="redacted"', 'content="full"    '),
    ('mode="chain"      ', 'mode="structured" '),
]


@pytest.mark.parametrize(("before", "after"), EDITS, ids=[e[1] for e in EDITS])
def test_item_67_every_security_field_changes_the_digest(before: str, after: str) -> None:
    edited = BASE.replace(before, after)
    assert before in BASE and len(edited) == len(BASE)
    assert digest(BASE) != digest(edited)


def test_item_67_reformatting_the_declaring_file_keeps_the_digest() -> None:
    # Issue 5 ("independent of attribute order") wins over §6.8's "even whitespace":
    # the file hash and positions stay in the manifest as provenance, outside the digest.
    first = compile_text(BASE)
    second = compile_text(BASE + " ")
    assert first.manifest.payload != second.manifest.payload  # the provenance differs
    assert first.manifest.sha256 == second.manifest.sha256


# --------------------------------------------------------- namespaces (68)

def test_item_68_imported_declarations_are_qualified() -> None:
    found = declarations_of('<shell_access id="ro" extends="builtin:workspace-readonly@1"/>'
                            '<shell_access id="child" extends="ro"/>'
                            '<tool name="t" type="shell" mode="chain" runtime="ro"/>',
                            namespace="team")
    assert not found.diagnostics
    assert [r.id for r in found.runtimes] == ["team:ro", "team:child"]
    assert found.runtimes[0].extends == "builtin:workspace-readonly@1"
    assert found.runtimes[1].extends == "team:ro"
    assert found.tools[0].runtime == "team:ro"


# -------------------------------------------------------------- admin (69)

def test_item_69_admin_ceilings_report_every_violation() -> None:
    compiled = compile_text('<shell_access id="x"><capabilities sandbox="preferred" '
                            'network="true" privilege_change="true"/>'
                            '<backends merge="replace"><direct/></backends>'
                            '<limits wall_time="10m"/></shell_access>')
    assert compiled.ok
    policy = parse_admin_policy({"allow_network": False, "allow_privilege_change": False,
                                 "require_sandbox": True, "limits": {"wall_time": "5m"}},
                                "policy.json")
    found = check_admin_ceilings(compiled, policy)
    assert sorted(d.code for d in found) == [
        "shell.admin_limit_wall_time", "shell.admin_network_denied",
        "shell.admin_privilege_change_denied", "shell.admin_sandbox_required"]
    network = next(d for d in found if d.code == "shell.admin_network_denied")
    assert "runtime x" in network.message and "policy.json" in network.message
    assert network.hint
    assert check_admin_ceilings(compiled, AdminPolicy()) == []


# --------------------------------------------------- chain parsing (72-73)

def test_item_72_a_pipeline_parses_into_two_commands() -> None:
    chain = parse_chain("printf abc | wc -c")
    assert chain.pipelines[0].commands == (("printf", "abc"), ("wc", "-c"))


@pytest.mark.parametrize(("text", "offset"), [("echo $(id)", 5), ("cat secret > copy", 11),
                                              ("sleep 1 &", 8), ("echo ok |", 0)])
def test_item_73_chain_errors_carry_byte_offsets(text: str, offset: int) -> None:
    with pytest.raises(ChainError) as error:
        parse_chain(text)
    assert error.value.offset == offset
