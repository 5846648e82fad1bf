"""The VM through its host API: calls, tail calls, limits, transactions, runtime errors."""

from __future__ import annotations

import sys

import pytest

from chatml import calls
from chatml.build import builtin_names
from chatml.calls import ChatMLRuntimeError, apply, apply_callback
from chatml.compiler import compile_program
from chatml.install import MissingImplementations, install
from chatml.limits import Limits
from chatml.registration import implements
from chatml.resolve import resolve
from chatml.surfaces.model import Effect, Export, ModuleSpec, Surface
from chatml.syntax.parser import parse_program
from chatml.values import ChatMLFailure, Perform, Ref, Spawn, Variant, builtin
from chatml.vm.loader import load
from chatml.vm.run import call, run_program
from tests.chatml.vm_support import minimal_values, run_source


def loaded(text: str):  # type: ignore[no-untyped-def]
    outcome = run_source(text)
    assert outcome.error is None and outcome.program is not None, outcome.diagnostics
    return outcome.program.top_level()


def unchecked(text: str, values=None):  # type: ignore[no-untyped-def]
    """Compile without the typechecker (to reach the VM's defensive paths)."""
    values = values or minimal_values()
    program = parse_program(text, name="unchecked.chatml").program
    module = compile_program(program, resolve(program, builtin_names(values)),
                             source_name="unchecked.chatml", source_text=text, surface="core")
    return load(module, values)


# --------------------------------------------------------------------------- tail calls


def test_ten_million_step_tail_loop_runs_in_constant_stack() -> None:
    text = "let rec loop n = if n == 0 then 0 else loop(n - 1)\nprint(loop(10000000))"
    outcome = run_source(text, limits=Limits(max_depth=60))
    assert outcome.error is None, outcome.diagnostics
    assert outcome.stdout == "0\n"


def test_mutual_tail_recursion_bounces_in_constant_stack() -> None:
    text = ("let rec ev n = if n == 0 then true else od(n - 1)\n"
            "and od n = if n == 0 then false else ev(n - 1)\nprint(ev(1000001))")
    outcome = run_source(text, limits=Limits(max_depth=60))
    assert outcome.stdout == "false\n"


def test_host_call_of_a_bouncing_closure() -> None:
    top = loaded("let rec ev n = if n == 0 then true else od(n - 1)\n"
                 "and od n = if n == 0 then false else ev(n - 1)")
    assert call(top["ev"], [100000], Limits(max_depth=60)) is True
    assert apply(top["od"], [7]) is True


def test_ten_thousand_nested_non_tail_calls() -> None:
    outcome = run_source("let rec sum n = if n == 0 then 0 else n + sum(n - 1)\n"
                         "print(sum(10000))")
    assert outcome.stdout == "50005000\n"


def test_recursion_limit_is_a_runtime_error_and_restores_python_limit() -> None:
    before = sys.getrecursionlimit()
    outcome = run_source("let rec sum n = if n == 0 then 0 else n + sum(n - 1)\n"
                         "print(sum(1000000))", limits=Limits(max_depth=2000))
    assert outcome.error is not None
    assert outcome.error.diagnostic.code == "chatml.recursion_limit"
    assert outcome.error.is_limit is False or outcome.error.diagnostic.phase == "runtime"
    assert sys.getrecursionlimit() == before


# --------------------------------------------------------------------------- limits


def test_step_budget_counts_loop_iterations() -> None:
    text = "let i = ref(0)\nwhile !i < 100 do i := !i + 1 done\nprint(!i)"
    assert run_source(text, limits=Limits(max_steps=101)).stdout == "100\n"
    failed = run_source(text, limits=Limits(max_steps=99))
    assert failed.error is not None and failed.error.is_limit
    assert failed.error.diagnostic.code == "chatml.step_limit"


def test_step_budget_counts_calls() -> None:
    text = "let f x = x\nlet a = f(1)\nlet b = f(2)\nlet c = f(3)\nprint(a + b + c)"
    assert run_source(text, limits=Limits(max_steps=3)).stdout == "6\n"
    assert run_source(text, limits=Limits(max_steps=2)).error is not None


