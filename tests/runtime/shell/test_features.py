"""Advertise exactly what runs (shell spec §6.7, §11; issue 14).

Every advertised feature has a declaration that needs it, compiles and
instantiates here; the one feature that is not executed (seatbelt) fails
closed: ``shell.unsupported_feature`` at compile time, ``sandbox_unavailable``
if a seatbelt backend ever reaches instantiation, never a direct fallback.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chatmd.frontend import check_prompt
from chatmd.ir import Prompt
from chatmd.shell.compile.features import ALL_FEATURES, SUPPORTED_FEATURES
from chatmd.shell.integration import compile_prompt_shell
from runtime.shell.backends import instantiate_backends
from runtime.shell.errors import InstantiationError
from runtime.shell.host import load_prompt_file, open_shell
from runtime.shell.instance import instantiate_runtime
from runtime.shell.paths import HostDirs
from tests.runtime.shell.support import host_env, open_prompt, runtime, structured_tool

SEATBELT = "shell.backend.seatbelt.v1"


def hook(kind: str, entry: str, action: str) -> str:
    return (f'<script id="{kind}" language="chatml" kind="shell_{kind}">\n'
            f'let initial_state = 0\nlet {entry} event state = '
            f'Task.bind({action}, fun u -> Task.pure(state))\n</script>\n')


WORKER = ('<shell_access id="w" extends="builtin:yolo@1"><policy default="allow"/>'
          '</shell_access>')

#: feature -> (extra runtime body, other declarations, tool)
CASES: dict[str, tuple[str, str, str]] = {
    "shell.tool.fixed.v1": ("", "", '<tool name="t" type="shell" runtime="r" command="echo"/>'),
    "shell.tool.structured.v1": ("", "", structured_tool("t")),
    "shell.tool.chain.v1": ("", "", '<tool name="t" type="shell" mode="chain" runtime="r"/>'),
    "shell.tool.raw.v1": ("", "", '<tool name="t" type="shell" mode="raw" runtime="r" '
                                  'executable="/bin/sh"/>'),
    "shell.tool.script.v1": ("", "", '<tool name="t" type="shell" mode="script" runtime="r" '
                                     'script="job.sh"/>'),
    "shell.backend.direct.v1": ("", "", structured_tool("t")),
    "shell.backend.bubblewrap.v1": ("", "", structured_tool("t")),
    "shell.external_backend.v1": ("", "", structured_tool("t")),
    "shell.resource_limits.v1": ("", "", structured_tool("t")),
    "shell.secret.literal.v1": ('<secrets><literal value="s3cret"/></secrets>', "",
                                structured_tool("t")),
    "shell.chatml.matcher.v1": ("", hook("matcher", "match_command", 'Match.yes("ok")'),
                                structured_tool("t")),
    "shell.chatml.reviewer.v1": (
        '<reviewers><reviewer id="v" kind="chatml" script="reviewer"/></reviewers>',
        hook("reviewer", "review", "Review.approve()"), structured_tool("t")),
    "shell.chatml.before_interceptor.v1": (
        '<interceptors><interceptor id="b" phase="before" script="before_interceptor"/>'
        '</interceptors>', hook("before_interceptor", "before", "Intercept.continue()"),
        structured_tool("t")),
    "shell.chatml.after_interceptor.v1": (
        '<interceptors><interceptor id="a" phase="after" script="after_interceptor"/>'
        '</interceptors>', hook("after_interceptor", "after", "Result.keep()"),
        structured_tool("t")),
    "shell.chatml.effect_analyzer.v1": (
        '<effect_analysis><analyzer id="e" script="effect_analyzer"/></effect_analysis>',
        hook("effect_analyzer", "analyze", "Effect.network()"), structured_tool("t")),
    "shell.chatml.audit_filter.v1": (
        '<audit format="jsonl" path="audit.jsonl"><filter script="audit_filter"/></audit>',
        hook("audit_filter", "filter", "Audit.keep()"), structured_tool("t")),
    "shell.executable_hooks.v1": (
        '<reviewers><reviewer id="x" kind="executable" executable="/bin/cat" runtime="w"/>'
        '</reviewers>', WORKER, structured_tool("t")),
    "shell.model_reviewer.v1": ('<reviewers><reviewer id="m" kind="model" agent="a"/>'
                                '</reviewers>', "", structured_tool("t")),
}

BACKENDS = {
    "shell.backend.bubblewrap.v1": ('<backends merge="replace"><bubblewrap/></backends>',
                                    'sandbox="required"'),
    "shell.external_backend.v1": ('<backends merge="replace"><external_backend id="env" '
                                  'executable="/usr/bin/env"><command_argv/></external_backend>'
                                  '</backends>', 'sandbox="preferred"'),
}


def prompt_text(feature: str) -> str:
    body, others, tool = CASES[feature]
    backends, sandbox = BACKENDS.get(feature, ('<backends merge="replace"><direct/></backends>',
                                               'sandbox="preferred"'))
    caps = (f'<capabilities {sandbox} child_processes="true" arbitrary_code="true">'
            '<read path="${workspace}"/><write path="${workspace}"/></capabilities>')
    limits = ('<limits wall_time="1s" memory="1GiB"/>' if feature == "shell.resource_limits.v1"
              else '<limits wall_time="1s"/>')
    policy = ('<policy default="deny"><rule id="m" action="allow"><chatml_match '
              'script="matcher"/></rule></policy>' if feature == "shell.chatml.matcher.v1"
              else '<policy default="allow"/>')
    return others + runtime(body, caps=caps, backends=backends, limits=limits,
                            policy=policy) + tool


def unchecked(path: Path) -> Prompt:
    """The prompt as loaded, without the shell compile check (the executor compiles it)."""
    result = check_prompt(path, checks=())
    assert result.prompt is not None
    return result.prompt


def test_the_advertised_features_are_every_feature_but_seatbelt() -> None:
    assert ALL_FEATURES - {SEATBELT} == SUPPORTED_FEATURES
    assert set(CASES) == set(SUPPORTED_FEATURES)


@pytest.mark.parametrize("feature", sorted(CASES))
def test_each_advertised_feature_is_needed_compiled_and_instantiated(tmp_path: Path,
                                                                      feature: str) -> None:
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/sh\necho job\n")
    os.chmod(script, 0o755)
    text = prompt_text(feature)
    path = tmp_path / "prompt.chatmd"
    path.write_text(text + "\n<user>hi</user>\n", encoding="utf-8")
    compiled, diagnostics = compile_prompt_shell(load_prompt_file(path), platform="linux")
    assert [d.code for d in diagnostics if d.is_error] == []
    assert compiled is not None and compiled.manifest is not None
    assert feature in compiled.manifest.payload["required_features"]
    session = open_prompt(tmp_path, text)
    assert "t" in session.tools


def test_a_seatbelt_backend_for_this_platform_fails_at_compile_time(tmp_path: Path) -> None:
    text = runtime(backends='<backends merge="replace"><seatbelt when="any"/><direct/>'
                            '</backends>') + structured_tool()
    with pytest.raises(InstantiationError) as caught:  # a prompt file: its check fails first
        open_prompt(tmp_path, text)
    assert caught.value.code == "shell.prompt_invalid"
    assert "shell.unsupported_feature" in caught.value.message and SEATBELT in \
        caught.value.message
    path = tmp_path / "prompt.chatmd"
    with pytest.raises(InstantiationError) as loaded:  # a loaded prompt (the driver's way)
        open_shell(unchecked(path), workspace=tmp_path, approvals="allow", environ=host_env())
    assert loaded.value.code == "shell.unsupported_feature" and SEATBELT in loaded.value.message


def test_on_macos_the_default_runtime_needs_seatbelt_and_fails_closed(tmp_path: Path) -> None:
    path = tmp_path / "p.chatmd"
    path.write_text('<shell_access id="r"/>\n' + structured_tool() + "\n<user>hi</user>\n")
    _compiled, diagnostics = compile_prompt_shell(unchecked(path), platform="macos")
    assert [d.code for d in diagnostics] == ["shell.unsupported_feature"]
    assert SEATBELT in diagnostics[0].message


def test_a_seatbelt_backend_that_reaches_instantiation_is_sandbox_unavailable(
        tmp_path: Path) -> None:
    """Even with the feature check bypassed, seatbelt never runs and never falls back."""
    path = tmp_path / "p.chatmd"
    path.write_text('<shell_access id="r"><capabilities sandbox="required"/>'
                    '<backends merge="replace"><seatbelt id="sb" when="macos"/>'
                    '<direct when="any"/></backends></shell_access>\n'
                    + structured_tool() + "\n<user>hi</user>\n")
    compiled, _ = compile_prompt_shell(unchecked(path), platform="macos",
                                       features=ALL_FEATURES)
    assert compiled is not None and compiled.manifest is not None
    (record,) = compiled.manifest.payload["runtimes"]
    assert instantiate_backends(record["backends"], "macos", str)[0].name == "direct-unsafe"
    folder = str(tmp_path)
    dirs = HostDirs(folder, folder, folder, folder, folder, folder)
    with pytest.raises(InstantiationError) as caught:
        instantiate_runtime(record, compiled.manifest.sha256, dirs, host_env(), "macos")
    assert caught.value.code == "sandbox_unavailable"
    assert "seatbelt backend(s) sb" in caught.value.message
    assert "not implemented" in caught.value.hint
