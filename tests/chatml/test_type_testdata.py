"""Runs the data-driven typechecker cases in tests/chatml/testdata/types (markers: harness.py).

Each file is parsed and typechecked against its surface (``(*# surface: NAME *)``,
default ``core``); it must produce exactly the diagnostics its ``(*! ... *)``
markers state, and each ``(*: val NAME : TYPE *)`` marker must match the
printed type of the top-level binding ``NAME`` (its last binding). With
``(*# mode: script *)`` the host contract of the surface's script kind
(``chatml.typecheck.contracts``) is checked too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from chatml.check import check_source
from chatml.typecheck.contracts import check_contract
from tests.chatml.harness import TESTDATA, Outcome, case_files, check, parse_expectations

CASES = case_files("types")


def test_there_are_enough_type_cases() -> None:
    assert len(CASES) >= 60


@pytest.mark.parametrize("path", CASES, ids=lambda p: str(p.relative_to(TESTDATA)))
def test_type_case(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    expectations = parse_expectations(text)
    surface = expectations.options.get("surface", "core")
    result = check_source(text, name=path.name, surface=surface)
    diagnostics = list(result.diagnostics)
    if expectations.options.get("mode") == "script" and result.types is not None and result.ok:
        assert result.source is not None
        diagnostics += check_contract(surface, result.types, result.source)  # type: ignore[arg-type]
    types = {binding.name: binding.signature for binding in result.bindings}
    problems = check(expectations, Outcome(tuple(diagnostics), types=types))
    assert not problems, f"{path.name}:\n" + "\n".join(problems)
