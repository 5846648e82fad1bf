"""The fuzz harness itself: what counts as a crash, the deadline, the seeds and the replay format."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from hypothesis import Phase, find, settings

from chatcommon.diagnostics import Diagnostic, DiagnosticError
from tests.fuzzing.crashers import CRASHERS, _expand, cases
from tests.fuzzing.harness import FuzzFailure, total
from tests.fuzzing.strategies_damage import bytecode_seeds, chatmd_seeds, chatml_seeds, damaged

pytestmark = pytest.mark.fuzz


def _diagnostic_error() -> None:
    raise DiagnosticError(Diagnostic.for_file("f", "x.code", "bad", phase="parse"))


def _raise(error: BaseException) -> None:
    raise error


def test_results_and_diagnostics_pass() -> None:
    assert total("value", lambda: 42) == 42
    assert total("diagnostic", _diagnostic_error) is None


@pytest.mark.parametrize("error", [ValueError("embedded null byte"), RecursionError("deep"),
                                   OSError(36, "File name too long"), KeyError("k")])
def test_any_other_exception_is_a_failure(error: BaseException) -> None:
    with pytest.raises(FuzzFailure, match=type(error).__name__):
        total("entry", lambda: _raise(error))


def test_overrunning_the_deadline_is_a_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHATMD_FUZZ_DEADLINE", "0.2")
    release = threading.Event()
    try:
        with pytest.raises(FuzzFailure, match="no answer within 0.2 s"):
            total("slow", lambda: release.wait(30))
    finally:
        release.set()


def test_every_seed_family_is_found() -> None:
    assert len(chatmd_seeds()) > 50
    assert len(chatml_seeds()) > 100
    assert len(bytecode_seeds()) == 40
    assert all(data.startswith(bytecode_seeds()[0][:4]) for data in bytecode_seeds())


def test_damage_inserts_deletes_and_changes_bytes() -> None:
    seed = b"0123456789abcdef"
    strategy = damaged((seed,))
    quiet = settings(database=None, phases=[Phase.generate, Phase.shrink], max_examples=1000,
                     derandomize=True)
    assert len(find(strategy, lambda d: len(d) > len(seed), settings=quiet)) == len(seed) + 1
    assert len(find(strategy, lambda d: len(d) < len(seed), settings=quiet)) == len(seed) - 1
    changed = find(strategy, lambda d: len(d) == len(seed) and d != seed, settings=quiet)
    assert sum(a != b for a, b in zip(changed, seed, strict=True)) == 1


def test_big_inputs_are_described_small() -> None:
    spec = {"prefix": "<", "repeat": "[", "count": 3, "middle": "1", "close": "]", "suffix": ">"}
    assert _expand(spec) == "<[[[1]]]>"
    for path in cases(CRASHERS):
        if path.suffix == ".json":
            assert json.loads(path.read_text(encoding="utf-8"))["language"] in ("chatmd", "chatml")


def test_crashers_hold_the_issue_table_shapes() -> None:
    names = {Path(p).stem for p in cases(CRASHERS)}
    for shape in ("nul_in_import_src", "deep_constant_pattern", "long_line_diagnostics",
                  "nested_modules_10000", "large_string_literal", "confine_doc_outside"):
        assert shape in names
