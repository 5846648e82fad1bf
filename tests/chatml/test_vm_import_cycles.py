"""The VM side of the import graph: calls, the stdlib and the VM stay acyclic and layered.

The graph is :func:`tests.test_project.import_graph` (function-level imports included);
the project-wide test there fails on any cycle, these pin the VM's own arrangement.
"""

from __future__ import annotations

from tests.test_project import import_cycles, import_graph


def test_the_graph_sees_function_level_imports() -> None:
    run_edges, _ = import_graph()
    assert "chatml.stdlib" in run_edges["chatml.install"]  # inside load_standard_library
    assert "chatml.vm.run" in run_edges["chatml.vm"]


def test_no_cycle_among_calls_stdlib_and_vm() -> None:
    run_edges, _ = import_graph()
    scope = ("chatml.calls", "chatml.registration", "chatml.install", "chatml.journal",
             "chatml.stdlib", "chatml.vm")
    inside = {m: {n for n in targets if n.startswith(scope)}
              for m, targets in run_edges.items() if m.startswith(scope)}
    assert import_cycles(inside) == []


def test_the_cycle_finder_finds_cycles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert import_cycles(graph) == [["a", "b", "c"]]


def test_calls_imports_neither_vm_nor_stdlib() -> None:
    run_edges, _ = import_graph()
    assert not any(name.startswith(("chatml.vm", "chatml.stdlib"))
                   for name in run_edges["chatml.calls"])