def test_steps_are_exact_across_loops_and_calls() -> None:
    # run's entry (1) + 10 iterations + 10 calls of f (10) = 21 steps
    text = ("let f x = x\nlet run () = let i = ref(0) in "
            "while !i < 10 do f(1); i := !i + 1 done\nrun()")
    assert run_source(text, limits=Limits(max_steps=21)).error is None
    failed = run_source(text, limits=Limits(max_steps=20))
    assert failed.error is not None and failed.error.diagnostic.code == "chatml.step_limit"
    # the same through a self-tail-recursive loop: 1 entry per iteration + the calls
    loop = "let f x = x\nlet rec go n = if n == 0 then 0 else (f(1); go(n - 1))\ngo(10)"
    assert run_source(loop, limits=Limits(max_steps=21)).error is None
    assert run_source(loop, limits=Limits(max_steps=20)).error is not None


def test_unlimited_budgets_never_stop_a_run() -> None:
    text = "let i = ref(0)\nwhile !i < 5000 do i := !i + 1 done\nprint(!i)"
    assert run_source(text, limits=Limits.unlimited()).stdout == "5000\n"


def test_memory_budget_counts_allocations() -> None:
    text = ("let r = ref([0])\nlet i = ref(0)\n"
            "while !i < 1000 do r := [!i, !i]; i := !i + 1 done\nprint(!i)")
    assert run_source(text, limits=Limits(max_memory=200_000)).stdout == "1000\n"
    failed = run_source(text, limits=Limits(max_memory=20_000))
    assert failed.error is not None and failed.error.diagnostic.code == "chatml.memory_limit"


def test_builtins_charge_the_same_budgets() -> None:
    @builtin("burn")
    def burn(n: int) -> None:
        calls.charge_steps(n)

    values = {**minimal_values(), "burn": burn}
    program = unchecked("burn(10)\nprint(1)", values)
    run_program(program, Limits(max_steps=20), sink=lambda text: None)
    with pytest.raises(ChatMLRuntimeError) as caught:
        run_program(program, Limits(max_steps=5), sink=lambda text: None)
    assert caught.value.diagnostic.code == "chatml.step_limit"
    assert caught.value.diagnostic.line == 1


# --------------------------------------------------------------------------- transactions


def test_failed_transactional_run_leaves_state_unchanged() -> None:
    top = loaded("let state = [0, 0]\nlet r = ref(\"before\")\n"
                 "let update n = state[0] <- n; r := \"after\"; state[1] <- 10 / n")
    with pytest.raises(ChatMLRuntimeError):
        call(top["update"], [0], transactional=True)
    assert top["state"] == [0, 0] and top["r"].value == "before"
    call(top["update"], [5], transactional=True)
    assert top["state"] == [5, 2] and top["r"].value == "after"


def test_limit_exhaustion_rolls_back_a_transaction() -> None:
    top = loaded("let state = [0]\nlet spin () = state[0] <- 1; while true do () done")
    with pytest.raises(ChatMLRuntimeError) as caught:
        call(top["spin"], [], Limits(max_steps=1000), transactional=True)
    assert caught.value.is_limit
    assert top["state"] == [0]


def test_non_transactional_run_keeps_partial_mutations() -> None:
    top = loaded("let state = [0]\nlet update n = state[0] <- n; fail(\"stop\")")
    with pytest.raises(ChatMLRuntimeError):
        call(top["update"], [3])
    assert top["state"] == [3]


def test_journal_rollback_restores_every_kind_of_change() -> None:
    array, table, cell = [1, 2], {"a": 1}, Ref("x")

    def mutate() -> None:
        calls.journal_item(array, 0)
        array[0] = 9
        calls.journal_whole(array)
        array.append(3)
        calls.journal_item(table, "b")
        table["b"] = 2
        calls.journal_item(table, "a")
        del table["a"]
        calls.journal_ref(cell)
        cell.value = "y"
        raise ChatMLFailure("boom")

    from chatml.vm.run import run_boundary

    with pytest.raises(ChatMLRuntimeError):
        run_boundary(mutate, transactional=True)
    assert array == [1, 2] and table == {"a": 1} and cell.value == "x"


