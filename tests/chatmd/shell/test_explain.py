"""``explain``: the merged runtime as a readable summary, attributing every setting."""

from __future__ import annotations

import re

import pytest

from chatmd.shell import SUPPORTED_FEATURES, UnknownRuntimeError, explain
from tests.chatmd.shell.support import compile_text

PROMPT = """\
<shell_access id="base" extends="builtin:workspace-development">
  <capabilities network="true"><read path="data"/></capabilities>
  <limits wall_time="30s" idle_time="none"/>
  <policy><rule id="allow-rg" action="allow"><basename value="rg"/></rule></policy>
</shell_access>
<shell_access id="dev" extends="base">
  <environment><set name="LANG" value="C"/></environment>
</shell_access>
<tool name="search" type="shell" runtime="dev" command="rg --json"/>
"""


def line_of(text: str, label: str) -> str:
    match = re.search(rf"^ +{re.escape(label)} .*$", text, re.M)
    assert match is not None, f"no line for {label} in\n{text}"
    return match.group(0)


def test_the_chain_of_layers_is_spelled_out() -> None:
    text = explain(compile_text(PROMPT), "dev")
    assert text.startswith("runtime dev, declared at prompt.chatmd:6:1\n")
    assert "built from: dev <- base <- builtin:workspace-development@1 <- defaults" in text
    assert ("profile: builtin:workspace-development@1 (requested as "
            "builtin:workspace-development)") in text


def test_each_setting_names_the_layer_and_place_that_set_it() -> None:
    text = explain(compile_text(PROMPT), "dev")
    assert line_of(text, "network").split() == ["network", "true", "set", "by", "base",
                                                "(prompt.chatmd:2:17)"]
    assert line_of(text, "sandbox").endswith("set by builtin:workspace-development@1")
    assert line_of(text, "pipefail").endswith("set by defaults")
    assert "none (no limit)" in line_of(text, "idle_time")
    assert line_of(text, "wall_time").split()[1] == "30s"


def test_list_entries_show_who_contributed_them() -> None:
    text = explain(compile_text(PROMPT), "dev")
    assert re.search(r"\$\{workspace\} +set by builtin:workspace-development@1", text)
    assert re.search(r"\$\{source_dir\}/data \(= /prompts/data\) +set by base", text)
    assert re.search(r"set LANG=C +set by dev \(prompt.chatmd:7:16\)", text)
    assert re.search(r"allow-rg: allow when basename is rg +set by base", text)
    assert re.search(r"bubblewrap builtin-bubblewrap when=linux \[applies\]", text)
    assert "tools bound to this runtime: search (fixed)" in text


def test_problems_that_keep_the_runtime_from_compiling_are_listed() -> None:
    compiled = compile_text(PROMPT, features=SUPPORTED_FEATURES - {"shell.backend.bubblewrap.v1"})
    base = explain(compiled, "base")
    assert "problems" in base
    assert "shell.unsupported_feature" in base and "shell.backend.bubblewrap.v1" in base
    dev = explain(compiled, "dev")
    assert re.search(r"shell.backend.bubblewrap.v1 +NOT SUPPORTED +\(runtime dev has the "
                     r"bubblewrap backend builtin-bubblewrap for linux \(from "
                     r"builtin:workspace-development@1\)\)", dev), dev
    assert re.search(r"shell.tool.fixed.v1 +supported", dev)


def test_every_runtime_without_an_id() -> None:
    text = explain(compile_text(PROMPT))
    assert "runtime base, declared" in text and "runtime dev, declared" in text


def test_unknown_and_unresolved_runtimes() -> None:
    with pytest.raises(UnknownRuntimeError, match="runtimes: base, dev"):
        explain(compile_text(PROMPT), "nope")
    broken = compile_text('<shell_access id="a" extends="missing"/>')
    assert "unknown parent runtime: missing" in explain(broken, "a")
