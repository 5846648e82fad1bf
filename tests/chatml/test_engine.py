"""The embedding API (``chatml.engine``): host values, conversions, limits, tasks, the docs/embedding.md example."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from chatcommon.diagnostics import DiagnosticError
from chatml.calls import ChatMLRuntimeError
from chatml.engine import ChatMLFunction, ConversionError, Engine, HostRegistrationError
from chatml.limits import Limits
from chatml.tasks import Completed, Effect, Failed, Operation, OperationError, OperationKind
from chatml.values import ChatMLFailure, Pure, Variant
from tests.support import REPO_ROOT


def test_the_embedding_doc_example_runs() -> None:
    readme = (REPO_ROOT / "docs" / "embedding.md").read_text(encoding="utf-8")
    section = readme[readme.index("### Embedding ChatML in a host (`chatml.engine`)"):]
    example = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert example is not None
    namespace: dict[str, Any] = {}
    exec(compile(example.group(1), "docs/embedding.md", "exec"), namespace)  # its asserts must hold
    assert namespace["notes"] == ["buy milk"]


def compiled(source: str, engine: Engine | None = None) -> Any:
    engine = engine or Engine(sink=[].append)
    script = engine.compile(source)
    script.run()
    return script


def test_scalars_arrays_records_and_variants_cross_by_type() -> None:
    script = compiled("""
let add a b = a + b
let half x = x /. 2.0
let flip b = if b then false else true
let shout s = String.to_upper(s)
let ignore u = 7
let sum xs = Array.fold(xs, 0, fun acc x -> acc + x)
let person name age = { name = name; age = age; tags = [name] }
let older p = { p with age = p.age + 1 }
let wrap x = `Some(x)
let unwrap o = match o with | `Some(x) -> x | `None -> 0
""")
    assert script.call("add", 2, 3) == 5
    assert script.call("half", 3) == 1.5  # an int is accepted for a float
    assert script.call("flip", True) is False
    assert script.call("shout", "é") == "É"
    assert script.call("ignore", None) == 7
    assert script.call("sum", (1, 2, 3)) == 6
    assert script.call("person", "ann", 30) == {"name": "ann", "age": 30, "tags": ["ann"]}
    assert script.call("older", {"name": "bo", "age": 1, "tags": []})["age"] == 2
    assert script.call("wrap", 5).tag == "Some"
    assert script.call("unwrap", Variant("Some", (9,))) == 9
    assert script.call("unwrap", Variant("None")) == 0


@pytest.mark.parametrize(("name", "args", "message"), [
    ("add", (1, "2"), "add: argument 2: expected an int for int, got str '2'"),
    ("add", (1, True), "add: argument 2: expected an int for int, got bool True"),
    ("add", (1, 2**62), "add: argument 2: 4611686018427387904 is outside the 63-bit range"),
    ("add", (1,), "add: expected 2 argument(s)"),
    ("sum", ([1, 2.5],), "sum: argument 1[1]: expected an int for int, got float 2.5"),
    ("sum", ("12",), "sum: argument 1: expected a list for int array"),
    ("older", ({"name": "x"},), "older: argument 1: missing field 'age'"),
    ("unwrap", (Variant("Many", (1,)),), "unwrap: argument 1: `Many is not a case of"),
    ("unwrap", (Variant("Some", (1, 2)),), "`Some takes 1 payload value(s), got 2"),
    ("unwrap", (5,), "expected a chatml.values.Variant"),
])
def test_host_values_that_do_not_fit(name: str, args: tuple[Any, ...], message: str) -> None:
    script = compiled("""
let add a b = a + b
let sum xs = Array.fold(xs, 0, fun acc x -> acc + x)
let older p = { p with age = p.age + 1 }
let unwrap o = match o with | `Some(x) -> x | `None -> 0
""")
    with pytest.raises(ConversionError) as caught:
        script.call(name, *args)
    assert message in str(caught.value)


def test_json_crosses_as_plain_json_data() -> None:
    script = compiled("""
let count_keys j = length(Json.object_keys(j))
let make : float -> json = fun n -> `Object([{ key = "n"; value = `Number(n) }, { key = "n"; value = `Null }])
let echo : json -> json = fun j -> j
""")
    assert script.call("count_keys", {"a": 1, "b": [1, 2]}) == 2
    assert script.call("make", 2.0) == {"n": 2.0}  # the first of duplicate keys wins
    assert script.call("echo", [1, {"x": None}, "s", True]) == [1.0, {"x": None}, "s", True]
    with pytest.raises(ConversionError, match="echo: argument 1: a Python set has no JSON form"):
        script.call("echo", {1, 2})


