"""``chatmdc run`` with the built-in tools: read_file roots and confinement, apply_patch."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.runtime.driver import loopback as lb
from tests.runtime.driver.support import events, parses, run_inprocess, write

Capsys = pytest.CaptureFixture[str]


def run(capsys: Capsys, server: lb.LoopbackServer, *args: str):  # type: ignore[no-untyped-def]
    return run_inprocess(capsys, ["run", *args, "--base-url", server.base_url])


def outputs_of(request: dict[str, object]) -> dict[str, str]:
    return {item["call_id"]: item["output"] for item in request["input"]  # type: ignore[index,union-attr]
            if item.get("type", "").endswith("_output")}  # type: ignore[union-attr]


def test_read_file_within_roots_and_a_symlink_escape_refused(tmp_path: Path,
                                                             capsys: Capsys) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    write(docs / "guide.md", "line one\nline two\n")
    secret = tmp_path / "secret.txt"
    write(secret, "top secret")
    os.symlink(secret, docs / "escape.md")
    prompt = write(tmp_path / "p.chatmd",
                   '<config model="m"/>\n<tool name="read_file">'
                   '<read id="docs" path="docs" description="the guides"/></tool>\n'
                   "<user>Read the guide</user>\n")
    replies = [lb.calls(lb.call_item("read_file", json.dumps({"file": "guide.md",
                                                              "root": "docs"}), "c1"),
                        lb.call_item("read_file", json.dumps({"file": "escape.md",
                                                              "root": "docs"}), "c2")),
               lb.text("The guide has two lines.")]
    with lb.LoopbackServer(replies) as server:
        ran = run(capsys, server, str(prompt), "--events", "ev.jsonl")
    assert ran.code == 0, ran.err
    tool = server.requests[0]["tools"][0]
    assert tool["name"] == "read_file" and str(docs.resolve()) in tool["description"]
    outputs = outputs_of(server.requests[1])
    assert "line one\nline two" in outputs["c1"]
    assert "top secret" not in outputs["c2"] and "outside" in outputs["c2"]
    finished = [e for e in events(tmp_path / "ev.jsonl") if e["event"] == "tool_finished"]
    assert sorted(e["ok"] for e in finished) == [False, True]
    assert "top secret" not in prompt.read_text() + "".join(
        p.read_text() for p in (tmp_path / ".chatmd").glob("*.json"))
    parses(prompt)


PATCH_OK = """*** Begin Patch
*** Add File: notes/new.txt
+hello
*** Update File: app.py
@@ def main():
-    return 1
+    return 2
*** End Patch"""

PATCH_BAD = """*** Begin Patch
*** Add File: other.txt
+should not exist
*** Update File: app.py
@@ def nowhere():
-    x
+    y
*** End Patch"""


def test_apply_patch_in_the_workspace_and_all_or_nothing(tmp_path: Path,
                                                         capsys: Capsys) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    write(workspace / "app.py", "def main():\n    return 1\n")
    prompt = write(tmp_path / "p.chatmd", '<config model="m"/>\n<tool name="apply_patch"/>\n'
                   "<user>Fix app.py</user>\n")
    replies = [lb.calls(lb.custom_call_item("apply_patch", PATCH_OK, "c1")),
               lb.calls(lb.custom_call_item("apply_patch", PATCH_BAD, "c2")),
               lb.text("Patched once; the second patch did not apply.")]
    with lb.LoopbackServer(replies) as server:
        ran = run(capsys, server, str(prompt), "--workspace", str(workspace))
    assert ran.code == 0, ran.err
    assert server.requests[0]["tools"][0]["type"] == "custom"
    assert (workspace / "app.py").read_text() == "def main():\n    return 2\n"
    assert (workspace / "notes" / "new.txt").read_text().rstrip("\n") == "hello"
    failed = outputs_of(server.requests[2])["c2"]
    assert "app.py" in failed and "def nowhere():" in failed
    assert not (workspace / "other.txt").exists()
    text = prompt.read_text()
    assert 'type="custom_tool_call"' in text
    items = parses(prompt).items
    assert sum(1 for item in items if item.kind == "tool_response") == 2
