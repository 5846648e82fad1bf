"""Shell value types (spec §2): durations, byte sizes, integers, lists, paths, names."""

from __future__ import annotations

import pytest

from chatmd.shell.declare.values import (
    PathExpr,
    ValueProblem,
    format_bytes,
    format_duration,
    is_runtime_id,
    parse_bool,
    parse_bytes,
    parse_csv,
    parse_duration,
    parse_env_name,
    parse_json_strings,
    parse_optional_duration,
    parse_path,
    parse_uint,
)


@pytest.mark.parametrize(("text", "seconds"), [
    ("30s", 30.0), ("1500ms", 1.5), ("2.5m", 150.0), ("1h", 3600.0), ("0.5s", 0.5),
    (".5s", 0.5), ("10ms", 0.01)])
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["0s", "-1s", "5", "", "s", "1 s", "1d", "1.5.2s", "inf",
                                  "nan", "1e3s", "0ms", "none"])
def test_invalid_durations(text: str) -> None:
    with pytest.raises(ValueProblem):
        parse_duration(text)


def test_none_clears_only_where_allowed() -> None:
    assert parse_optional_duration("none") is None
    assert parse_optional_duration("2s") == 2.0
    with pytest.raises(ValueProblem, match="or none"):
        parse_optional_duration("never")


@pytest.mark.parametrize(("text", "count"), [
    ("0", 0), ("0B", 0), ("512", 512), ("1KiB", 1024), ("1500KiB", 1536000),
    ("4MiB", 4 * 1024**2), ("2GiB", 2 * 1024**3)])
def test_byte_sizes(text: str, count: int) -> None:
    assert parse_bytes(text) == count


@pytest.mark.parametrize("text", ["1.5MiB", "-1", "1KB", "1 KiB", "none", "", "1kib",
                                  "9999999999GiB", "9223372036854775808"])
def test_invalid_byte_sizes(text: str) -> None:
    with pytest.raises(ValueProblem):
        parse_bytes(text)


def test_the_largest_byte_size_is_signed_64_bit() -> None:
    assert parse_bytes("9223372036854775807") == 2**63 - 1


@pytest.mark.parametrize("text", ["-1", "1.0", "", "x", "+3"])
def test_invalid_integers(text: str) -> None:
    with pytest.raises(ValueProblem):
        parse_uint(text)


def test_booleans_are_exact() -> None:
    assert parse_bool("true") is True and parse_bool("false") is False
    for text in ("True", "1", "yes", ""):
        with pytest.raises(ValueProblem):
            parse_bool(text)


def test_lists_are_trimmed_and_reject_empty_items() -> None:
    assert parse_csv(" git , status ") == ("git", "status")
    for text in ("git,,status", "", "a,", " , "):
        with pytest.raises(ValueProblem):
            parse_csv(text)


def test_json_string_arrays() -> None:
    assert parse_json_strings('["-c", "x"]') == ("-c", "x")
    for text in ("-c", '["-c", 1]', '{"a": "b"}', "[", '"x"'):
        with pytest.raises(ValueProblem):
            parse_json_strings(text)


@pytest.mark.parametrize(("text", "expected"), [
    ("/usr/bin", PathExpr(None, "/usr/bin")),
    ("${workspace}", PathExpr("workspace", "")),
    ("${workspace}/src/lib", PathExpr("workspace", "src/lib")),
    ("${source_dir}/x", PathExpr("source_dir", "x", "/decl")),
    ("data", PathExpr("source_dir", "data", "/decl")),
    ("${workspace", PathExpr("source_dir", "${workspace", "/decl")),
    ("a/${home}", PathExpr("source_dir", "a/${home}", "/decl")),
])
def test_path_expressions(text: str, expected: PathExpr) -> None:
    assert parse_path(text, "/decl") == expected


@pytest.mark.parametrize(("text", "fragment"), [
    ("", "empty"), ("/a\x00b", "NUL"), ("${nope}/x", "unknown path variable ${nope}"),
    ("${workspace}x", "followed by /"), ("${}", "unknown path variable")])
def test_invalid_paths(text: str, fragment: str) -> None:
    with pytest.raises(ValueProblem, match=fragment.replace("$", r"\$").replace("{", r"\{")
                       .replace("}", r"\}")):
        parse_path(text, "/decl")


def test_path_expressions_print_as_written() -> None:
    assert str(PathExpr("workspace", "")) == "${workspace}"
    assert str(PathExpr("source_dir", "data", "/d")) == "${source_dir}/data"
    assert str(PathExpr(None, "/")) == "/"


def test_runtime_ids_and_environment_names() -> None:
    assert all(is_runtime_id(text) for text in ("a", "_x", "team:dev", "a.b-c:d_1"))
    assert not any(is_runtime_id(text) for text in ("9x", "", "-a", "a b", "a/b"))
    assert parse_env_name("PATH") == "PATH"
    for text in ("", "A=B", "A\x00"):
        with pytest.raises(ValueProblem):
            parse_env_name(text)


def test_summaries_format_values_readably() -> None:
    assert [format_duration(s) for s in (0.5, 30, 90, 120, 7200)] == [
        "500ms", "30s", "90s", "2m", "2h"]
    assert [format_bytes(b) for b in (1000000, 1024, 1536000, 2 * 1024**3)] == [
        "1000000B", "1KiB", "1500KiB", "2GiB"]
