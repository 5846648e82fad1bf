"""read_file: confinement to declared roots, regular UTF-8 files only, slices, truncation."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from chatmd.frontend import load_prompt_text
from chatmd.request import compile_request
from chatmd.request_context import ConversionContext
from runtime.builtin_tools import ToolEnv
from runtime.builtin_tools.text_files import MAX_OUTPUT_BYTES
from tests.runtime.tools.support import call, code_of, prompt_tools, runner_for

ROOTS = ('<tool name="read_file" description="Read the project.">\n'
         '  <read id="src" path="${workspace}/src" description="Sources"/>\n'
         '  <read id="docs" path="${workspace}/docs"/>\n</tool>')


@pytest.fixture()
def env(tmp_path: Path) -> ToolEnv:
    workspace = tmp_path / "ws"
    (workspace / "src" / "pkg").mkdir(parents=True)
    (workspace / "docs").mkdir()
    (workspace / "src" / "main.py").write_text("line 0\nline 1\nline 2\nline 3\n")
    (workspace / "docs" / "guide.md").write_text("# Guide\n")
    (workspace / "secret.txt").write_text("top secret\n")
    (tmp_path / "outside.txt").write_text("outside\n")
    return ToolEnv(workspace=workspace, prompt_dir=workspace)


def test_reads_relative_to_a_root_and_by_launch_directory(env: ToolEnv) -> None:
    run = runner_for(ROOTS, env)
    assert call(run, root="src", file="main.py") == "line 0\nline 1\nline 2\nline 3\n"
    assert call(run, file="docs/guide.md") == "# Guide\n"
    assert call(run, path="src/main.py", offset=1, line_count=2) == "line 1\nline 2\n"
    assert call(run, file=str(env.workspace / "docs" / "guide.md")) == "# Guide\n"


def test_the_default_root_is_the_launch_directory(env: ToolEnv) -> None:
    run = runner_for('<tool name="get_contents"/>', env)
    assert call(run, file="secret.txt") == "top secret\n"
    assert code_of(call(run, file="../outside.txt")) == "read_file.outside_roots"


def test_dot_dot_and_absolute_paths_outside_the_roots_are_refused(env: ToolEnv) -> None:
    run = runner_for(ROOTS, env)
    for request in ({"root": "src", "file": "../secret.txt"},
                    {"root": "src", "file": "../docs/guide.md"},
                    {"file": "secret.txt"},
                    {"file": "src/../../outside.txt"},
                    {"file": "/etc/passwd"}):
        output = call(run, **request)
        assert code_of(output) == "read_file.outside_roots", (request, output)
        assert "outside" in output


def test_a_symlink_escaping_a_root_is_refused(env: ToolEnv) -> None:
    link = env.workspace / "src" / "escape.txt"
    link.symlink_to(env.workspace.parent / "outside.txt")
    (env.workspace / "src" / "up").symlink_to(env.workspace.parent)
    run = runner_for(ROOTS, env)
    assert code_of(call(run, root="src", file="escape.txt")) == "read_file.outside_roots"
    assert code_of(call(run, root="src", file="up/outside.txt")) == "read_file.outside_roots"
    inner = env.workspace / "src" / "alias.md"
    inner.symlink_to(env.workspace / "docs" / "guide.md")
    assert call(run, file="src/alias.md") == "# Guide\n"  # resolves inside another root


def test_binary_non_utf8_directories_fifos_and_devices_are_refused(env: ToolEnv) -> None:
    src = env.workspace / "src"
    (src / "image.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    (src / "latin1.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    os.mkfifo(src / "pipe")
    run = runner_for(ROOTS, env)
    assert code_of(call(run, root="src", file="image.bin")) == "read_file.binary_file"
    assert code_of(call(run, root="src", file="latin1.txt")) == "read_file.not_text"
    assert code_of(call(run, root="src", file="pkg")) == "read_file.not_a_file"
    fifo = call(run, root="src", file="pipe")  # must not block on the FIFO
    assert code_of(fifo) == "read_file.not_a_file" and "FIFO" in str(fifo)
    wide = ToolEnv(workspace=Path("/"), prompt_dir=env.prompt_dir)
    device = call(runner_for('<tool name="read_file"/>', wide), file="dev/null")
    assert code_of(device) == "read_file.not_a_file" and "device" in str(device)
    assert code_of(call(run, root="src", file="missing.py")) == "read_file.not_found"


def test_output_is_truncated_at_380928_bytes(env: ToolEnv) -> None:
    line = "é" * 49 + "\n"  # 99 bytes: the cut falls inside a two-byte character
    (env.workspace / "src" / "big.txt").write_text(line * 5000)
    output = call(runner_for(ROOTS, env), root="src", file="big.txt")
    assert isinstance(output, str)
    body, mark = output.rsplit("---\n", 1)
    assert mark == "[File truncated]"
    assert MAX_OUTPUT_BYTES - 2 <= len(body.encode()) <= MAX_OUTPUT_BYTES + 1
    assert (line * 5000).startswith(body.rstrip("\n"))
    exact = "x" * (MAX_OUTPUT_BYTES - 1) + "\n"
    (env.workspace / "src" / "exact.txt").write_text(exact)
    assert call(runner_for(ROOTS, env), root="src", file="exact.txt") == exact


def test_slices_and_argument_errors(env: ToolEnv) -> None:
    run = runner_for(ROOTS, env)
    assert call(run, root="src", file="main.py", offset=3) == "line 3\n"
    assert call(run, root="src", file="main.py", offset=4) == ""
    assert call(run, root="src", file="main.py", line_count=0) == ""
    assert code_of(call(run, root="src", file="main.py", offset=9)) == "read_file.offset_past_end"
    assert code_of(call(run, root="nope", file="main.py")) == "read_file.unknown_root"
    assert code_of(call(run, root="src", file="main.py", offset=-1)) == "tool.invalid_arguments"
    assert code_of(call(run, root="src")) == "tool.invalid_arguments"
    assert code_of(call(run, file="x", colour="red")) == "tool.invalid_arguments"
    assert code_of(run("{not json")) == "tool.invalid_arguments"
    assert code_of(run("[1, 2]")) == "tool.invalid_arguments"
    assert code_of(call(run, file=7)) == "tool.invalid_arguments"


def test_the_description_sent_lists_the_roots_the_runner_uses(env: ToolEnv) -> None:
    prompt = load_prompt_text(ROOTS + "\n<user>hi</user>\n", name="p.chatmd",
                              prompt_dir=str(env.prompt_dir))
    ctx = ConversionContext(prompt_dir=env.prompt_dir, cwd=env.workspace)
    request = compile_request(prompt, ctx).request
    assert request is not None
    (definition,) = request["tools"]
    description = definition["description"]
    real = os.path.realpath(env.workspace)
    assert f"- src: {real}/src — Sources" in description
    assert f"- docs: {real}/docs" in description
    assert definition["parameters"]["properties"]["root"]["enum"] == ["src", "docs"]
    assert prompt_tools(ROOTS, env.prompt_dir)[0] == prompt.tools[0]
    run = runner_for(ROOTS, env)
    assert json.dumps(call(run, root="docs", file="guide.md")) == json.dumps("# Guide\n")


def test_a_last_line_without_line_break_counts_as_a_line(env: ToolEnv) -> None:
    (env.workspace / "src" / "short.txt").write_text("a\nb")
    run = runner_for(ROOTS, env)
    assert call(run, root="src", file="short.txt", offset=1) == "b"
    assert call(run, root="src", file="short.txt", offset=2) == ""
    past = call(run, root="src", file="short.txt", offset=3)
    assert code_of(past) == "read_file.offset_past_end" and "has 2 lines" in str(past)
    assert call(run, root="src", file="short.txt", line_count=1) == "a\n"