# --------------------------------------------------------------------------- apply


def test_apply_checks_arity_and_callability() -> None:
    top = loaded("let add a b = a + b")
    assert apply(top["add"], [1, 2]) == 3
    with pytest.raises(ChatMLRuntimeError, match="Function arity mismatch"):
        apply(top["add"], [1])
    with pytest.raises(ChatMLRuntimeError, match="Trying to call a non-function value"):
        apply(42, [])


def test_builtin_arity_message_uses_the_short_name() -> None:
    values = install_core()
    with pytest.raises(ChatMLRuntimeError, match="^.*length: expected exactly one argument"):
        apply(values["String"]["length"], ["a", "b"])


def install_core():  # type: ignore[no-untyped-def]
    from chatml.surfaces import get_surface

    return install(get_surface("core"))


def test_apply_callback_maps_callback_errors() -> None:
    top = loaded("let one x = x")
    from chatml.vm.run import run_boundary

    with pytest.raises(ChatMLRuntimeError, match="Array.map: function arity mismatch"):
        run_boundary(lambda: apply_callback("Array.map", top["one"], [1, 2]))
    with pytest.raises(ChatMLRuntimeError, match="Array.map: expected a function"):
        run_boundary(lambda: apply_callback("Array.map", 3, [1]))
    assert run_boundary(lambda: apply_callback("Array.map", top["one"], [5])) == 5


def test_output_goes_to_the_sink() -> None:
    top = loaded("let greet name = print(\"hi \" ++ name)")
    seen: list[str] = []
    call(top["greet"], ["Ann"], sink=seen.append)
    assert seen == ["hi Ann\n"]


# --------------------------------------------------------------------------- runtime errors


def test_runtime_error_has_position_and_chatml_stack() -> None:
    text = "let inner x = 10 / x\nlet outer x = inner(x) + 1\nprint(outer(0))"
    outcome = run_source(text)
    diagnostic = outcome.error.diagnostic  # type: ignore[union-attr]
    assert (diagnostic.phase, diagnostic.code, diagnostic.message) == (
        "runtime", "chatml.division_by_zero", "Division by zero")
    assert (diagnostic.line, diagnostic.column, diagnostic.end_column) == (1, 15, 21)
    assert [name for name, _, _ in outcome.error.stack] == ["inner", "outer", "<top level>"]
    assert [r.line for r in diagnostic.related] == [2, 3]
    assert "inner (line 1) <- outer (line 2)" in (diagnostic.hint or "")


def test_failure_inside_a_builtin_is_reported_at_the_call() -> None:
    outcome = run_source("let xs = [1]\nprint(Array.get(xs, 5))")
    diagnostic = outcome.error.diagnostic  # type: ignore[union-attr]
    assert diagnostic.line == 2 and diagnostic.column == 7
    assert diagnostic.code == "chatml.failure"


def test_output_before_the_error_is_kept() -> None:
    outcome = run_source('print("a")\nprint(1 / 0)\nprint("b")')
    assert outcome.stdout == "a\n"


@pytest.mark.parametrize(("text", "message"), [
    # reachable only without the checker (decision 6a makes them static errors)
    ("let f p = match p with | { name = n } -> n\nprint(f({ name = 1; id = 2 }))",
     "Non-exhaustive pattern match"),
    ("module N = struct let a = 1 let b = N.a end", "No field 'a' in module"),
    ("print(match `A(1, 2) with | `A(x) -> 1)", "Non-exhaustive pattern match"),
    ("let f = 3\nprint(f(1))", "Trying to call a non-function value"),
    ("let f x = x\nprint(f(1, 2))", "Function arity mismatch"),
    ("print({a = 1}.b)", "No field 'b' in record"),
])
def test_defensive_runtime_errors_without_the_checker(text: str, message: str) -> None:
    program = unchecked(text)
    with pytest.raises(ChatMLRuntimeError) as caught:
        run_program(program, sink=lambda text: None)
    assert caught.value.diagnostic.message == message
    assert caught.value.diagnostic.phase == "runtime"


