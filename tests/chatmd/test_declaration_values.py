"""Value parsers of the declaration layer: path expressions, read-root resolution, script
limits, ``ochat-history-id``, config numbers, import keys and confinement."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chatmd.declarations.config import parse_float, parse_integer
from chatmd.declarations.messages import canonical_history_id
from chatmd.declarations.paths import (
    PathExprError,
    parse_path_expr,
    resolve_path_expr,
    resolve_read_roots,
)
from chatmd.declarations.scripts import (
    LimitError,
    parse_byte_size,
    parse_duration,
    parse_positive_count,
)
from chatmd.ir import PathExpr, ReadFileTool
from chatmd.loading import Confinement, import_key
from tests.chatmd.prompt_files import load


@pytest.mark.parametrize(("text", "expected"), [
    ("lib", PathExpr("tool_dir", "lib")),
    ("/", PathExpr(None, "/")),
    ("/usr/share", PathExpr(None, "/usr/share")),
    ("${workspace}", PathExpr("workspace", "")),
    ("${workspace}/docs/x", PathExpr("workspace", "docs/x")),
    ("${home}/", PathExpr("home", "")),
    ("a/${home}", PathExpr("tool_dir", "a/${home}")),  # variables only at the start
    ("${home", PathExpr("tool_dir", "${home")),  # no closing brace: relative
])
def test_path_expressions(text: str, expected: PathExpr) -> None:
    assert parse_path_expr(text) == expected


@pytest.mark.parametrize(("text", "fragment"), [
    ("", "empty"), ("a\x00b", "NUL"), ("${nope}/x", "${nope}"), ("${home}x", "followed by"),
    ("${}", "${}"),
])
def test_invalid_path_expressions(text: str, fragment: str) -> None:
    with pytest.raises(PathExprError, match=None) as raised:
        parse_path_expr(text)
    assert fragment in str(raised.value)


def test_relative_base_is_the_callers_choice() -> None:
    assert parse_path_expr("x", relative_base="source_dir") == PathExpr("source_dir", "x")


def test_resolve_path_expr() -> None:
    assert resolve_path_expr(PathExpr("home", "a"), {"home": "/h"}) == "/h/a"
    assert resolve_path_expr(PathExpr("home", ""), {"home": "/h"}) == "/h"
    assert resolve_path_expr(PathExpr(None, "/x"), {}) == "/x"
    with pytest.raises(KeyError):
        resolve_path_expr(PathExpr("workspace", "a"), {})


def _read_file_tool(tmp_path: Path, roots: str) -> ReadFileTool:
    (tool,) = load(tmp_path, f'<tool name="read_file">{roots}</tool>').tools
    assert isinstance(tool, ReadFileTool)
    return tool


def test_resolve_read_roots(tmp_path: Path) -> None:
    (tmp_path / "launch" / "lib").mkdir(parents=True)
    (tmp_path / "ws" / "docs").mkdir(parents=True)
    tool = _read_file_tool(tmp_path, '<read id="src" path="lib"/><read id="docs" '
                           'path="${workspace}/docs/../docs" description="d"/>'
                           '<read id="here" path="${prompt_dir}"/>')
    roots, diagnostics = resolve_read_roots(tool, {"tool_dir": str(tmp_path / "launch"),
                                                   "workspace": str(tmp_path / "ws")})
    assert diagnostics == []
    assert [(r.id, r.path, r.description) for r in roots] == [
        ("src", os.path.realpath(tmp_path / "launch" / "lib"), None),
        ("docs", os.path.realpath(tmp_path / "ws" / "docs"), "d"),
        ("here", os.path.realpath(tmp_path), None)]


def test_resolve_read_roots_reports_missing_and_escaping_roots(tmp_path: Path) -> None:
    (tmp_path / "inside").mkdir()
    (tmp_path / "outside").mkdir()
    os.symlink(tmp_path / "outside", tmp_path / "inside" / "link")
    tool = _read_file_tool(tmp_path, '\n<read id="gone" path="nope"/>\n<read id="ws" '
                           'path="${workspace}"/>\n<read id="esc" path="${tool_dir}/link"/>'
                           '<read id="ok" path="${tool_dir}"/>')
    roots, diagnostics = resolve_read_roots(tool, {"tool_dir": str(tmp_path / "inside")},
                                            confine_to=str(tmp_path / "inside"))
    assert [r.id for r in roots] == ["ok"]
    assert [(d.code, d.line) for d in diagnostics] == [
        ("read_file.root_unavailable", 2), ("read_file.unknown_variable", 3),
        ("chatmd.path_outside_prompt_dir", 4)]


@pytest.mark.parametrize(("text", "seconds"), [
    ("2s", 2.0), ("1500ms", 1.5), ("2.5m", 150.0), ("1h", 3600.0), (".5s", 0.5), ("3.s", 3.0)])
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["5", "0s", "-1s", "1 s", "1d", "", "nanms", "infs"])
def test_invalid_durations(text: str) -> None:
    with pytest.raises(LimitError):
        parse_duration(text)


@pytest.mark.parametrize(("text", "size"), [
    ("512", 512), ("10B", 10), ("16KiB", 16384), ("2MiB", 2 << 20), ("1GiB", 1 << 30)])
def test_byte_sizes(text: str, size: int) -> None:
    assert parse_byte_size(text) == size


@pytest.mark.parametrize("text", ["0", "0B", "1.5KiB", "1kb", "-1", "", "9999999999GiB"])
def test_invalid_byte_sizes(text: str) -> None:
    with pytest.raises(LimitError):
        parse_byte_size(text)


def test_counts() -> None:
    assert parse_positive_count("007") == 7
    for text in ("0", "-1", "1.0", "", "+1", str(2**63)):
        with pytest.raises(LimitError):
            parse_positive_count(text)


@pytest.mark.parametrize(("value", "ok"), [
    ("7:session:12", True), ("1:a:0", True), ("3:a:b:9", True), ("3:né:1", True),
    ("2:né:1", False), ("0::1", False), ("07:session:1", False), ("7:session:01", False),
    ("7:session:", False), ("7:session", False), (":a:1", False), ("x:a:1", False),
    ("1:a:-1", False), ("", False), ("1:a:1 ", False),
])
def test_history_ids(value: str, ok: bool) -> None:
    assert canonical_history_id(value) is ok


def test_config_numbers() -> None:
    assert parse_integer("1_000") == 1000 and parse_integer("_1") is None
    assert parse_integer(str(2**62)) is None and parse_integer(str(2**62 - 1)) == 2**62 - 1
    assert parse_float("1e3") == 1000.0 and parse_float("1e999") is None
    for text in ("", "inf", "nan", "0x10", " 1", "1,5"):
        assert parse_float(text) is None


def test_import_keys_are_textual() -> None:
    assert import_key("/a/b/../c/./d//e") == "/a/c/d/e"
    assert import_key("C:\\x\\..\\y") == "/C:/y"
    assert import_key("/../..") == "/"


def test_confinement(tmp_path: Path) -> None:
    fence = Confinement.of(str(tmp_path))
    assert fence.violation("a/b", str(tmp_path / "a" / "b")) is None
    assert fence.violation("a/../b", str(tmp_path / "a" / ".." / "b")) is None
    assert fence.violation("../x", str(tmp_path / ".." / "x")) is not None
    assert fence.violation(str(tmp_path / "x"), str(tmp_path / "x")) is not None  # absolute
