"""Issue 16: ordinary nesting 1,000 deep and flat constructs 5,000 long run through the CLI.

Every shape of :mod:`tests.chatml.deep_programs` nested 1,000 deep runs correctly
through ``chatml run`` (with the bytecode cache written, then read), ``chatml compile``
and a run of the ``.chatmlc`` it wrote, and ``chatml dis`` lists it (one section per
code object, bounded lines). Shapes Python cannot nest run on the reference interpreter
(see ``chatml.vm.loader``); a 5,000-arm match and a 5,000-link ``else if`` chain (pure
and impure conditions) are translated flat and run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.chatml.deep_programs import (
    NESTED,
    else_if_chain,
    else_if_output,
    match_arms,
    match_arms_output,
    nested_output,
)
from tests.robustness.support import chatml

DEPTH = 1000


@pytest.mark.parametrize("shape", sorted(NESTED))
def test_1000_deep_runs_compiles_and_disassembles(shape: str, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    source = tmp_path / "deep.chatml"
    source.write_text(NESTED[shape](DEPTH), encoding="utf-8")
    expected = nested_output(shape, DEPTH)
    for _ in range(2):  # the second run reads the cache entry the first one wrote
        outcome = chatml(["run", str(source)], capsys)
        assert (outcome.status, outcome.out, outcome.err) == (0, expected, "")
    assert list((tmp_path / "cache" / "chatml").iterdir())
    compiled = tmp_path / "deep.chatmlc"
    assert chatml(["compile", str(source), "-o", str(compiled)], capsys).status == 0
    outcome = chatml(["run", str(compiled)], capsys)
    assert (outcome.status, outcome.out, outcome.err) == (0, expected, "")
    listing = chatml(["dis", str(source)], capsys)
    assert listing.status == 0 and listing.err == ""
    lines = listing.out.splitlines()
    assert max(len(line) for line in lines) < 400
    assert len(listing.out) < 2_000 * len(source.read_text(encoding="utf-8"))
    from_bytecode = chatml(["dis", str(compiled)], capsys)
    assert from_bytecode.status == 0 and from_bytecode.out.count("\n") == len(lines)


@pytest.mark.parametrize("impure", [False, True])
def test_a_5000_link_else_if_chain_runs(impure: bool, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "chain.chatml"
    source.write_text(else_if_chain(5000, impure), encoding="utf-8")
    outcome = chatml(["run", "--no-cache", str(source)], capsys)
    assert (outcome.status, outcome.out, outcome.err) == (0, else_if_output(5000), "")
    python = chatml(["dis", "--python", str(source)], capsys)  # translated, and flat
    assert python.status == 0
    indents = {len(line) - len(line.lstrip()) for line in python.out.splitlines()[1:]}
    assert max(indents) <= 6 * 4


def test_a_5000_arm_match_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "arms.chatml"
    source.write_text(match_arms(5000), encoding="utf-8")
    outcome = chatml(["run", "--no-cache", str(source)], capsys)
    assert (outcome.status, outcome.out, outcome.err) == (0, match_arms_output(5000), "")
    python = chatml(["dis", "--python", str(source)], capsys)
    indents = {len(line) - len(line.lstrip()) for line in python.out.splitlines()[1:]}
    assert max(indents) <= 6 * 4


def test_dis_python_of_a_program_too_deep_to_translate_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "deep.chatml"
    source.write_text(NESTED["if"](DEPTH), encoding="utf-8")
    outcome = chatml(["dis", "--python", str(source)], capsys)
    assert outcome.status == 1
    assert "error[chatml.too_deep]" in outcome.err
    assert "reference interpreter" in outcome.err


def test_scopes_remember_outer_names_without_breaking_shadowing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The resolver leaves a lookup's answer in the scopes it walked through (linear time for
    1,000 nested scopes naming one outer variable); a scope nested inside that binds the
    name again still sees its own binding."""
    nested = "".join(f"match a - {i} with | 0 -> n + {i} | _ -> (" for i in range(300))
    source = tmp_path / "scopes.chatml"
    source.write_text(
        "let n = 10\n"
        f"let f a = {nested}let n = 1000 in match a with | 0 -> n | _ -> n + a{')' * 300}\n"
        "print(to_string(f(0)))\nprint(to_string(f(299)))\nprint(to_string(f(300)))\n"
        "print(to_string(f(301)))\n", encoding="utf-8")
    outcome = chatml(["run", "--no-cache", str(source)], capsys)
    assert (outcome.status, outcome.out) == (0, "10\n309\n1300\n1301\n")
