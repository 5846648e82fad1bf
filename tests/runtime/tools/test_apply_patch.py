"""apply_patch: V4A add / update / move / delete, all-or-nothing, confinement, errors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runtime.builtin_tools import ToolEnv
from runtime.builtin_tools.apply_patch import Change, commit
from runtime.builtin_tools.failures import ToolFailure
from runtime.builtin_tools.patch_parse import parse_patch
from runtime.tools import Runner
from tests.runtime.tools.support import code_of, runner_for

MAIN = "def greet(name):\n    print('hello', name)\n\n\ndef main():\n    greet('world')\n"


@pytest.fixture()
def env(tmp_path: Path) -> ToolEnv:
    workspace = tmp_path / "ws"
    (workspace / "src").mkdir(parents=True)
    (workspace / "src" / "main.py").write_text(MAIN)
    (workspace / "old.txt").write_text("obsolete\n")
    (tmp_path / "outside.txt").write_text("outside\n")
    return ToolEnv(workspace=workspace, prompt_dir=workspace)


@pytest.fixture()
def run(env: ToolEnv) -> Runner:
    return runner_for('<tool name="apply_patch"/>', env)


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def test_add_update_delete_and_move_in_one_patch(env: ToolEnv, run: Runner) -> None:
    os.chmod(env.workspace / "src" / "main.py", 0o755)
    patch = """*** Begin Patch
*** Add File: docs/notes.md
+# Notes
+
+first
*** Update File: src/main.py
*** Move to: src/app.py
@@ def greet(name):
-    print('hello', name)
+    print('hi', name)
@@
 def main():
-    greet('world')
+    greet('patch')
*** Delete File: old.txt
*** End Patch
"""
    output = run(patch)
    assert output == ("Success. Updated the following files:\nA docs/notes.md\n"
                      "M src/main.py -> src/app.py\nD old.txt")
    ws = env.workspace
    assert (ws / "docs" / "notes.md").read_text() == "# Notes\n\nfirst\n"
    assert (ws / "src" / "app.py").read_text() == MAIN.replace("'hello'", "'hi'").replace(
        "'world'", "'patch'")
    assert os.stat(ws / "src" / "app.py").st_mode & 0o777 == 0o755
    assert not (ws / "src" / "main.py").exists()
    assert not (ws / "old.txt").exists()


def test_a_non_matching_hunk_changes_nothing_and_names_file_and_context(
        env: ToolEnv, run: Runner) -> None:
    before = snapshot(env.workspace)
    output = run("""*** Begin Patch
*** Add File: created.txt
+new
*** Delete File: old.txt
*** Update File: src/main.py
@@
 def main():
