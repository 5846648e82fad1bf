"""The host-side task interpreter (stdlib spec 8, DECISIONS 4) with a fake operation registry.

Tasks and continuations are real ChatML values from compiled programs; every
test runs twice: with the interpreter called directly by the host (each
callback is then its own run) and inside one ``run_boundary`` (as a moderator
host runs a handler), where failures surface as plain Python exceptions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from chatml.calls import ChatMLRuntimeError
from chatml.limits import LimitExceeded, Limits
from chatml.tasks import (
    Completed,
    DuplicateOperations,
    Effect,
    Failed,
    Operation,
    OperationError,
    OperationKind,
    OperationRegistry,
    Suspend,
    Suspended,
    TaskFuelExhausted,
    TaskInterpreter,
    TaskOutcome,
)
from chatml.values import Bind, Catch, Fail, Map, Perform, Pure, Spawn, Value
from chatml.vm.run import call, run_boundary
from tests.chatml.stdlib_support import closures

SCRIPT = closures("""
let add_one x = Task.pure(x + 1)
let double x = x * 2
let chain t = Task.bind(t, add_one)
let boom x = Task.pure(fail("boom"))
let out_of_bounds x = Task.pure(Array.get([1], x))
let divide x = Task.pure(100 / x)
let recover m = Task.pure("recovered: " ++ m)
let keep m = Task.pure(m)
let not_a_task x = x
let rec spin n = spin(n + 1)
let spin_task x = Task.pure(spin(0))
let long_chain n =
  let t = ref(Task.pure(0)) in
  let i = ref(0) in
  while !i < n do
    t := Task.bind(!t, add_one);
    i := !i + 1
  done;
  !t
let rec countdown n = if n == 0 then Task.pure("done") else Task.bind(Task.pure(n - 1), countdown)
let fail_in_handler m = fail("handler failed: " ++ m)
let fail_value x = fail("map failed")
""")

TASKS = closures("""
let perform_after t = fun u -> t
let then_fail t = Task.bind(t, fun u -> Task.fail("later"))
let sequence a b = Task.bind(a, fun u -> b)
""")


class Host:
    """A fake host: records what external/diagnostic operations did."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self.emitted: list[Value] = []

    def registry(self, extra: list[Operation] = ()) -> OperationRegistry:  # type: ignore[assignment]
        def log(run: TaskInterpreter, args: tuple[Value, ...]) -> Value:
            self.log.append(f"log {args[0]}")
            return None

        def call_tool(run: TaskInterpreter, args: tuple[Value, ...]) -> Value:
            self.log.append(f"tool {args[0]}")
            if args[0] == "broken":
                raise OperationError("Tool.call failed: broken")
            return f"result of {args[0]}"

        def spawn(run: TaskInterpreter, args: tuple[Value, ...]) -> Value:
            self.log.append(f"spawn {args[0]}")
            return f"job-{run.spawned}"

        def emit(run: TaskInterpreter, args: tuple[Value, ...]) -> Value:
            self.emitted.append(args[0])
            return None

        def ask(run: TaskInterpreter, args: tuple[Value, ...]) -> Value:
            if run.resumed:
                raise OperationError("Nested UI approval is not allowed.")
            raise Suspend({"question": args[0]})

        def only_at_turn_end(phase: str) -> str | None:
            return None if phase == "turn_end" else "expected one of [turn_end]"

        operations = [
            Operation("Log.info", OperationKind.DIAGNOSTIC, log),
            Operation("Tool.call", OperationKind.EXTERNAL, call_tool),
            Operation("Model.spawn", OperationKind.ASYNC, spawn),
            Operation("Turn.prepend_system", OperationKind.LOCAL, lambda run, args: None),
            Operation("Runtime.emit", OperationKind.LOCAL, emit),
            Operation("Approval.ask_text", OperationKind.EXTERNAL, ask),
            Operation("Runtime.request_turn", OperationKind.LOCAL, lambda run, args: None,
                      only_at_turn_end),
            *extra,
        ]
        return OperationRegistry(operations)


class EmittedBuffer:
    """A host buffer restored by Task.catch (the Transactional protocol)."""

    def __init__(self, host: Host) -> None:
        self.host = host

    def savepoint(self) -> int:
        return len(self.host.emitted)

    def rollback(self, savepoint: int) -> None:
        del self.host.emitted[savepoint:]


Runner = Callable[[TaskInterpreter, Value], TaskOutcome]


def _direct(interpreter: TaskInterpreter, task: Value) -> TaskOutcome:
    return interpreter.run(task)


def _inside_a_run(interpreter: TaskInterpreter, task: Value) -> TaskOutcome:
    return run_boundary(lambda: interpreter.run(task), Limits(), transactional=True)


@pytest.fixture(params=[_direct, _inside_a_run], ids=["direct", "inside-run"])
def run(request: pytest.FixtureRequest) -> Callable[..., TaskOutcome]:
    runner: Runner = request.param

    def run_task(task: Value, host: Host | None = None, **options: Any) -> TaskOutcome:
        host = host or Host()
        options.setdefault("buffers", [EmittedBuffer(host)])
        return runner(TaskInterpreter(host.registry(), **options), task)

    return run_task


