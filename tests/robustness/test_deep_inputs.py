"""Issue 16, rows on nesting: deep HTML, deep constants, many `and` bindings, flat constructs.

Each input is one the issue found crashing (``RecursionError``) or slow; each
must now give a result or a coded diagnostic, through the command line, with
no traceback. Flat constructs (many match arms, many ``and`` bindings, long
``else if`` chains) are never reported as too deep by the frontend.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from chatml.bytecode.code import MAX_PATTERN_DEPTH
from chatml.bytecode.serialize import deserialize, serialize
from chatml.check import check_source
from tests.robustness import programs
from tests.robustness.support import chatmdc, chatml, write_files


@pytest.mark.parametrize("flag", ["markdown", "strip"])
def test_deeply_nested_html_document(flag: str, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    write_files(tmp_path, {"p.chatmd": f'<user><doc src="d.html" local {flag}/></user>\n',
                           "d.html": programs.nested_bold_html(5000)})
    outcome = chatmdc(["compile", "--emit", "request", str(tmp_path / "p.chatmd")], capsys)
    assert outcome.status == 0, outcome.err
    assert "deep" in outcome.out


def test_html_markdown_keeps_its_rendering_when_shallow() -> None:
    from chatmd.html_text import html_to_markdown

    html = ("<h2>T</h2><p>a <b>b <i>c</i></b> <a href='u'>l</a></p><ul><li>x<ul><li>y</li>"
            "</ul></li></ul><blockquote><p>q</p></blockquote><table><tr><th>h</th></tr>"
            "<tbody><tr><td>d|e</td></tr></tbody></table><pre>p\n q</pre></i>")
    assert html_to_markdown(html) == (
        "## T\n\na **b *c*** [l](u)\n\n- x\n\n  - y\n\n> q\n\n| h |\n| --- |\n| d\\|e |"
        "\n\n```\np\n q\n```")


@pytest.mark.parametrize("depth", [150, 1000, MAX_PATTERN_DEPTH])
@pytest.mark.parametrize("command", ["compile", "dis", "check"])
def test_deep_constant_pattern(depth: int, command: str, tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "p.chatml"
    source.write_text(programs.constant_pattern(depth), encoding="utf-8")
    argv = [command, str(source)] + (["-o", str(tmp_path / "p.bc")] if command == "compile" else [])
    outcome = chatml(argv, capsys)
    assert outcome.status == 0, outcome.err[-1000:]
    if command == "compile":  # what compile writes, run reads back
        module = deserialize((tmp_path / "p.bc").read_bytes())
        assert serialize(module) == (tmp_path / "p.bc").read_bytes()
        assert chatml(["run", str(tmp_path / "p.bc")], capsys).out == "2\n"
    if command == "dis":  # the constant is shown clipped, every line short
        assert max(len(line) for line in outcome.out.splitlines()) < 200


@pytest.mark.parametrize("depth", [MAX_PATTERN_DEPTH + 1, MAX_PATTERN_DEPTH + 2])
@pytest.mark.parametrize("command", ["compile", "dis", "run"])
def test_constant_pattern_deeper_than_bytecode_allows_is_too_deep(
        depth: int, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A pattern deeper than bytecode holds is refused when compiled, positioned at it."""
    source = tmp_path / "p.chatml"
    source.write_text(programs.constant_pattern(depth), encoding="utf-8")
    argv = [command, str(source)] + (["-o", str(tmp_path / "p.bc")] if command == "compile" else [])
    outcome = chatml(argv, capsys)
    assert outcome.status == 1
    assert "error[chatml.too_deep]" in outcome.err and "pattern nested more than" in outcome.err
    # positioned at the first sub-pattern past the limit
    column = len("let f x = match x with | ") + 3 * (MAX_PATTERN_DEPTH + 1) + 1
    assert f"p.chatml:1:{column}" in outcome.err
    assert not (tmp_path / "p.bc").exists()
    assert chatml(["check", str(source)], capsys).status == 0  # checking has no such limit


