"""The manifest digest of a real prompt file: semantic content only (issue 5).

Reordering attributes and reformatting whitespace in the file on disk keeps
``manifest_sha256`` (the provenance -- file hash, positions -- changes and is
kept in the manifest as metadata); changing a value changes the digest.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chatmd.frontend import load_prompt
from chatmd.shell.compile.manifest import PROVENANCE_KEYS, manifest_digest, semantic_content
from chatmd.shell.integration import with_compiled_shell

PROMPT = """<shell_access id="box" cwd="${workspace}" pipefail="true">
  <capabilities sandbox="preferred" network="false"><read path="./data"/></capabilities>
  <limits wall_time="30s" stdout="1MiB"/>
  <backends merge="replace"><direct id="d"/></backends>
  <policy><rule id="ls" action="allow"><basename value="ls"/></rule></policy>
</shell_access>
<tool name="sh" type="shell" mode="chain" runtime="box"/>
<user>hi</user>
"""

#: Same meaning: attributes swapped, whitespace and line breaks changed, element moved down.
REFORMATTED = """<user>hi</user>

<shell_access    pipefail="true"   cwd="${workspace}"    id="box"
><capabilities network="false" sandbox="preferred">
      <read path="./data"/>
  </capabilities>
  <limits stdout="1MiB"    wall_time="30s"/>
  <backends  merge="replace" ><direct   id="d" /></backends>
  <policy>
     <rule action="allow" id="ls"><basename value="ls"/></rule>
  </policy></shell_access>
<tool runtime="box" mode="chain" type="shell" name="sh"/>
"""


def _compiled(folder: Path, text: str) -> tuple[str, dict[str, Any]]:
    path = folder / "agent.chatmd"
    path.write_text(text, encoding="utf-8")
    prompt = with_compiled_shell(load_prompt(path))
    [runtime] = prompt.shell_runtimes
    assert runtime.compiled is not None
    return runtime.compiled["manifest_sha256"], runtime.compiled


def test_reordered_attributes_and_whitespace_keep_the_digest(tmp_path: Path) -> None:
    digest, record = _compiled(tmp_path, PROMPT)
    again, _ = _compiled(tmp_path, PROMPT)
    assert digest == again  # stable across runs
    reformatted, moved = _compiled(tmp_path, REFORMATTED)
    assert reformatted == digest
    assert record["source"] != moved["source"]  # positions and file hash are still recorded
    assert record["source"]["sha256"] != moved["source"]["sha256"]


@pytest.mark.parametrize(("before", "after"), [
    ('wall_time="30s"', 'wall_time="31s"'),
    ('action="allow"', 'action="deny"'),
    ('<read path="./data"/>', '<read path="./other"/>'),
    ('mode="chain"', 'mode="structured"'),
])
def test_a_changed_value_changes_the_digest(tmp_path: Path, before: str, after: str) -> None:
    digest, _ = _compiled(tmp_path, PROMPT)
    edited, _ = _compiled(tmp_path, PROMPT.replace(before, after))
    assert edited != digest


def test_the_same_text_in_another_folder_reads_other_files(tmp_path: Path) -> None:
    # source_dir anchors relative paths, so it is part of the meaning (inside the path value).
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, _ = _compiled(tmp_path / "a", PROMPT)
    second, _ = _compiled(tmp_path / "b", PROMPT)
    assert first != second


def test_only_provenance_is_left_out() -> None:
    source = {"file": "a.chatmd", "start": [1, 1], "end": [1, 30], "sha256": "ab",
              "source_dir": "/p", "prompt_dir": "/p", "namespace": None}
    payload = {"runtimes": [{"id": "x", "source": source, "cwd": "/"}],
               "tools": [{"name": "t", "source": {**source, "start": [2, 1]}}],
               "platform": "linux"}
    kept = {"source_dir": "/p", "prompt_dir": "/p", "namespace": None}
    assert semantic_content(payload) == {"runtimes": [{"id": "x", "source": kept, "cwd": "/"}],
                                         "tools": [{"name": "t", "source": kept}],
                                         "platform": "linux"}
    assert {"file", "start", "end", "sha256"} == PROVENANCE_KEYS
    moved = {**payload, "runtimes": [{"id": "x", "cwd": "/", "source": {
        **source, "file": "b.chatmd", "start": [9, 9], "end": [9, 40], "sha256": "cd"}}]}
    assert manifest_digest(moved) == manifest_digest(payload)
    elsewhere = {**payload, "runtimes": [{"id": "x", "cwd": "/", "source": {
        **source, "prompt_dir": "/q"}}]}
    assert manifest_digest(elsewhere) != manifest_digest(payload)