def test_functions_cross_both_ways() -> None:
    script = compiled("""
let apply f x = f(x)
let twice f = fun x -> f(f(x))
let adder n = fun x -> x + n
let map_all xs f = Array.map(xs, f)
""")
    assert script.call("apply", lambda x: x * 10, 4) == 40
    add5 = script.call("adder", 5)
    assert isinstance(add5, ChatMLFunction) and add5(1) == 6
    assert script.call("twice", add5)(0) == 10  # a ChatML function handed back is unwrapped
    assert script.call("map_all", ["a", "bc"], len) == [1, 2]
    with pytest.raises(ChatMLRuntimeError, match="apply: argument 1: ZeroDivisionError"):
        script.call("apply", lambda x: 1 // x, 0)


def test_host_functions_modules_and_values() -> None:
    engine = Engine(sink=[].append)
    engine.register_function("greet", "string -> string", lambda name: f"hello {name}")
    engine.register_function("pick", "'a array -> int -> 'a", lambda xs, i: xs[i])
    engine.register_function("refuse", "string -> int",
                             lambda why: (_ for _ in ()).throw(ChatMLFailure(f"refused: {why}")))
    engine.register_value("settings", "{ depth : int; name : string }", {"depth": 2, "name": "x"})
    engine.register_module("Geo", {"dist": ("float -> float -> float", lambda a, b: abs(a - b)),
                                   "origin": ("float", 0)})
    script = compiled("""
let a = greet("ann")
let b = pick(["x", "y"], 1)
let c = pick([1, 2], 0)
let d = Geo.dist(Geo.origin, 2.5) +. 0.5
let e = settings.depth * 10
""", engine)
    assert [script.get(n) for n in "abcde"] == ["hello ann", "y", 1, 3.0, 20]
    assert script.type_of("b") == "string"
    with pytest.raises(ChatMLRuntimeError) as caught:
        compiled('let boom = refuse("no")', engine)
    assert caught.value.message == "refused: no"
    assert caught.value.diagnostic.line == 1


def test_a_host_result_of_the_wrong_type_is_a_runtime_error() -> None:
    engine = Engine()
    engine.register_function("bad", "unit -> int", lambda: "not an int")
    with pytest.raises(ChatMLRuntimeError) as caught:
        compiled("let x = bad()", engine)
    assert caught.value.message == "bad: result: expected an int for int, got str 'not an int'"


@pytest.mark.parametrize(("register", "message"), [
    (lambda e: e.register_function("print", "int -> int", abs), "would shadow the builtin 'print'"),
    (lambda e: e.register_module("String", {}), "would shadow the builtin 'String'"),
    (lambda e: e.register_module("geo", {}), "module names start with a capital letter"),
    (lambda e: e.register_function("f", "int -> nope", abs), "unknown type name 'nope'"),
    (lambda e: e.register_function("Bad-name", "int -> int", abs),
     "'Bad-name' is not a valid ChatML value name"),
    (lambda e: e.register_module("M", {"Up": ("int", 1)}), "'Up' is not a valid ChatML value name"),
    (lambda e: e.register_function("f", "int ->", abs), "cannot read the ChatML type"),
    (lambda e: e.register_function("f", "int", abs), "needs a function type"),
    (lambda e: e.register_function("f", "int -> int", 3), "expected a callable"),
    (lambda e: e.register_module("M", {"op": ("int -> int", Engine.perform("M.op"))}),
     "an operation's type must return a task"),
])
def test_registration_errors(register: Any, message: str) -> None:
    with pytest.raises(HostRegistrationError, match=re.escape(message)):
        register(Engine())


def test_registration_value_conversion_errors() -> None:
    with pytest.raises(ConversionError, match="limit: expected an int for int"):
        Engine().register_value("limit", "int", "ten")


def test_compile_errors_carry_every_diagnostic() -> None:
    with pytest.raises(DiagnosticError) as caught:
        Engine().compile("let a = 1 + true\nlet b = nope\n", name="broken.chatml")
    codes = [(d.file, d.line) for d in caught.value.diagnostics]
    assert codes == [("broken.chatml", 1), ("broken.chatml", 2)]
    with pytest.raises(DiagnosticError) as caught:
        Engine().compile("let x = (1")
    assert caught.value.first.code == "chatml.syntax_error"


def test_compile_file(tmp_path: Any) -> None:
    path = tmp_path / "s.chatml"
    path.write_text("let x = 40 + 2\n", encoding="utf-8")
    script = Engine().compile_file(path)
    script.run()
    assert script.get("x") == 42 and script.name == str(path)
    (tmp_path / "bad.chatml").write_bytes(b"let x = \xff")
    with pytest.raises(DiagnosticError, match="not UTF-8 text"):
        Engine().compile_file(tmp_path / "bad.chatml")
    with pytest.raises(DiagnosticError, match="cannot read"):
        Engine().compile_file(tmp_path / "missing.chatml")


def test_limits_sink_and_transactions() -> None:
    printed: list[str] = []
    engine = Engine(sink=printed.append, transactional=True)
    script = compiled("""
let state = [0]
let bump n = (state[0] <- state[0] + n; print(state[0]); if n > 5 then fail("too big") else state[0])
let rec spin n = spin(n + 1)
""", engine)
    assert script.call("bump", 2) == 2
    with pytest.raises(ChatMLRuntimeError, match="too big"):
        script.call("bump", 10)
    assert script.value("state") == [2]  # rolled back
    assert printed == ["2\n", "12\n"]
    engine.set_limits(max_steps=1000)
    assert engine.limits.max_steps == 1000 and engine.limits.max_depth == Limits().max_depth
    with pytest.raises(ChatMLRuntimeError) as caught:
        script.call("spin", 0)
    assert caught.value.is_limit and "step limit exceeded" in caught.value.message


def test_script_lifecycle_errors() -> None:
    script = Engine().compile("let x = 1")
    with pytest.raises(RuntimeError, match="run\\(\\)"):
        script.get("x")
    script.run()
    with pytest.raises(RuntimeError, match="already run"):
        script.run()
    with pytest.raises(KeyError):
        script.get("y")
    with pytest.raises(TypeError, match="x is not a function"):
        script.call("x")
    assert script.val_lines() == ["val x : int"]


def test_tasks_with_host_operations() -> None:
    engine = Engine()
    log: list[str] = []

    def fetch(interpreter: Any, args: tuple[Any, ...]) -> Any:
        if args[0] == "missing":
            raise OperationError(f"no such page: {args[0]}")
        log.append(args[0])
        return "<html>"

    engine.register_module("Web", {
        "fetch": ("string -> string task", engine.perform("Web.fetch")),
        "crawl": ("string -> string task", engine.spawn("Web.crawl")),
    })
    script = compiled("""
let page url = Task.map(Web.fetch(url), String.length)
let safe url = Task.catch(page(url), fun m -> Task.pure(0 - String.length(m)))
let background url = Web.crawl(url)
""", engine)
    operations = [Operation("Web.fetch", OperationKind.EXTERNAL, fetch),
                  Operation("Web.crawl", OperationKind.ASYNC, lambda i, a: "job-1")]
    assert script.run_task("page", "a", operations=operations) == Completed(6, ())
    assert script.run_task("page", "missing", operations=operations) == Failed(
        "no such page: missing")
    assert script.run_task("safe", "missing", operations=operations) == Completed(-21, ())
    assert script.run_task("background", "b", operations=operations, max_spawns=0) == Failed(
        "ChatML task limit exceeded")
    assert script.run_task("background", "b", operations=operations) == Completed("job-1", ())
    assert log == ["a"]
    assert engine.run_task(Pure(1)) == Completed(1, ())
    with pytest.raises(TypeError, match="does not return a task"):
        compiled("let f x = x").run_task("f", 1)
    with pytest.raises(ConversionError, match="page takes 1 argument"):
        script.run_task("page", "a", "b", operations=operations)


def test_effects_of_local_operations() -> None:
    engine = Engine()
    engine.register_module("Turn", {"note": ("string -> unit task", engine.perform("Turn.note"))})
    script = compiled("""
let handler st = Task.bind(Turn.note("a"), fun u -> Task.bind(Turn.note("b"), fun u -> Task.pure(st + 1)))
""", engine)
    outcome = script.run_task("handler", 41, operations=[
        Operation("Turn.note", OperationKind.LOCAL, lambda i, a: None)])
    assert outcome == Completed(42, (Effect("Turn.note", ("a",)), Effect("Turn.note", ("b",))))


def test_engine_compiles_what_the_checker_accepts_however_deep() -> None:
    # The engine resolves and compiles on the checker's stack budget, as build_source does.
    depth = 12_000
    source = "let x = " + "(" * depth + "1" + " + 1)" * depth
    script = Engine("core").compile(source, name="deep.chatml")
    assert script.type_of("x") == "int"
    script.run()
    assert script.get("x") == depth + 1


def test_engine_reports_unreadable_files_like_the_cli(tmp_path: Path) -> None:
    path = tmp_path / "bad.chatml"
    path.write_bytes(b"let x = \xff")
    with pytest.raises(DiagnosticError) as raised:
        Engine("core").compile_file(str(path))
    [diagnostic] = raised.value.diagnostics
    assert diagnostic.code == "chatml.unreadable_file"
    assert diagnostic.phase == "input"
    assert "not UTF-8 text (invalid byte at offset 8)" in diagnostic.message