-    greet('someone else')
+    greet('x')
*** End Patch""")
    assert code_of(output) == "apply_patch.hunk_mismatch"
    assert "src/main.py" in str(output) and "def main():" in str(output)
    assert snapshot(env.workspace) == before


def test_matching_tolerates_whitespace_and_typographic_quotes(env: ToolEnv, run: Runner) -> None:
    output = run("*** Begin Patch\n*** Update File: src/main.py\n"
                 "@@\n def greet(name):   \n-    print(\u2018hello\u2019, name)\n"
                 "+    print('hey', name)\n*** End Patch")
    assert str(output).startswith("Success.")
    assert "print('hey', name)" in (env.workspace / "src" / "main.py").read_text()


def test_end_of_file_hunks_and_pure_additions(env: ToolEnv, run: Runner) -> None:
    (env.workspace / "list.txt").write_text("a\nb\na\nb\n")
    assert str(run("*** Begin Patch\n*** Update File: list.txt\n@@\n a\n-b\n+B\n"
                   "*** End of File\n*** End Patch")).startswith("Success.")
    assert (env.workspace / "list.txt").read_text() == "a\nb\na\nB\n"
    assert str(run("*** Begin Patch\n*** Update File: list.txt\n@@\n+tail\n"
                   "*** End Patch")).startswith("Success.")
    assert (env.workspace / "list.txt").read_text() == "a\nb\na\nB\ntail\n"


def test_crlf_files_keep_their_line_ends(env: ToolEnv, run: Runner) -> None:
    (env.workspace / "win.txt").write_bytes(b"one\r\ntwo\r\n")
    run("*** Begin Patch\n*** Update File: win.txt\n@@\n one\n-two\n+2\n*** End Patch")
    assert (env.workspace / "win.txt").read_bytes() == b"one\r\n2\r\n"


def test_paths_are_confined_to_the_workspace(env: ToolEnv, run: Runner) -> None:
    (env.workspace / "out").symlink_to(env.workspace.parent)
    for path in ("../escape.txt", "out/escape.txt", "/tmp/escape.txt", "src/../../x.txt"):
        output = run(f"*** Begin Patch\n*** Add File: {path}\n+x\n*** End Patch")
        assert code_of(output) == "apply_patch.outside_workspace", path
    output = run("*** Begin Patch\n*** Delete File: out/outside.txt\n*** End Patch")
    assert code_of(output) == "apply_patch.outside_workspace"
    output = run("*** Begin Patch\n*** Update File: old.txt\n*** Move to: ../moved.txt\n"
                 "*** End Patch")
    assert code_of(output) == "apply_patch.outside_workspace"
    assert (env.workspace.parent / "outside.txt").exists()
    assert (env.workspace / "old.txt").exists()
    assert not (env.workspace.parent / "escape.txt").exists()


def test_existence_errors(env: ToolEnv, run: Runner) -> None:
    cases = {
        "*** Add File: old.txt\n+x": "apply_patch.file_exists",
        "*** Delete File: missing.txt": "apply_patch.not_found",
        "*** Update File: missing.txt\n@@\n-x\n+y": "apply_patch.not_found",
        "*** Delete File: src": "apply_patch.not_a_file",
        "*** Update File: old.txt\n*** Move to: src/main.py": "apply_patch.file_exists",
        "*** Add File: old.txt/inner.txt\n+x": "apply_patch.not_a_directory",
        "*** Delete File: old.txt\n*** Delete File: ./old.txt": "apply_patch.duplicate_path",
    }
    before = snapshot(env.workspace)
    for body, code in cases.items():
        output = run(f"*** Begin Patch\n{body}\n*** End Patch")
        assert code_of(output) == code, (body, output)
    assert snapshot(env.workspace) == before


@pytest.mark.parametrize("text", [
    "",
    "*** Add File: x\n+y\n*** End Patch",
    "*** Begin Patch\n*** Add File: x\n+y",
    "*** Begin Patch\n*** End Patch",
    "*** Begin Patch\n*** Frobnicate File: x\n*** End Patch",
    "*** Begin Patch\n*** Add File: x\nno plus\n*** End Patch",
    "*** Begin Patch\n*** Update File: x\n@@\n?weird\n*** End Patch",
    "*** Begin Patch\n*** Update File: x\n*** End Patch",
    "*** Begin Patch\n*** Add File: \n+y\n*** End Patch",
    "*** Begin Patch\n*** Delete File: x\n*** End Patch\ntrailing",
])
def test_malformed_patches_are_outputs(run: Runner, text: str) -> None:
    output = run(text)
    assert code_of(output) == "apply_patch.invalid_patch"
    assert "line " in str(output)


def test_parse_is_lenient_where_meaning_is_plain() -> None:
    (update,) = parse_patch("\n*** Begin Patch\r\n*** Update File: a\r\n x\r\n\r\n-y\r\n"
                            "*** End Patch\r\n\n")
    assert update.hunks[0].lines == ((" ", "x"), (" ", ""), ("-", "y"))  # type: ignore[union-attr]


def test_json_wrapped_patch_is_accepted(env: ToolEnv, run: Runner) -> None:
    output = run('{"input": "*** Begin Patch\\n*** Delete File: old.txt\\n*** End Patch"}')
    assert str(output).startswith("Success.")


def test_a_failed_write_restores_every_file(tmp_path: Path) -> None:
    kept = tmp_path / "kept.txt"
    kept.write_text("original\n")
    gone = tmp_path / "gone.txt"
    gone.write_text("still here\n")
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the change expects a folder\n")  # fails even for root
    changes = [Change(str(kept), "kept.txt", b"changed\n", b"original\n", 0o644),
               Change(str(tmp_path / "fresh" / "new.txt"), "fresh/new.txt", b"new\n", None),
               Change(str(blocked / "x.txt"), "blocked/x.txt", b"x\n", None),
               Change(str(gone), "gone.txt", None, b"still here\n", 0o644)]
    with pytest.raises(ToolFailure) as failure:
        commit(changes)
    assert failure.value.code == "apply_patch.write_failed"
    assert "blocked/x.txt" in failure.value.message
    assert kept.read_text() == "original\n"
    assert gone.read_text() == "still here\n"
    assert not (tmp_path / "fresh").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocked", "gone.txt", "kept.txt"]


def test_a_move_to_the_same_file_is_an_update(env: ToolEnv, run: Runner) -> None:
    output = run("*** Begin Patch\n*** Update File: old.txt\n*** Move to: ./old.txt\n@@\n"
                 "-obsolete\n+current\n*** End Patch")
    assert str(output).startswith("Success.")
    assert (env.workspace / "old.txt").read_text() == "current\n"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["*** Begin Patch", "*** End Patch", "*** Add File: a",
                                 "*** Update File: a", "*** Delete File: a", "*** Move to: b",
                                 "*** End of File", "@@", "@@ x", " x", "-x", "+x", "", "junk",
                                 "\r"]), max_size=12))
def test_any_patch_text_parses_or_fails_with_a_code(lines: list[str]) -> None:
    try:
        operations = parse_patch("\n".join(lines))
    except ToolFailure as failure:
        assert failure.code == "apply_patch.invalid_patch"
    else:
        assert operations
