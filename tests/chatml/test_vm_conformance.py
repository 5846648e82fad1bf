"""The run-mode cases of the shared ChatML conformance corpus, through the real pipeline.

Read at test time from ``../shared/conformance/chatml/cases.jsonl``. Output is
compared after the corpus README 1.2 normalisation. Known divergences are
asserted per DECISIONS.md, with the decision's number: :data:`DIVERGENCES`
maps a case id to the decision and the function deriving the decided
expectation from the corpus's.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from tests.chatml.vm_support import normalise, run_source
from tests.support import load_cases

RUN_CASES = [case for case in load_cases("chatml/cases.jsonl") if case["mode"] == "run"]

_JSON_FLOAT = re.compile(r"(\d)\.(?=[,\]}]|$)")


def strict_json_numbers(case: dict[str, Any]) -> dict[str, Any]:
    """DECISIONS 3: JSON text is strict RFC 8259, so ``1.`` in JSON output is ``1.0``.

    Only lines of JSON text change; lines rendered by ``print`` of a ChatML
    value (they contain a backtick, like `` `Number(20.)``) keep OCaml floats.
    """
    lines = [line if "`" in line else _JSON_FLOAT.sub(r"\g<1>.0", line)
             for line in case["stdout"].split("\n")]
    return {**case, "stdout": "\n".join(lines)}


DIVERGENCES: dict[str, tuple[int, Callable[[dict[str, Any]], dict[str, Any]]]] = {
    "builtin modules smoke test": (3, strict_json_numbers),
    "json parse example": (3, strict_json_numbers),
}
"""Case id -> (decision number, how the decided expectation follows from the corpus's)."""


def test_the_corpus_has_run_cases() -> None:
    assert len(RUN_CASES) >= 50


def test_divergences_change_the_expectation() -> None:
    by_id = {case["id"]: case for case in RUN_CASES}
    for case_id, (decision, decided) in DIVERGENCES.items():
        assert decision == 3
        assert decided(by_id[case_id])["stdout"] != by_id[case_id]["stdout"]


@pytest.mark.parametrize("case", RUN_CASES, ids=lambda case: case["id"])
def test_run_case(case: dict[str, Any]) -> None:
    if case["id"] in DIVERGENCES:
        _decision, decided = DIVERGENCES[case["id"]]
        case = decided(case)
    outcome = run_source(case["source"], "case.chatml")
    errors = [d for d in outcome.diagnostics if d.is_error]
    expect = case["expect"]
    if expect == "ok":
        assert not errors, [str(d) for d in errors]
        assert normalise(outcome.stdout) == normalise(case["stdout"])
        return
    assert errors, f"expected a {expect}, the program ran: {outcome.stdout!r}"
    phase = {"type_error": "type", "runtime_error": "runtime", "parse_error": "parse"}[expect]
    assert errors[0].phase == phase, str(errors[0])
    if case["error_contains"]:
        assert case["error_contains"] in errors[0].message
    if expect != "runtime_error":
        assert outcome.stdout == ""
    else:
        assert normalise(outcome.stdout) == normalise(case["stdout"] or "")
