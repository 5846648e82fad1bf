"""Property tests: random well-typed programs only ever succeed or fail with a runtime diagnostic."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from chatml.limits import Limits
from tests.chatml.typed_programs import programs
from tests.chatml.vm_support import run_source

RUNTIME_CODES = {"chatml.integer_overflow", "chatml.division_by_zero",
                 "chatml.index_out_of_bounds", "chatml.step_limit", "chatml.memory_limit"}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_well_typed_programs_do_not_go_wrong(text: str) -> None:
    outcome = run_source(text, limits=Limits(max_steps=200_000, max_memory=50_000_000))
    errors = [d for d in outcome.diagnostics if d.is_error]
    assert outcome.program is not None, [str(d) for d in errors]  # the generator's programs typecheck
    if outcome.error is None:
        assert not errors
        assert outcome.stdout.count("\n") == text.count("print(")
        for line in outcome.stdout.splitlines():
            assert -(2**62) <= int(line) < 2**62
    else:
        diagnostic = outcome.error.diagnostic
        assert diagnostic.phase == "runtime"
        assert diagnostic.code in RUNTIME_CODES, str(diagnostic)
        assert 1 <= diagnostic.line <= text.count("\n")