def log(text: str) -> Perform:
    return Perform("Log.info", (text,))


def test_pure_bind_and_map(run: Callable[..., TaskOutcome]) -> None:
    assert run(Pure(1)) == Completed(1, ())
    assert run(Bind(Pure(1), SCRIPT["add_one"])) == Completed(2, ())
    assert run(Map(Bind(Pure(20), SCRIPT["add_one"]), SCRIPT["double"])) == Completed(42, ())
    assert run(call(SCRIPT["chain"], [Pure(5)])) == Completed(6, ())


def test_long_chains_need_no_python_recursion(run: Callable[..., TaskOutcome]) -> None:
    assert run(call(SCRIPT["long_chain"], [50_000])) == Completed(50_000, ())
    assert run(call(SCRIPT["countdown"], [50_000])) == Completed("done", ())


def test_fail_and_catch(run: Callable[..., TaskOutcome]) -> None:
    assert run(Fail("x")) == Failed("x")
    assert run(Catch(Fail("x"), SCRIPT["keep"])) == Completed("x", ())  # checklist 76
    assert run(Bind(Fail("early"), SCRIPT["add_one"])) == Failed("early")
    assert run(Catch(Pure(3), SCRIPT["recover"])) == Completed(3, ())
    # a failure inside the handler goes to the next catch out
    nested = Catch(Catch(Fail("inner"), SCRIPT["fail_in_handler"]), SCRIPT["recover"])
    assert run(nested) == Completed("recovered: handler failed: inner", ())


@pytest.mark.parametrize(("continuation", "argument", "message"), [
    ("boom", 1, "boom"),
    ("out_of_bounds", 5, "Array.get: index out of bounds"),
    ("divide", 0, "Division by zero"),
    ("not_a_task", 1, "Task.bind: the continuation must return a task, not an int"),
])
def test_runtime_errors_in_continuations_are_catchable(
        run: Callable[..., TaskOutcome], continuation: str, argument: int, message: str) -> None:
    """DECISIONS 4 (the reference let these escape Task.catch, checklist 78)."""
    failing = Bind(Pure(argument), SCRIPT[continuation])
    assert run(failing) == Failed(message)
    assert run(Catch(failing, SCRIPT["recover"])) == Completed(f"recovered: {message}", ())


def test_errors_in_map_functions_and_handlers_are_catchable(
        run: Callable[..., TaskOutcome]) -> None:
    assert run(Map(Pure(2), SCRIPT["fail_value"])) == Failed("map failed")
    assert run(Catch(Map(Pure(2), SCRIPT["fail_value"]), SCRIPT["keep"])) == Completed(
        "map failed", ())
    assert run(Catch(Catch(Fail("m"), SCRIPT["not_a_task"]), SCRIPT["keep"])) == Completed(
        "Task.catch: the handler must return a task, not a string", ())


def test_budgets_are_never_caught(run: Callable[..., TaskOutcome]) -> None:
    spinning = Catch(Bind(Pure(0), SCRIPT["spin_task"]), SCRIPT["recover"])
    with pytest.raises((LimitExceeded, ChatMLRuntimeError)) as caught:
        run_boundary(lambda: TaskInterpreter(Host().registry()).run(spinning),
                     Limits(max_steps=10_000))
    assert "step limit exceeded" in str(caught.value)
    with pytest.raises((TaskFuelExhausted, ChatMLRuntimeError), match="ChatML task fuel exhausted"):
        run(Catch(call(SCRIPT["long_chain"], [100]), SCRIPT["recover"]), fuel=50)
    assert run(call(SCRIPT["long_chain"], [10]), fuel=100) == Completed(10, ())


def test_a_step_limit_outside_any_run_is_not_caught_either() -> None:
    spinning = Catch(Bind(Pure(0), SCRIPT["spin_task"]), SCRIPT["recover"])
    with pytest.raises(ChatMLRuntimeError) as caught:
        run_boundary(lambda: TaskInterpreter(Host().registry()).run(spinning),
                     Limits(max_steps=5_000))
    assert caught.value.is_limit


def test_operations_and_effects(run: Callable[..., TaskOutcome]) -> None:
    host = Host()
    then_search = call(TASKS["perform_after"], [Perform("Tool.call", ("search",))])
    program = Bind(Perform("Turn.prepend_system", ("be brief",)), then_search)
    outcome = run(Bind(log("hello"), call(TASKS["perform_after"], [program])), host)
    assert outcome == Completed("result of search", (Effect("Turn.prepend_system", ("be brief",)),))
    assert host.log == ["log hello", "tool search"]


def seq(*tasks: Value) -> Value:
    result = tasks[-1]
    for task in reversed(tasks[:-1]):
        result = call(TASKS["sequence"], [task, result])
    return result


