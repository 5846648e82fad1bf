"""``benchmarks/chatml_vm.py``: what it runs is what it says (without running the timings).

Every workload's ChatML program prints what its CPython counterpart returns,
at the in-process size and at the larger size the whole-process runs use;
the scaled source differs from the original only in its size; and without
the optional ``starlark`` package the script says how to install it instead
of failing on the import.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from chatml.build import build_source, runtime_values
from chatml.limits import Limits
from chatml.vm.loader import load
from chatml.vm.run import run_program

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "chatml_vm.py"


def _benchmark() -> ModuleType:
    spec = importlib.util.spec_from_file_location("chatml_vm_benchmark", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BENCH = _benchmark()


def _printed(source: str) -> str:
    values = runtime_values("core")
    built = build_source(source, "bench.chatml", values=values)
    output: list[str] = []
    run_program(load(built.module, values), Limits(), sink=output.append)
    return "".join(output).strip()


@pytest.mark.parametrize("name", sorted(BENCH.CHATML))
def test_each_workload_computes_what_cpython_computes(name: str) -> None:
    assert BENCH.sized_source(name, BENCH.SIZES[name]) == BENCH.CHATML[name]
    small = 3 if name == "fib" else 300  # the same program at a small size
    assert _printed(BENCH.sized_source(name, small)) == str(BENCH.PYTHON[name](small))
    scaled = BENCH.sized_source(name, BENCH.process_size(name))
    assert scaled.replace(str(BENCH.process_size(name)), str(BENCH.SIZES[name])) \
        == BENCH.CHATML[name]
    assert BENCH.process_size(name) > BENCH.SIZES[name]


def test_without_starlark_it_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "starlark", None)  # `import starlark` raises ImportError
    assert BENCH.starlark_available() is False
    assert "pip install -e '.[bench]'" in BENCH.STARLARK_MISSING
