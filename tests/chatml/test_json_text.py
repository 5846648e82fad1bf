"""Strict RFC 8259 JSON text (DECISIONS 3): the parser, its errors, and the writer."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatml import json_text
from chatml.json_text import JsonObject, JsonSyntaxError, JsonValueError, dumps, parse

ACCEPTED = [
    ("0", 0.0), ("-0", -0.0), ("1.5", 1.5), ("-12.25e+2", -1225.0), ("1E2", 100.0),
    ("1e-400", 0.0), ("true", True), ("false", False), ("null", None), ('""', ""),
    ('"\\u00e9\\n\\t\\"\\\\\\/\\b\\f\\r"', "é\n\t\"\\/\b\f\r"), ("[]", []), ("{}", JsonObject()),
    (' \t\n\r[ 1 , [ ] ]\n', [1.0, []]),
    ('{"a":1,"a":2}', JsonObject([("a", 1.0), ("a", 2.0)])),
    ('{"":{"x":[null]}}', JsonObject([("", JsonObject([("x", [None])]))])),
    ('"\\ud83d\\ude00"', "😀"), ('"😀"', "😀"), ('"\\uD83D\\uDE00"', "😀"),
    ('"\\ud800"', "\ufffd"), ('"\\udc00\\ud800x"', "\ufffd\ufffdx"), ('"\\ud800\\u0041"', "\ufffdA"),
    ("123456789012345678901234567890", 1.2345678901234568e29),
]


@pytest.mark.parametrize(("text", "tree"), ACCEPTED, ids=[t for t, _ in ACCEPTED])
def test_accepts_rfc_8259_json(text: str, tree: Any) -> None:
    assert same_tree(parse(text), tree)
    assert same_tree(json_text._Parser(text).parse(), tree)  # the precise parser agrees


REJECTED = [
    ("", 1, 1, "expected a JSON value"),
    ("   ", 1, 4, "found the end of the input"),
    ("[1,]", 1, 4, "expected a value after ','"),
    ('{"a":1,}', 1, 8, "expected a member after ','"),
    ('{"a" 1}', 1, 6, "expected ':' after an object key, found '1'"),
    ("{a:1}", 1, 2, "expected a string key in double quotes, found 'a'"),
    ("[1 2]", 1, 4, "expected ',' or ']' after an array element, found '2'"),
    ('{"a":1 "b":2}', 1, 8, "expected ',' or '}' after an object member"),
    ("1.", 1, 1, "invalid number '1.'"), (".5", 1, 1, "invalid number '.5'"),
    ("+1", 1, 1, "invalid number '+1'"), ("01", 1, 1, "invalid number '01'"),
    ("-", 1, 1, "invalid number '-'"), ("1e", 1, 1, "invalid number '1e'"),
    ("1.2.3", 1, 1, "invalid number '1.2.3'"), ("1-2", 1, 1, "invalid number '1-2'"),
    ("1e400", 1, 1, "number 1e400 is too large for a double"),
    ("[1, -1e999]", 1, 5, "number -1e999 is too large"),
    ("NaN", 1, 1, "found 'NaN'"), ("Infinity", 1, 1, "found 'Infinity'"),
    ("-Infinity", 1, 1, "invalid number '-'"), ("True", 1, 1, "found 'True'"),
    ("nul", 1, 1, "found 'nul'"), ("'x'", 1, 1, "found a single quote"),
    ('"abc', 1, 1, "unterminated string"), ('"a\nb"', 1, 3, "control character U+000A"),
    ('"\\x"', 1, 2, "invalid escape '\\x'"), ('"\\u12"', 1, 2, "invalid \\u escape"),
    ('"\\', 1, 2, "invalid escape '\\end of input'"),
    ("[1] [2]", 1, 5, "unexpected '[' after the JSON value"), ("1 x", 1, 3, "unexpected 'x'"),
    ("\ufeff[]", 1, 1, "byte-order mark"), ("[\u00a0]", 1, 2, "found U+00A0"),
    ("[\n  1,\n  2\n  3]", 4, 3, "expected ',' or ']' after an array element, found '3'"),
    ('{"é": x}', 1, 7, "found 'x'"),
]


@pytest.mark.parametrize(("text", "line", "column", "fragment"), REJECTED,
                         ids=[repr(r[0]) for r in REJECTED])
def test_rejects_everything_else_with_a_position(text: str, line: int, column: int,
                                                 fragment: str) -> None:
    with pytest.raises(JsonSyntaxError) as caught:
        parse(text)
    error = caught.value
    assert (error.line, error.column) == (line, column)
    assert fragment in error.message
    assert str(error).startswith(f"line {line}, column {column}: ")
    assert not json_text.is_valid(text)


def test_errors_carry_hints_for_common_mistakes() -> None:
    hints = {}
    for text in ("[1,]", "01", "+1", ".5", "1.", "True", "NaN", "{a:1}", "'s'"):
        with pytest.raises(JsonSyntaxError) as caught:
            parse(text)
        hints[text] = caught.value.hint
    assert hints["[1,]"] == "trailing commas are not allowed in JSON"
    assert hints["01"] == "leading zeros are not allowed in JSON numbers"
    assert hints["+1"] == "a JSON number cannot start with '+'"
    assert hints[".5"] == "a JSON number needs a digit before the decimal point"
    assert hints["1."] == "a JSON number needs a digit after the decimal point"
    assert hints["True"] == "JSON literals are lowercase: true"
    assert hints["NaN"] == "NaN and infinities are not JSON numbers"
    assert hints["{a:1}"] == "JSON object keys are strings in double quotes"
    assert hints["'s'"] == "JSON strings use double quotes"


def test_exact_integers_keep_big_ints() -> None:
    assert parse("[4611686018427387903, -1, 1.0, 2e3]", exact_integers=True) == [
        4611686018427387903, -1, 1.0, 2000.0]
    assert type(parse("7", exact_integers=True)) is int
    assert type(parse("7")) is float
    deep = "[" * 1000 + "9007199254740993" + "]" * 1000  # the precise parser's path
    value = parse(deep, exact_integers=True)
    for _ in range(1000):
        value = value[0]
    assert value == 9007199254740993


def test_unique_keys_gives_dicts_and_rejects_repeats() -> None:
    assert parse('{"a": {"b": [1]}, "c": 2}', unique_keys=True, exact_integers=True) == {
        "a": {"b": [1]}, "c": 2}
    for text, column in [('{"a":1,"a":2}', 8), ('[{"b":{}, "c":[1], "b":3}]', 20)]:
        with pytest.raises(JsonSyntaxError) as caught:
            parse(text, unique_keys=True)
        assert caught.value.column == column
        assert caught.value.message.startswith("duplicate key ")
    deep = "[" * 3000 + '{"x":1,"x":2}' + "]" * 3000  # the precise parser's path
    with pytest.raises(JsonSyntaxError, match='duplicate key "x"'):
        parse(deep, unique_keys=True)


def test_very_deep_nesting_parses_without_recursion() -> None:
    depth = 50_000
    tree = parse("[" * depth + "]" * depth)
    for _ in range(depth - 1):
        tree = tree[0]
    assert tree == [[]] or tree == []
    with pytest.raises(JsonSyntaxError) as caught:
        parse("[" * depth + "]" * (depth - 1))
    assert caught.value.column == 2 * depth
    deep_object = '{"a":' * 5000 + "1" + "}" * 5000
    assert json_text.is_valid(deep_object)
    assert dumps(parse(deep_object)) == '{"a":' * 5000 + "1.0" + "}" * 5000


def test_strings_inside_brackets_do_not_confuse_the_nesting_check() -> None:
    text = '["' + "]" * 1000 + '", ' + "[" * 500 + "]" * 500 + "]"
    assert parse(text)[0] == "]" * 1000


# --------------------------------------------------------------------------- writing

WRITTEN = [
    (None, "null", "null"), (True, "true", "true"), (1.0, "1.0", "1.0"), (-0.0, "-0.0", "-0.0"),
    (0.1, "0.1", "0.1"), (1e20, "1e+20", "1e+20"), (1.0 / 3.0, "0.33333333333333331", None),
    (100.0, "100.0", None), (1e-07, "1e-07", None), (7, "7", None),
    ("a\"b\n\\/\x01\x7fé😀", '"a\\"b\\n\\\\/\\u0001\x7fé😀"', None),
    ("\ud800", '"\\ud800"', None),
    ([], "[]", "[]"), (JsonObject(), "{}", "{}"), ({}, "{}", "{}"),
    ([1.0, [None, "x"]], '[1.0,[null,"x"]]', '[\n  1.0,\n  [\n    null,\n    "x"\n  ]\n]'),
    (JsonObject([("a", [1.0]), ("a", JsonObject())]), '{"a":[1.0],"a":{}}',
     '{\n  "a": [\n    1.0\n  ],\n  "a": {}\n}'),
    ({"k": (True, False)}, '{"k":[true,false]}', '{\n  "k": [\n    true,\n    false\n  ]\n}'),
]


@pytest.mark.parametrize(("tree", "compact", "pretty"), WRITTEN, ids=[w[1] for w in WRITTEN])
def test_writer(tree: Any, compact: str, pretty: str | None) -> None:
    assert dumps(tree) == compact
    if pretty is not None:
        assert dumps(tree, pretty=True) == pretty


def test_the_writer_refuses_what_json_cannot_hold() -> None:
    for bad, path in [(math.nan, "$"), ([1.0, {"a": math.inf}], "$[1].a"),
                      (JsonObject([("x", [-math.inf])]), "$.x[0]")]:
        with pytest.raises(JsonValueError) as caught:
            dumps(bad)
        assert caught.value.path == path
        assert "NaN and infinities cannot be written as JSON" in caught.value.message
    with pytest.raises(JsonValueError, match="a Python set has no JSON form"):
        dumps([{1}])
    with pytest.raises(JsonValueError, match="object keys must be strings"):
        dumps({1: 2})


def test_pretty_output_is_what_python_indents() -> None:
    tree = parse('{"a": [1, {"b": null, "c": []}], "d": {}}')
    plain = {"a": [1.0, {"b": None, "c": []}], "d": {}}
    assert dumps(tree, pretty=True) == json.dumps(plain, indent=2)


# --------------------------------------------------------------------------- properties

finite = st.floats(allow_nan=False, allow_infinity=False)
text = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
trees = st.recursive(
    st.none() | st.booleans() | finite | text,
    lambda children: st.lists(children, max_size=5)
    | st.lists(st.tuples(text, children), max_size=5).map(JsonObject),
    max_leaves=30,
)


def same_tree(left: Any, right: Any) -> bool:
    """Equality that tells -0.0 from 0.0 and JsonObject from list."""
    if type(left) is not type(right):
        return False
    if type(left) is float:
        return math.copysign(1.0, left) == math.copysign(1.0, right) and left == right
    if type(left) is JsonObject:
        return len(left) == len(right) and all(
            a[0] == b[0] and same_tree(a[1], b[1]) for a, b in zip(left, right, strict=True))
    if type(left) is list:
        return len(left) == len(right) and all(
            same_tree(a, b) for a, b in zip(left, right, strict=True))
    return bool(left == right)


@settings(max_examples=150, deadline=None)
@given(trees, st.booleans())
def test_written_json_reads_back_exactly(tree: Any, pretty: bool) -> None:
    written = dumps(tree, pretty=pretty)
    assert same_tree(parse(written), tree)
    json.loads(written, parse_constant=float.__call__)  # Python's parser accepts it too (no raise)


JSONISH = st.lists(
    st.sampled_from(list('[]{}:,"\\ \n0123456789.eE+-tfnulrsaNIy\u00e9')
                    + ["\\u", "\\ud800", "\\udc00", "\\u00e9", "true", "null", "1e400", '"a"']),
    max_size=20).map("".join)


def _python_accepts(candidate: str) -> bool:
    """Python's json module as an oracle, minus its non-RFC extensions (NaN, Infinity)."""
    def refuse(_: str) -> Any:
        raise ValueError("not RFC 8259")

    try:
        tree = json.loads(candidate, parse_constant=refuse)
    except (ValueError, RecursionError):
        return False
    return not _has_infinity(tree)


def _has_infinity(tree: Any) -> bool:
    if isinstance(tree, float):
        return math.isinf(tree)
    if isinstance(tree, list):
        return any(_has_infinity(item) for item in tree)
    if isinstance(tree, dict):
        return any(_has_infinity(item) for item in tree.values())
    return False


@settings(max_examples=300, deadline=None)
@given(JSONISH)
def test_accepts_exactly_what_an_rfc_parser_accepts(candidate: str) -> None:
    assert json_text.is_valid(candidate) == _python_accepts(candidate)


@settings(max_examples=300, deadline=None)
@given(JSONISH)
def test_the_fast_path_and_the_precise_parser_agree(candidate: str) -> None:
    try:
        fast: Any = parse(candidate)
    except JsonSyntaxError as error:
        fast = ("error", error.line, error.column, error.message)
    try:
        precise: Any = json_text._Parser(candidate).parse()
    except JsonSyntaxError as error:
        precise = ("error", error.line, error.column, error.message)
    if isinstance(fast, tuple):
        assert fast == precise
    else:
        assert same_tree(fast, precise)
