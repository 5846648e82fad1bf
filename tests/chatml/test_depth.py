"""Deeply nested programs never crash check, run or the REPL (chatml.depth, the type printer).

Each shape is nested 500, 2,000 and 10,000 levels: the tools either answer
normally or report ``chatml.too_deep`` with a position -- never a Python
traceback (RecursionError). Nested list literals stop at 2,000 levels: the
checker's occurs check is quadratic in their depth (10,000 levels take ~40 s),
a speed issue, not a crash.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from chatcommon.diagnostics import DiagnosticError
from chatml.cli import main
from chatml.repl import ReplState, step
from chatml.typecheck.types import INT, Prim, TArray, TFun, TVar, show_type

SHAPES: dict[str, Callable[[int], str]] = {
    "list": lambda d: "[" * d + "1" + "]" * d,
    "fun": lambda d: "fun x -> " * d + "1",
    "record": lambda d: "{a = " * d + "1" + "}" * d,
    "variant": lambda d: "`A(" * d + "1" + ")" * d,
}
DEPTHS = (500, 2000, 10_000)
CASES = [(shape, depth) for shape in sorted(SHAPES) for depth in DEPTHS
         if not (shape == "list" and depth > 2000)]


def _outcome(status: int, stdout: str, stderr: str) -> str:
    """"ok" or "too_deep"; anything else (a traceback, another error) fails the test."""
    assert "Traceback" not in stdout + stderr
    if status == 0:
        return "ok"
    diagnostics = json.loads(stdout or stderr)["diagnostics"]
    assert [d["code"] for d in diagnostics] == ["chatml.too_deep"], diagnostics
    assert diagnostics[0]["line"] >= 1 and diagnostics[0]["column"] >= 1
    return "too_deep"


@pytest.mark.parametrize(("shape", "depth"), CASES)
def test_check_prints_deep_types(shape: str, depth: int, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "deep.chatml"
    path.write_text(f"let x = {SHAPES[shape](depth)}\n", encoding="utf-8")
    status = main(["check", "--format", "json", str(path)])
    captured = capsys.readouterr()
    assert _outcome(status, captured.out, captured.err) == "ok"
    [binding] = json.loads(captured.out)["bindings"]
    assert binding["name"] == "x"
    marker = {"list": " array", "fun": "->", "record": "{a: ", "variant": "`A("}[shape]
    assert binding["type"].count(marker) == depth


@pytest.mark.parametrize(("shape", "depth"), CASES)
def test_run_answers_or_reports_too_deep(shape: str, depth: int, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "deep.chatml"
    path.write_text(f"let x = {SHAPES[shape](depth)}\nprint(\"done\")\n", encoding="utf-8")
    status = main(["run", "--no-cache", "--format", "json", str(path)])
    captured = capsys.readouterr()
    outcome = _outcome(status, "", captured.err)
    # closures nested past Python's limits run on the reference interpreter
    assert outcome == "ok" and captured.out == "done\n"


@pytest.mark.parametrize(("shape", "depth"), CASES)
def test_repl_definition_and_load(shape: str, depth: int, tmp_path: Path) -> None:
    source = f"let x = {SHAPES[shape](depth)}"
    path = tmp_path / "deep.chatml"
    path.write_text(source, encoding="utf-8")
    lines = [source, f":load {path}"] if depth < 10_000 else [f":load {path}"]
    for line in lines:
        state, output = step(ReplState.start(), line)
        assert "Traceback" not in output
        assert output.startswith("val x : ") or "error[chatml.too_deep]" in output, output[:200]
        state, after = step(state, "1 + 1")  # the session goes on
        assert after == "- : int = 2\n"


def test_type_printer_is_iterative_and_names_variables_in_order() -> None:
    deep: TArray | Prim = INT
    for _ in range(30_000):
        deep = TArray(deep)
    assert show_type(deep).count(" array") == 30_000
    a, b = TVar(0), TVar(0)
    nested = TFun((a, TArray(TFun((b,), a))), TFun((), b))
    assert show_type(nested) == "('a, ('b -> 'a) array -> ( -> 'b))"


@pytest.mark.parametrize("depth", [150, 20_000])
def test_blocks_nested_past_pythons_indentation_limit_run_on_the_reference_interpreter(
        depth: int) -> None:
    # Each `if` is a Python block in the translation; the translator stops at the
    # first line past CPython's limit (linear work) and the loader falls back.
    from chatml.build import build_source, runtime_values
    from chatml.limits import Limits
    from chatml.vm.loader import load, translation_for
    from chatml.vm.run import on_large_stack, run_program
    from chatml.vm.translate import MAX_INDENT

    source = "let x = " + "if true then " * depth + "7" + " else 0" * depth
    values = runtime_values("core")
    built = build_source(source, "deep_if.chatml", values=values)
    program = load(built.module, values, built.source)
    assert program.interpreted and program.python_source == ""
    on_large_stack(lambda: run_program(program, Limits()))
    assert program.top_level()["x"] == 7
    with pytest.raises(DiagnosticError) as raised:  # `chatml dis --python` has nothing to show
        translation_for(built.module, values)
    [diagnostic] = raised.value.diagnostics
    assert diagnostic.code == "chatml.too_deep"
    assert diagnostic.line == 1 and diagnostic.column > len("let x = ")
    assert f"more than {MAX_INDENT} deep" in diagnostic.message
    assert "reference interpreter" in diagnostic.message


def test_blocks_nested_within_the_limit_still_run() -> None:
    from chatml.build import build_source, runtime_values
    from chatml.limits import Limits
    from chatml.vm.loader import load
    from chatml.vm.run import run_program

    depth = 40
    source = "let x = " + "if true then " * depth + "7" + " else 0" * depth
    values = runtime_values("core")
    built = build_source(source, "ok_if.chatml", values=values)
    program = load(built.module, values, built.source)
    assert not program.interpreted
    run_program(program, Limits())
    assert program.top_level()["x"] == 7