def test_local_effects_are_recorded_in_order_and_dropped_by_a_catch(
        run: Callable[..., TaskOutcome]) -> None:
    host = Host()
    protected = seq(Perform("Turn.prepend_system", ("inside",)), log("inside"),
                    Perform("Runtime.emit", ("event",)), Perform("Tool.call", ("t1",)),
                    Fail("no"))
    task = seq(Perform("Turn.prepend_system", ("before",)),
               Catch(protected, SCRIPT["keep"]),
               Perform("Turn.prepend_system", ("after",)))
    outcome = run(task, host)
    assert outcome == Completed(None, (Effect("Turn.prepend_system", ("before",)),
                                       Effect("Turn.prepend_system", ("after",))))
    assert host.log == ["log inside", "tool t1"]  # external work is not undone
    assert host.emitted == []  # the host buffer was rolled back to the catch point


def test_checklist_77_catch_commits_no_prepend(run: Callable[..., TaskOutcome]) -> None:
    task = Catch(call(TASKS["then_fail"], [Perform("Turn.prepend_system", ("a",))]),
                 SCRIPT["recover"])
    assert run(task) == Completed("recovered: later", ())


def test_dispatch_errors_are_catchable_failures(run: Callable[..., TaskOutcome]) -> None:
    cases = [
        (Perform("Nope.op", ()), "Unknown task operation 'Nope.op'"),
        (Perform("Model.spawn", ("r",)), "Operation 'Model.spawn' must be spawned"),
        (Spawn("Tool.call", ("x",)), "Operation 'Tool.call' is not spawnable"),
        (Spawn("Nope.op", ()), "Unknown task operation 'Nope.op'"),
        (Perform("Tool.call", ("broken",)), "Tool.call failed: broken"),
        (Perform("Runtime.request_turn", ()),
         "Operation 'Runtime.request_turn' is invalid in phase 'turn_start': "
         "expected one of [turn_end]"),
    ]
    for task, message in cases:
        assert run(task, phase="turn_start") == Failed(message)
        assert run(Catch(task, SCRIPT["keep"]), phase="turn_start") == Completed(message, ())
    assert run(Perform("Runtime.request_turn", ()), phase="turn_end") == Completed(
        None, (Effect("Runtime.request_turn", ()),))


def test_spawns_are_counted_and_limited(run: Callable[..., TaskOutcome]) -> None:
    host = Host()
    two = seq(Spawn("Model.spawn", ("a",)), Spawn("Model.spawn", ("b",)))
    assert run(two, host) == Completed("job-2", ())
    assert host.log == ["spawn a", "spawn b"]
    host = Host()
    assert run(two, host, max_spawns=1) == Failed("ChatML task limit exceeded")
    assert host.log == ["spawn a"]
    assert run(Catch(two, SCRIPT["keep"]), max_spawns=1) == Completed(
        "ChatML task limit exceeded", ())


def test_suspend_and_resume() -> None:
    host = Host()
    interpreter = TaskInterpreter(host.registry())
    task = seq(Perform("Turn.prepend_system", ("before",)),
               Bind(Perform("Approval.ask_text", ("continue?",)), SCRIPT["keep"]))
    assert interpreter.run(task) == Suspended({"question": "continue?"})
    assert interpreter.resume("yes") == Completed("yes", (Effect("Turn.prepend_system",
                                                                 ("before",)),))
    with pytest.raises(RuntimeError):
        interpreter.resume("again")


def test_nested_approval_after_a_resume_fails() -> None:
    interpreter = TaskInterpreter(Host().registry())
    ask = Perform("Approval.ask_text", ("q",))
    assert isinstance(interpreter.run(seq(ask, ask)), Suspended)
    assert interpreter.resume("a") == Failed("Nested UI approval is not allowed.")


def test_resume_with_an_error_reaches_the_catch() -> None:
    interpreter = TaskInterpreter(Host().registry())
    assert isinstance(interpreter.run(Catch(Perform("Approval.ask_text", ("q",)),
                                            SCRIPT["recover"])), Suspended)
    assert interpreter.resume_with_error("refused") == Completed("recovered: refused", ())


def test_registry_rejects_duplicates() -> None:
    noop = Operation("A.b", OperationKind.LOCAL, lambda run, args: None)
    with pytest.raises(DuplicateOperations) as caught:
        OperationRegistry([noop, noop, Operation("C.d", OperationKind.LOCAL, noop.perform), noop,
                           Operation("C.d", OperationKind.ASYNC, noop.perform)])
    assert str(caught.value) == "Duplicate moderator runtime operations: A.b, C.d"


def test_an_interpreter_runs_one_task() -> None:
    interpreter = TaskInterpreter(OperationRegistry())
    interpreter.run(Pure(1))
    with pytest.raises(RuntimeError):
        interpreter.run(Pure(2))
    with pytest.raises(TypeError, match="expected a ChatML task, got an int"):
        TaskInterpreter(OperationRegistry()).run(3)