@pytest.mark.parametrize("depth", [200, 1000, 3000])
def test_deep_constant_pattern_runs_or_is_reported(depth: int, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """``run`` (with the cache: written, then read) answers with output or a coded diagnostic."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    source = tmp_path / "p.chatml"
    source.write_text(programs.constant_pattern(depth), encoding="utf-8")
    for _ in range(2):
        outcome = chatml(["run", str(source)], capsys)
        assert outcome.out == "2\n" or "error[chatml." in outcome.err
    if depth <= MAX_PATTERN_DEPTH:
        assert outcome.out == "2\n"
        assert list((tmp_path / "cache" / "chatml").iterdir())  # the deep constant was cached


@pytest.mark.parametrize("count", [1000, 10_000])
def test_many_mutually_recursive_functions(count: int) -> None:
    result = check_source(programs.mutual_recursion(count), name="m.chatml")
    assert result.ok, result.diagnostics[:3]
    assert result.bindings[-1].name == f"f{count - 1}"
    assert result.bindings[-1].signature == "'a -> 'a"


def test_many_mutually_recursive_functions_run(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "m.chatml"
    source.write_text(programs.mutual_recursion(3000), encoding="utf-8")
    outcome = chatml(["run", "--no-cache", str(source)], capsys)
    assert (outcome.status, outcome.out) == (0, "7\n"), outcome.err[-500:]


@pytest.mark.parametrize("shape", ["match_arms", "tag_arms", "mutual_recursion"])
def test_flat_constructs_run_and_never_nest_in_generated_python(
        shape: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    count = 2000
    text = getattr(programs, shape)(count)
    source = tmp_path / "f.chatml"
    source.write_text(text, encoding="utf-8")
    outcome = chatml(["run", "--no-cache", str(source)], capsys)
    expected = "7\n" if shape == "mutual_recursion" else f"{count - 1}\n"
    assert (outcome.status, outcome.out) == (0, expected), outcome.err[-500:]
    from chatml.build import build_file
    from chatml.vm.translate import translate

    artifact = build_file(str(source), text.encode(), surface=None, use_cache=False)
    python = translate(artifact.module, range_analysis=True, intrinsics={}).source
    indents = [len(line) - len(line.lstrip(" ")) for line in python.splitlines()]
    assert max(indents) <= 4 * 6  # a few levels however many arms / bindings


@pytest.mark.parametrize("shape", ["match_arms", "tag_arms", "mutual_recursion",
                                   "else_if_chain"])
def test_flat_constructs_are_never_too_deep_for_the_frontend(
        shape: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "f.chatml"
    source.write_text(getattr(programs, shape)(5000), encoding="utf-8")
    for argv in (["check"], ["compile", "-o", str(tmp_path / "f.bc")], ["dis"]):
        outcome = chatml([*argv, str(source)], capsys)
        assert outcome.status == 0, outcome.err[-500:]
        assert "too_deep" not in outcome.err


def test_disassembly_of_deep_blocks_is_linear(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    text = programs.nested_while(10_000)
    source = tmp_path / "w.chatml"
    source.write_text(text, encoding="utf-8")
    outcome = chatml(["dis", str(source)], capsys)
    assert outcome.status == 0, outcome.err[-500:]
    assert len(outcome.out) < 40 * len(text)  # was 2,500 bytes per input byte
    assert max(len(line) for line in outcome.out.splitlines()[1:]) < 120
    assert "[depth 10000]" in outcome.out


DEEP = 10_000

#: (opening, closing) of constructs nested DEEP levels deep that the checker must accept.
NESTINGS = {
    "parentheses": ("(", ")"),
    "arrays": ("[", "]"),
    "lambdas": ("fun x -> ", ""),
    "records": ("{ a = ", " }"),
    "tags": ("`A(", ")"),
    "lets": ("let y = 1 in ", ""),
}


@pytest.mark.parametrize("name", sorted(NESTINGS))
def test_ten_thousand_levels_are_checked(name: str) -> None:
    opening, closing = NESTINGS[name]
    result = check_source(f"let x = {opening * DEEP}1{closing * DEEP}\n", name="d.chatml")
    assert result.ok, [d.code for d in result.diagnostics[:3]]


def test_ten_thousand_nested_modules_are_checked() -> None:
    text = "module M = struct\n" * DEEP + "let x = 1\n" + "end\n" * DEEP
    result = check_source(text, name="m.chatml")
    assert result.ok, [d.code for d in result.diagnostics[:3]]
    assert [b.name for b in result.bindings] == ["M"]


def test_else_if_chain_longer_than_the_recursion_limit_is_flat() -> None:
    """An `else if` chain is walked with loops by the checker and the compiler: 45,000 links
    (more than the 40,000 frames a deep phase may use) are checked and compiled."""
    from chatml.build import build_source
    from chatml.depth import RECURSION_LIMIT

    count = RECURSION_LIMIT + 5_000
    text = programs.else_if_chain(count)
    result = check_source(text, name="e.chatml")
    assert result.ok, [d.code for d in result.diagnostics[:3]]
    from chatml.bytecode.opcodes import Op

    module = build_source(text, "e.chatml").module
    ifs = sum(1 for code in module.codes for op, _, _ in code.instructions if op == Op.IF)
    assert ifs == count


def test_elements_nested_past_the_limit_inside_a_message_are_reported(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Import expansion walks message bodies: past the parser's nesting limit it stops."""
    depth = 1100
    write_files(tmp_path, {"p.chatmd": "<user>" + "<agent>" * depth + "x"
                           + "</agent>" * depth + "</user>\n"})
    outcome = chatmdc(["check", str(tmp_path / "p.chatmd")], capsys)
    assert outcome.status == 1
    assert "error[chatmd.nesting_too_deep]" in outcome.err
    assert "internal_error" not in outcome.err


@pytest.mark.parametrize("cut", ["<!--", "RAW|"])
def test_elements_nested_past_the_limit_then_cut_off_are_not_lowered(
        cut: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Found by the long fuzz budget: an unterminated comment (or RAW block) closes the
    open elements at the end of the file without an `unclosed` error at their opening tags,
    so the recovery kept the too-deep tree as intact and lowering overflowed the stack. An
    element closed at the end of the file now extends to it (and holds the errors)."""
    from chatmd.parser import MAX_NESTING

    depth = MAX_NESTING + 400
    write_files(tmp_path, {"p.chatmd": "<assistant>" * depth + cut + "</assistant>" * depth})
    for command in (["check"], ["compile"], ["shell", "explain"]):
        outcome = chatmdc([*command, str(tmp_path / "p.chatmd")], capsys)
        assert outcome.status == 1
        assert "error[chatmd.nesting_too_deep]" in outcome.err
        assert "internal_error" not in outcome.err


def test_every_top_level_element_nesting_past_the_limit_is_reported(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Found by the long fuzz budget: the parser reported only the first crossing of the
    limit in a file, so a second, deeper top-level element (414 levels past it) was kept as intact
    and lowering overflowed the stack. Now each top-level element that passes it is reported."""
    from chatmd.parser import MAX_NESTING

    first, second = MAX_NESTING + 1, MAX_NESTING + 414
    write_files(tmp_path, {"p.chatmd": "<agent>" * first + "</agent>" * first + "\n"
                           + "<assistant>" * second + "</assistant>" * second + "\n"})
    outcome = chatmdc(["check", str(tmp_path / "p.chatmd")], capsys)
    assert outcome.status == 1
    assert outcome.err.count("error[chatmd.nesting_too_deep]") == 2
    assert f"p.chatmd:2:{len('<assistant>') * MAX_NESTING + 1}" in outcome.err
    assert "internal_error" not in outcome.err