def test_ill_typed_operation_without_the_checker_is_a_diagnostic() -> None:
    program = unchecked('print(1 + "a")')
    with pytest.raises(ChatMLRuntimeError) as caught:
        run_program(program, sink=lambda text: None)
    assert caught.value.diagnostic.message.startswith("Internal type error")


# --------------------------------------------------------------------------- install


def _surface(globals_: list[Export], modules: list[ModuleSpec]) -> Surface:
    return Surface("test", tuple(globals_), tuple(modules), ())


def _export(name: str, effect: Effect | None = None) -> Export:
    return Export(name, "unit -> unit", effect)  # arity comes from the real scheme table


def test_install_builds_values_and_task_builders() -> None:
    registry = {"print": minimal_values()["print"]}
    surface = _surface([_export("print")], [ModuleSpec("Log", (
        _export("info", Effect("perform", "Log.info")),  # Log.info: one parameter
        _export("later", Effect("spawn", "Sched.later")),
        _export("notice", Effect("perform", "Turn.append_message", "append_notice")),
        _export("upsert", Effect("perform", "Turn.replace_message", "replace_or_append")),
    ))])
    values = install(surface, registry)
    log = values["Log"]
    node = apply(log["info"], ["hello"])
    assert isinstance(node, Perform) and (node.operation, node.args) == ("Log.info", ("hello",))
    spawned = apply(log["later"], [1, 2])
    assert isinstance(spawned, Spawn) and spawned.args == (1, 2)
    with pytest.raises(ChatMLRuntimeError, match="info: expected exactly one argument"):
        apply(log["info"], [])
    notice = apply(log["notice"], ["hi"])
    assert notice.args[0]["id"] == "system:hi"
    assert apply(log["upsert"], [Variant("None"), "item"]).operation == "Turn.append_message"
    replaced = apply(log["upsert"], [Variant("Some", ("id1",)), "item"])
    assert (replaced.operation, replaced.args) == ("Turn.replace_message", ("id1", "item"))


def test_install_reports_every_missing_implementation() -> None:
    surface = _surface([_export("print"), _export("nope")], [ModuleSpec("M", (_export("f"),))])
    with pytest.raises(MissingImplementations) as caught:
        install(surface, {"print": minimal_values()["print"]})
    assert caught.value.names == ["nope", "M.f"]


def test_core_surface_installs_from_the_real_table() -> None:
    values = install_core()
    assert {"print", "String", "Array", "Json", "Task", "Option", "Hashtbl"} <= set(values)


def test_implements_registers_under_the_qualified_name() -> None:
    registry: dict[str, object] = {}

    @implements("Demo.twice", registry)
    def twice(x: int) -> int:
        return 2 * x

    assert registry["Demo.twice"] is twice
    assert twice.chatml_builtin == "Demo.twice"  # type: ignore[attr-defined]


def test_vm_doc_embedding_example_runs() -> None:
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "docs" / "vm.md").read_text(encoding="utf-8")
    section = readme.split("**Embedding the VM**", 1)[1]
    example = section.split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(example, "docs/vm.md-example", "exec"), {})


def test_apply_from_another_thread_waits_for_its_own_run() -> None:
    import threading

    from chatml.vm.run import run_boundary

    top = loaded("let add a b = a + b")
    results: list[object] = []
    worker = threading.Thread(target=lambda: results.append(apply(top["add"], [2, 3])))

    def inside_a_run() -> None:
        worker.start()
        worker.join(timeout=0.2)  # blocked: the other thread's call waits for this run
        results.append("run done")

    run_boundary(inside_a_run)
    worker.join(timeout=10)
    assert results == ["run done", 5]
