"""read_directory, append_to_file, find_and_replace and import_image: confinement and results."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from runtime.builtin_tools import ToolEnv, builtin_runner
from runtime.builtin_tools.import_image import MAX_IMAGE_BYTES
from tests.runtime.tools.support import call, code_of, prompt_tools, runner_for

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(20)


@pytest.fixture()
def env(tmp_path: Path) -> ToolEnv:
    workspace = tmp_path / "ws"
    (workspace / "src" / "sub").mkdir(parents=True)
    (workspace / "src" / "a.txt").write_text("alpha\n")
    (workspace / "src" / "b.txt").write_text("beta beta beta\n")
    (tmp_path / "outside.txt").write_text("outside\n")
    (workspace / "link_out").symlink_to(tmp_path)
    return ToolEnv(workspace=workspace, prompt_dir=workspace)


def test_read_directory_lists_one_level_sorted(env: ToolEnv) -> None:
    run = runner_for('<tool name="read_dir"/>', env)
    assert call(run, path="src") == "a.txt\nb.txt\nsub/"
    assert call(run, path=".") == "link_out/\nsrc/"
    assert call(run, path="src/sub") == ""
    assert code_of(call(run, path="..")) == "read_directory.outside_workspace"
    assert code_of(call(run, path="link_out")) == "read_directory.outside_workspace"
    assert code_of(call(run, path="src/a.txt")) == "read_directory.not_a_directory"
    assert code_of(call(run, path="nope")) == "read_directory.not_found"
    assert code_of(call(run)) == "tool.invalid_arguments"


def test_append_to_file_adds_a_newline_before_the_text(env: ToolEnv) -> None:
    run = runner_for('<tool name="append_to_file"/>', env)
    target = env.workspace / "src" / "a.txt"
    os.chmod(target, 0o640)
    assert call(run, path="src/a.txt", content="more") == "appended 4 bytes to src/a.txt"
    assert target.read_text() == "alpha\n\nmore"
    assert os.stat(target).st_mode & 0o777 == 0o640
    assert call(run, path="src/new.txt", content="first") == "created src/new.txt (5 bytes)"
    assert (env.workspace / "src" / "new.txt").read_text() == "first"
    assert code_of(call(run, path="nope/x.txt", content="x")) == "append_to_file.not_found"
    assert code_of(call(run, path="../outside.txt", content="x")) == \
        "append_to_file.outside_workspace"
    assert code_of(call(run, path="link_out/outside.txt", content="x")) == \
        "append_to_file.outside_workspace"
    assert (env.workspace.parent / "outside.txt").read_text() == "outside\n"
    assert code_of(call(run, path="src/sub", content="x")) == "append_to_file.not_a_file"
    (env.workspace / "bin").write_bytes(b"\x00\x01")
    assert code_of(call(run, path="bin", content="x")) == "append_to_file.binary_file"
    assert not [p for p in (env.workspace / "src").iterdir() if p.name.endswith(".tmp")]


def test_find_and_replace_unique_all_and_advice(env: ToolEnv) -> None:
    run = runner_for('<tool name="find_and_replace"/>', env)
    target = env.workspace / "src" / "b.txt"
    output = call(run, path="src/b.txt", find="beta", replace="gamma", all=False)
    assert code_of(output) == "find_and_replace.multiple_matches"
    assert "3 times" in str(output) and "apply_patch" in str(output)
    assert target.read_text() == "beta beta beta\n"
    assert call(run, path="src/b.txt", find="beta", replace="gamma", all=True) == \
        "replaced 3 occurrences in src/b.txt"
    assert target.read_text() == "gamma gamma gamma\n"
    assert call(run, path="src/a.txt", find="alpha\n", replace="", all=False) == \
        "replaced 1 occurrence in src/a.txt"
    assert (env.workspace / "src" / "a.txt").read_text() == ""
    assert code_of(call(run, path="src/b.txt", find="zeta", replace="x", all=True)) == \
        "find_and_replace.not_found"
    assert code_of(call(run, path="src/b.txt", find="", replace="x", all=True)) == \
        "tool.invalid_arguments"
    assert code_of(call(run, path="src/b.txt", find="a", replace="x", all="yes")) == \
        "tool.invalid_arguments"
    assert code_of(call(run, path="../outside.txt", find="out", replace="in", all=True)) == \
        "find_and_replace.outside_workspace"


def test_find_and_replace_edits_a_symlink_target_inside_the_workspace(env: ToolEnv) -> None:
    (env.workspace / "alias.txt").symlink_to(env.workspace / "src" / "a.txt")
    run = runner_for('<tool name="find_and_replace"/>', env)
    call(run, path="alias.txt", find="alpha", replace="omega", all=False)
    assert (env.workspace / "alias.txt").is_symlink()
    assert (env.workspace / "src" / "a.txt").read_text() == "omega\n"


def test_import_image_returns_a_data_uri(env: ToolEnv) -> None:
    (env.workspace / "pic.png").write_bytes(PNG)
    (env.workspace / "notes.txt").write_text("hello")
    run = runner_for('<tool name="import_image"/>', env)
    output = call(run, path="pic.png")
    assert isinstance(output, list)
    (part,) = output
    assert part["type"] == "input_image"
    prefix = "data:image/png;base64,"
    assert part["image_url"].startswith(prefix)
    assert base64.b64decode(part["image_url"][len(prefix):]) == PNG
    assert code_of(call(run, path="notes.txt")) == "import_image.unsupported_format"
    assert code_of(call(run, path="../outside.txt")) == "import_image.outside_workspace"
    assert code_of(call(run, path="missing.png")) == "import_image.not_found"
    with open(env.workspace / "huge.png", "wb") as handle:
        handle.write(PNG)
        handle.truncate(MAX_IMAGE_BYTES + 1)
    assert code_of(call(run, path="huge.png")) == "import_image.too_large"


def test_unimplemented_builtins_raise_key_error(env: ToolEnv) -> None:
    for name in ("fork", "odoc_search", "meta_refine", "query_vector_db"):
        (tool,) = prompt_tools(f'<tool name="{name}"/>', env.prompt_dir)
        with pytest.raises(KeyError):
            builtin_runner(tool, env)  # type: ignore[arg-type]


def test_webpage_is_disabled_without_network(env: ToolEnv) -> None:
    output = call(runner_for('<tool name="webpage_to_markdown"/>', env), url="http://x.test/")
    assert code_of(output) == "webpage_to_markdown.network_disabled"
