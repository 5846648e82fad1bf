"""No import cycle among the calling convention, the standard library and the VM.

The import graph counts imports inside functions too (``tests.chatml.import_graph``):
``chatml.calls`` (and its companions ``chatml.registration``, ``chatml.install``,
``chatml.journal``), ``chatml.stdlib.*`` and ``chatml.vm.*`` must form no cycle.
"""

from __future__ import annotations

from tests.chatml.import_graph import cycles, import_graph

SCOPE = ("chatml.calls", "chatml.registration", "chatml.install", "chatml.journal",
         "chatml.stdlib", "chatml.vm")


def test_the_graph_sees_function_level_imports() -> None:
    graph = import_graph()
    assert "chatml.stdlib" in graph["chatml.install"]  # imported inside load_standard_library
    assert "chatml.vm.run" in graph["chatml.vm"]


def test_no_cycle_among_calls_stdlib_and_vm() -> None:
    assert cycles(import_graph(), SCOPE) == []


def test_the_cycle_finder_finds_cycles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_calls_imports_neither_vm_nor_stdlib() -> None:
    imported = import_graph()["chatml.calls"]
    assert not any(name.startswith(("chatml.vm", "chatml.stdlib")) for name in imported)
