"""Runtime stack traces stay short: repeated frames collapse, distinct ones are capped.

A recursion that hits the depth limit used to carry one ``related`` note per
frame (10,000+) and a hint of hundreds of kilobytes; every consumer (CLI text,
JSON, the moderator runtime's diagnostics) shows the same bounded trace.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatml.cli import main
from chatml.limits import Limits
from chatml.vm.errors import TRACE_HEAD, TRACE_TAIL
from tests.chatml.vm_support import run_source

SELF = "let rec f n = if n == 0 then 0 else 1 + f(n - 1)\nprint(f(1000000))\n"
MUTUAL = """let rec f n = if n == 0 then 0 else 1 + g(n - 1)
and g n = if n == 0 then 0 else 1 + f(n - 1)
print(f(1000000))
"""


def _runtime_error(text: str, depth: int = 5000):  # type: ignore[no-untyped-def]
    outcome = run_source(text, limits=Limits(max_depth=depth))
    [diagnostic] = [d for d in outcome.diagnostics if d.is_error]
    assert diagnostic.code == "chatml.recursion_limit"
    return diagnostic


def test_self_recursion_collapses_to_one_note() -> None:
    diagnostic = _runtime_error(SELF)
    first, last = diagnostic.related
    assert first.message.startswith("called from f ... f called itself ")
    repeats = int(first.message.split("itself ")[1].split(" more")[0].replace(",", ""))
    assert repeats >= 4990
    assert last.message == "called from <top level>" and last.line == 2
    assert diagnostic.hint is not None and len(diagnostic.hint) < 200
    assert f"x{repeats + 1:,}" in diagnostic.hint


def test_mutual_recursion_is_capped_at_both_ends() -> None:
    diagnostic = _runtime_error(MUTUAL)
    notes = [r.message for r in diagnostic.related]
    assert len(notes) == TRACE_HEAD + 1 + TRACE_TAIL
    elided = notes[TRACE_HEAD]
    assert elided.startswith("... ") and elided.endswith(" more frames not shown ...")
    assert int(elided.split()[1].replace(",", "")) >= 4900
    assert notes[-1] == "called from <top level>"
    assert set(notes[:TRACE_HEAD]) == {"called from f", "called from g"}
    assert diagnostic.hint is not None and len(diagnostic.hint) < 1000


def test_a_short_trace_is_shown_whole() -> None:
    text = "let h x = x / 0\nlet g x = h(x) + 1\nlet f x = g(x) + 1\nprint(f(1))\n"
    outcome = run_source(text)
    [diagnostic] = [d for d in outcome.diagnostics if d.is_error]
    assert [r.message for r in diagnostic.related] == [
        "called from g", "called from f", "called from <top level>"]
    assert diagnostic.hint == ("ChatML stack (innermost first): h (line 1) <- g (line 2) "
                               "<- f (line 3) <- <top level> (line 4)")


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_the_cli_prints_a_bounded_trace(fmt: str, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "deep.chatml"
    path.write_text(MUTUAL, encoding="utf-8")
    assert main(["run", "--no-cache", "--format", fmt, str(path)]) == 3
    err = capsys.readouterr().err
    assert len(err) < 6000
    if fmt == "json":
        [diagnostic] = json.loads(err)["diagnostics"]
        assert len(diagnostic["related"]) == TRACE_HEAD + 1 + TRACE_TAIL
    else:
        assert err.count("= note:") == TRACE_HEAD + 1 + TRACE_TAIL
