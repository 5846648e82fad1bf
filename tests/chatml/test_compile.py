"""The compiler's decisions (tail calls, equality, matches, positions) and the run/compile/dis CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chatcommon.diagnostics import DiagnosticError
from chatml.build import build_source
from chatml.bytecode.code import CodeObject, CompiledModule
from chatml.bytecode.opcodes import Op
from chatml.bytecode.serialize import deserialize
from chatml.vm.loader import load
from tests.chatml.vm_support import core_values, run_source

REPO = Path(__file__).resolve().parents[2]


def compiled(text: str) -> CompiledModule:
    return build_source(text, "t.chatml", values=core_values()).module


def code_named(module: CompiledModule, name: str) -> CodeObject:
    return next(code for code in module.codes if code.name == name)


def ops(code: CodeObject) -> list[Op]:
    return [Op(op) for op, _, _ in code.instructions]


# --------------------------------------------------------------------------- tail calls


def test_self_tail_call_becomes_a_loop() -> None:
    code = code_named(compiled("let rec loop n = if n == 0 then 0 else loop(n - 1)"), "loop")
    assert Op.SELF_TAIL_CALL in ops(code) and code.self_loop and not code.may_bounce


def test_non_tail_recursion_calls_directly_without_trampoline() -> None:
    code = code_named(compiled("let rec fib n = if n < 2 then n else fib(n - 1) + fib(n - 2)"),
                      "fib")
    assert ops(code).count(Op.CALL_RAW) == 2 and Op.CALL not in ops(code)
    assert not code.may_bounce and not code.self_loop


def test_mutual_tail_calls_bounce() -> None:
    module = compiled("let rec ev n = if n == 0 then true else od(n - 1)\n"
                      "and od n = if n == 0 then false else ev(n - 1)")
    for name in ("ev", "od"):
        assert Op.TAIL_CALL in ops(code_named(module, name))
        assert code_named(module, name).may_bounce


def test_calls_to_bouncing_functions_run_the_trampoline() -> None:
    module = compiled("let rec ev n = if n == 0 then true else od(n - 1)\n"
                      "and od n = if n == 0 then false else ev(n - 1)\nprint(ev(4))")
    assert Op.CALL in ops(module.codes[0])


def test_tail_call_to_a_known_function_is_direct() -> None:
    module = compiled("let inc x = x + 1\nlet f x = inc(x)\nlet g h x = h(x)")
    assert ops(code_named(module, "f"))[-2:] == [Op.CALL_RAW, Op.RETURN]
    assert not code_named(module, "f").may_bounce
    assert ops(code_named(module, "g"))[-1] == Op.TAIL_CALL


def test_tail_positions_follow_the_spec() -> None:
    module = compiled("let f g x = match x with | 0 -> g(1) | _ -> (let y = g(2) in g(y))\n"
                      "let h g = g(1) + 1\nlet k g = (g(1); g(2))")
    assert ops(code_named(module, "f")).count(Op.TAIL_CALL) == 2
    assert Op.TAIL_CALL not in ops(code_named(module, "h"))
    assert ops(code_named(module, "k")).count(Op.TAIL_CALL) == 1


# --------------------------------------------------------------------------- equality and matches


def test_equality_on_primitives_is_specialised() -> None:
    module = compiled("let a x = x == 0\nlet b x y = if x < 0 then y == x else false\n"
                      "let c p q = p == q")
    assert Op.EQ_PRIM in ops(code_named(module, "a"))
    assert Op.EQ_PRIM in ops(code_named(module, "b"))  # from the checker's binder types
    assert Op.EQ in ops(code_named(module, "c"))


def test_match_with_catch_all_has_no_failure_branch() -> None:
    with_default = compiled("let f v = match v with | `A -> 1 | x -> 2")
    assert Op.MATCH_FAIL not in ops(code_named(with_default, "f"))
    without = compiled("let f v = match v with | `A -> 1 | `B -> 2")
    assert Op.MATCH_FAIL in ops(code_named(without, "f"))


def test_positions_point_at_the_source() -> None:
    module = compiled("let x = 1\nprint(x / 0)")
    main = module.codes[0]
    div = ops(main).index(Op.DIV)
    assert main.positions[div] == (2, 7, 2, 12)


# --------------------------------------------------------------------------- size and depth


def test_long_programs_compile() -> None:
    chain = " + ".join(["1"] * 2000)
    assert run_source(f"print({chain})").stdout == "2000\n"
    huge = run_source("print(" + " + ".join(["1"] * 50000) + ")")
    assert huge.stdout == "50000\n" or huge.diagnostics[0].code == "chatml.too_deep"
    lets = "".join(f"let x{i} = {i}\n" for i in range(3000))
    assert run_source(lets + "print(x2999)").stdout == "2999\n"


def test_too_deep_nesting_is_a_diagnostic() -> None:
    depth = 300
    text = "print(" + "if true then " * depth + "1" + " else 2" * depth + ")"
    try:
        result = build_source(text, "deep.chatml", values=core_values())
        load(result.module, core_values())
    except DiagnosticError as error:
        assert error.code in ("chatml.too_deep",) or error.first.phase in ("parse", "type")
    else:  # the host managed it after all: then it must run correctly
        assert run_source(text).stdout == "1\n"


# --------------------------------------------------------------------------- CLI


def chatml(*args: str, cwd: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "chatml.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "ok.chatml").write_text('let rec f n = if n == 0 then 0 else f(n - 1)\n'
                                        'print("hello")\nprint(f(10))\n')
    (tmp_path / "typed.chatml").write_text('print("not run")\nprint(1 + "a")\n')
    (tmp_path / "boom.chatml").write_text('print("before")\nprint(1 / 0)\nprint("after")\n')
    (tmp_path / "spin.chatml").write_text("while true do () done\n")
    return tmp_path


def test_cli_run_success(workdir: Path, tmp_path: Path) -> None:
    result = chatml("run", "ok.chatml", cwd=workdir, cache=tmp_path / "c")
    assert (result.returncode, result.stdout, result.stderr) == (0, "hello\n0\n", "")
    assert list((tmp_path / "c" / "chatml").iterdir())  # cached, outside the working folder
    assert sorted(p.name for p in workdir.iterdir() if p.is_file()) == [
        "boom.chatml", "ok.chatml", "spin.chatml", "typed.chatml"]


def test_cli_type_error_runs_nothing(workdir: Path, tmp_path: Path) -> None:
    result = chatml("run", "typed.chatml", cwd=workdir, cache=tmp_path / "c")
    assert result.returncode == 1 and result.stdout == ""
    assert "Cannot unify" in result.stderr and "typed.chatml:2" in result.stderr


def test_cli_runtime_error_flushes_output_first(workdir: Path, tmp_path: Path) -> None:
    result = chatml("run", "boom.chatml", cwd=workdir, cache=tmp_path / "c")
    assert result.returncode == 3 and result.stdout == "before\n"
    assert "error[chatml.division_by_zero]: Division by zero" in result.stderr
    assert "boom.chatml:2:7" in result.stderr and "Traceback" not in result.stderr


def test_cli_json_diagnostics(workdir: Path, tmp_path: Path) -> None:
    result = chatml("run", "boom.chatml", "--format", "json", cwd=workdir, cache=tmp_path / "c")
    document = json.loads(result.stderr)
    [diagnostic] = document["diagnostics"]
    assert (diagnostic["phase"], diagnostic["line"], diagnostic["code"]) == (
        "runtime", 2, "chatml.division_by_zero")


def test_cli_limits(workdir: Path, tmp_path: Path) -> None:
    result = chatml("run", "spin.chatml", "--max-steps", "1000", cwd=workdir,
                    cache=tmp_path / "c")
    assert result.returncode == 3 and "step limit exceeded" in result.stderr
    result = chatml("run", "spin.chatml", "--max-steps", "zero", cwd=workdir,
                    cache=tmp_path / "c")
    assert result.returncode == 2


def test_cli_usage_errors(workdir: Path, tmp_path: Path) -> None:
    missing = chatml("run", "missing.chatml", cwd=workdir, cache=tmp_path / "c")
    assert missing.returncode == 2 and "cannot read missing.chatml" in missing.stderr
    assert "chatml.unreadable_file" in missing.stderr
    assert chatml("run", cwd=workdir, cache=tmp_path / "c").returncode == 2
    assert chatml("compile", "ok.chatml", cwd=workdir, cache=tmp_path / "c").returncode == 2


def test_cli_compile_then_run_bytecode(workdir: Path, tmp_path: Path) -> None:
    (workdir / "out").mkdir()  # a missing output folder is an error (exit 2)
    result = chatml("compile", "ok.chatml", "-o", "out/ok.cmlb", cwd=workdir,
                    cache=tmp_path / "c")
    assert result.returncode == 0, result.stderr
    data = (workdir / "out" / "ok.cmlb").read_bytes()
    assert deserialize(data).source_name == "ok.chatml"
    again = chatml("run", "out/ok.cmlb", cwd=workdir, cache=tmp_path / "c")
    assert (again.returncode, again.stdout) == (0, "hello\n0\n")
    (workdir / "bad.cmlb").write_bytes(data[:40])
    bad = chatml("run", "bad.cmlb", cwd=workdir, cache=tmp_path / "c")
    assert bad.returncode == 1 and "invalid bytecode" in bad.stderr


def test_cli_dis(workdir: Path, tmp_path: Path) -> None:
    result = chatml("dis", "ok.chatml", cwd=workdir, cache=tmp_path / "c")
    assert result.returncode == 0
    assert "== f  (code 1" in result.stdout and "SELF_TAIL_CALL" in result.stdout


def test_cli_works_without_a_writable_cache(workdir: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("not a folder")
    result = chatml("run", "ok.chatml", cwd=workdir, cache=blocker)
    assert (result.returncode, result.stdout) == (0, "hello\n0\n")
