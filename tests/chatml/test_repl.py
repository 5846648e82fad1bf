"""``chatml repl``: the pure step function, the prompt_toolkit loop (pipe input) and the command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from chatml.limits import Limits
from chatml.repl import (
    CONTINUATION,
    PROMPT,
    AtomicFileHistory,
    ReplState,
    run_lines,
    run_repl,
    step,
)
from tests.support import REPO_ROOT


def session(*lines: str, state: ReplState | None = None) -> tuple[ReplState, list[str]]:
    state = state or ReplState.start()
    answers = []
    for line in lines:
        state, answer = step(state, line)
        answers.append(answer)
    return state, answers


def test_definitions_and_expressions_are_answered_with_their_types() -> None:
    _, answers = session("let x = 1 + 2", "x * 2", "let s = \"hi\" ++ \"!\"", "let f a = a",
                         "f([1.5])", "print(\"side effect\")", "{ b = 1; a = `Some(x) }")
    assert answers == [
        "val x : int = 3\n",
        "- : int = 6\n",
        "val s : string = hi!\n",
        "val f : 'a -> 'a = <closure>\n",
        "- : float array = [|1.5|]\n",
        "side effect\n",
        answers[6],  # the record's printed type is the checker's business; its value is ours:
    ]
    assert answers[6].startswith("- : {") and answers[6].endswith("= { a = `Some(3); b = 1 }\n")


def test_one_input_may_define_several_names() -> None:
    _, answers = session("let a = 1 let b = a + 1 print(b)")
    assert answers == ["2\nval a : int = 1\nval b : int = 2\n"]


def test_polymorphism_survives_across_inputs() -> None:
    _, answers = session("let id x = x", "id(1)", "id(\"s\")", "let pair = [id(true)]")
    assert answers[1:] == ["- : int = 1\n", "- : string = s\n", "val pair : bool array = [|true|]\n"]


def test_multi_line_input_continues_until_it_parses() -> None:
    state, answers = session("let rec fact n =", "  if n == 0 then 1", "  else n * fact(n - 1)")
    assert answers == ["", "", "val fact : int -> int = <closure>\n"]
    assert state.prompt == PROMPT
    state, answer = step(state, "print(fact(")
    assert (answer, state.prompt) == ("", CONTINUATION)
    state, answer = step(state, "  5))")
    assert answer == "120\n"
    state, answer = step(state, "(* a comment")
    assert state.prompt == CONTINUATION
    state, answer = step(state, "   still going *) fact(3)")
    assert answer == "- : int = 6\n"


def test_double_semicolon_forces_evaluation() -> None:
    state, answers = session("let x =", ";;")
    assert answers[0] == ""
    assert "error[chatml.syntax_error]" in answers[1]
    assert "<input 1>:1:8" in answers[1]
    assert state.prompt == PROMPT
    _, answers = session("print(7);;")
    assert answers == ["7\n"]


def test_errors_never_end_the_session_and_define_nothing() -> None:
    state, answers = session("let x = 1", "let y = x + \"s\"", "let z = 1 / 0", "undefined",
                             "let w = x + 1")
    assert "error[" in answers[1] and "<input 2>" in answers[1]
    assert "error[chatml.division_by_zero]: Division by zero" in answers[2]
    assert "Unknown variable 'undefined'" in answers[3]
    assert answers[4] == "val w : int = 2\n"
    _, answers = session("z", state=state)
    assert "Unknown variable 'z'" in answers[0]


def test_a_failing_input_is_rolled_back() -> None:
    state, answers = session("let xs = [1, 2]", "(xs[0] <- 9; print(\"changed\"); fail(\"stop\"))",
                             "xs")
    assert answers[1].startswith("changed\nerror[chatml.failure]: stop")
    assert answers[2] == "- : int array = [|1, 2|]\n"


def test_limits_apply_per_input() -> None:
    state = ReplState.start(limits=Limits(max_steps=10_000))
    state, answers = session("let rec spin n = spin(n + 1)", "spin(0)", "1 + 1", state=state)
    assert "step limit exceeded" in answers[1]
    assert answers[2] == "- : int = 2\n"


def test_types_modules_open_and_shadowing() -> None:
    _, answers = session(
        "type shape = [`Circle(float) | `Square(float)]",
        "let area : shape -> float = fun s -> match s with | `Circle(r) -> 3.0 *. r *. r | `Square(a) -> a *. a",
        "area(`Square(2.0))",
        "module M = struct let twice x = x * 2 end",
        "M.twice(4)",
        "open M",
        "twice(5)",
        "let print x = x + 1",
        "print(1)",
    )
    assert answers[0] == "type shape\n"
    assert answers[1].startswith("val area : ")
    assert answers[2] == "- : float = 4.\n"
    assert answers[3] == "module M\n"
    assert answers[4] == "- : int = 8\n"
    assert answers[6] == "- : int = 10\n"
    assert answers[7] == "val print : int -> int = <closure>\n"
    assert answers[8] == "- : int = 2\n"


def test_states_are_values() -> None:
    first, _ = session("let x = 1")
    second, _ = session("let x = 2", state=first)
    _, from_first = session("x", state=first)
    _, from_second = session("x", state=second)
    assert (from_first, from_second) == (["- : int = 1\n"], ["- : int = 2\n"])


def test_type_command_runs_nothing() -> None:
    state, answers = session("let f x = [x]", ":type f", ":type f(print(\"not run\"))",
                             ":type let y = 1", ":type 1 +", ":type nope", ":type")
    assert answers[1] == "- : 'a -> 'a array\n"
    assert answers[2] == "- : unit array\n"
    assert answers[3] == ":type expects a single expression\n"
    assert "error[chatml.syntax_error]" in answers[4]
    assert "Unknown variable 'nope'" in answers[5]
    assert answers[6] == "usage: :type EXPR\n"


def test_load_command(tmp_path: Path) -> None:
    script = tmp_path / "defs.chatml"
    script.write_text("let base = 40\nprint(\"loaded\")\nlet add n = base + n\n", encoding="utf-8")
    broken = tmp_path / "broken.chatml"
    broken.write_text("let ok = 1\nlet bad = ok + true\n", encoding="utf-8")
    state, answers = session(f":load {script}", "add(2)", f":load {broken}",
                             f":load {tmp_path / 'missing.chatml'}", "ok")
    assert answers[0] == "loaded\nval base : int = 40\nval add : int -> int = <closure>\n"
    assert answers[1] == "- : int = 42\n"
    assert f"--> {broken}:2:" in answers[2]
    assert answers[3].startswith("cannot read ") and "missing.chatml" in answers[3]
    assert "Unknown variable 'ok'" in answers[4]


def test_other_commands() -> None:
    state, answers = session(":help", ":frobnicate", ":quit")
    assert ":type EXPR" in answers[0] and ":load FILE" in answers[0]
    assert answers[1] == "unknown command :frobnicate (try :help)\n"
    assert state.finished


def test_huge_and_cyclic_values_are_shown_safely() -> None:
    _, answers = session("let big = Array.make(100000, 1)",
                         "type node = { next : node array }",
                         "let cell = [{ next = [] }]",
                         "cell[0] <- { next = cell }",
                         "cell")
    assert answers[0].startswith("val big : int array = [|1, 1, ") and answers[0].endswith("...\n")
    assert len(answers[0]) < 2100
    assert answers[4].endswith(" = <a value that contains itself>\n")


# --------------------------------------------------------------------------- the loops


def test_prompt_toolkit_loop_with_pipe_input(tmp_path: Path) -> None:
    history = tmp_path / "history"
    written: list[str] = []
    with create_pipe_input() as pipe:
        pipe.send_text("let x = 20\nlet f y =\n  y + x\nf(22)\nfail(\"e\")\nx\n:quit\nnever\n")
        state = run_repl(input=pipe, output=DummyOutput(), history=history,
                         write=written.append)
    assert state.finished
    assert written[0] == "val x : int = 20\n"
    assert written[1] == "val f : int -> int = <closure>\n"
    assert written[2] == "- : int = 42\n"
    assert written[3].startswith("error[chatml.failure]: e")
    assert written[4] == "- : int = 20\n"
    assert len(written) == 5
    entries = [json.loads(line) for line in history.read_text(encoding="utf-8").splitlines()]
    # one entry per complete input: the two lines of `let f` are one entry
    assert entries == ["let x = 20", "let f y =\n  y + x", "f(22)", 'fail("e")', "x", ":quit"]
    assert AtomicFileHistory(history).entries == entries  # read back for the next session


def test_a_multi_line_input_is_one_history_entry_in_the_session(tmp_path: Path) -> None:
    history = tmp_path / "history"
    with create_pipe_input() as pipe:
        pipe.send_text("let g a =\n  a *\n  2\n(1 +\n  2)\n")
        pipe.close()
        run_repl(input=pipe, output=DummyOutput(), history=history, write=lambda _: None)
    store = AtomicFileHistory(history)
    assert store.entries == ["let g a =\n  a *\n  2", "(1 +\n  2)"]
    loaded = list(store.history.load_history_strings())
    assert loaded[-1] == "let g a =\n  a *\n  2"


def test_ctrl_c_during_an_evaluation_keeps_the_session(monkeypatch: pytest.MonkeyPatch) -> None:
    import chatml.repl as repl

    real_step = repl.step

    def step_interrupted_once(state: ReplState, line: str) -> tuple[ReplState, str]:
        if line == "slow()":
            raise KeyboardInterrupt
        return real_step(state, line)

    monkeypatch.setattr(repl, "step", step_interrupted_once)
    written: list[str] = []
    with create_pipe_input() as pipe:
        pipe.send_text("let x = 1\nslow()\nx\n:quit\n")
        run_repl(input=pipe, output=DummyOutput(), write=written.append)
    assert written == ["val x : int = 1\n", "interrupted\n", "- : int = 1\n"]


def test_loop_ends_at_end_of_input_evaluating_what_is_left() -> None:
    written: list[str] = []
    with create_pipe_input() as pipe:
        pipe.send_text("print(1 +\n")
        pipe.close()
        state = run_repl(input=pipe, output=DummyOutput(), write=written.append)
    assert not state.finished
    assert written and "error[chatml.syntax_error]" in written[0]


def test_history_file_survives_damage(tmp_path: Path) -> None:
    history = tmp_path / "history"
    history.write_text('"one"\nnot json\n42\n"two"\n', encoding="utf-8")
    store = AtomicFileHistory(history)
    assert store.entries == ["one", "two"]
    store.append("three")
    assert history.read_text(encoding="utf-8") == '"one"\n"two"\n"three"\n'


def test_run_lines_without_a_terminal() -> None:
    written: list[str] = []
    state = run_lines(ReplState.start(), ["let x = 1\n", "x + 1\n", "let y =\n"], written.append)
    assert written[:2] == ["val x : int = 1\n", "- : int = 2\n"]
    assert "error[chatml.syntax_error]" in written[2]
    assert state.buffer == ""


@pytest.mark.parametrize("entry", ["-m", "script"])
def test_the_repl_subcommand_with_piped_input(entry: str) -> None:
    command = ([sys.executable, "-m", "chatml.cli"] if entry == "-m"
               else [str(Path(sys.executable).parent / "chatml")])
    result = subprocess.run([*command, "repl", "--no-history", "--max-steps", "5000"],
                            input="let x = 6\nx * 7\nlet rec loop n = loop(n)\nloop(0)\nx\n",
                            capture_output=True, text=True, cwd=REPO_ROOT, timeout=120)
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[:3] == ["val x : int = 6", "- : int = 42", "val loop : 'a -> 'b = <closure>"]
    assert "step limit exceeded" in result.stdout
    assert lines[-1] == "- : int = 6"


def _failing_match(self: object, node: object, tail: bool) -> None:
    raise RuntimeError("simulated bug")  # `node` (the match, with its span) is a local here


def test_an_internal_error_is_a_positioned_diagnostic_and_the_session_goes_on(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import chatml.compiler as compiler

    monkeypatch.setattr(compiler._Compiler, "match", _failing_match)
    script = tmp_path / "m.chatml"
    script.write_text("let a = 1\nlet b = match a with | 1 -> 2 | _ -> 3\n", encoding="utf-8")
    state, answers = session("let y = 1", "let z = match y with | 1 -> 2 | _ -> 3",
                             f":load {script}", "y + 1", "z")
    assert answers[0] == "val y : int = 1\n"
    assert answers[1].startswith("error[chatml.internal_error]: internal error while processing"
                                 " this input: RuntimeError: simulated bug")
    assert "--> <input 2>:1:9" in answers[1] and "Traceback" not in answers[1]
    assert "error[chatml.internal_error]" in answers[2] and f"--> {script}:2:9" in answers[2]
    assert answers[3] == "- : int = 2\n"  # alive, and the failed inputs defined nothing
    assert answers[4].startswith("error[chatml.unknown_variable]: Unknown variable 'z'")
    assert not state.finished


def test_an_internal_error_keeps_the_prompt_toolkit_loop_alive(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import chatml.compiler as compiler

    monkeypatch.setattr(compiler._Compiler, "match", _failing_match)
    written: list[str] = []
    with create_pipe_input() as pipe:
        pipe.send_text("let x = 4\nmatch x with | 4 -> 1 | _ -> 0\nx * 2\n:quit\n")
        run_repl(input=pipe, output=DummyOutput(), write=written.append)
    assert written[0] == "val x : int = 4\n"
    assert written[1].startswith("error[chatml.internal_error]")
    assert "<input 2>:1:1" in written[1]
    assert written[2] == "- : int = 8\n"


def test_a_bug_outside_evaluation_is_reported_too(monkeypatch: pytest.MonkeyPatch) -> None:
    import chatml.repl as repl

    def broken(text: str) -> bool:
        raise ValueError("simulated bug in the continuation check")

    monkeypatch.setattr(repl, "_needs_more", broken)
    state, answers = session("let x = ", "1")
    assert answers[0].startswith("error[chatml.internal_error]")
    assert "ValueError" in answers[0] and "<input 1>:1:1" in answers[0]
    assert state.buffer == ""
