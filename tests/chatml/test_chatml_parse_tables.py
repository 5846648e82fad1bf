"""The LALR tables: conflicts resolved only by explicit precedence, and the per-user cache."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from chatml.syntax import grammar, parse_tables
from chatml.syntax.parse_tables import build_tables, load_tables
from chatml.syntax.tokens import TERMINALS
from tests.support import REPO_ROOT


class _ConflictLog:
    """Collects ply's report of discarded actions (one per conflict), with the state."""

    def __init__(self) -> None:
        self.state = -1
        self.discarded: list[tuple[int, str, str]] = []

    def info(self, message: str, *args: object) -> None:
        if message == "state %d":
            self.state = int(args[0])  # type: ignore[call-overload]

    def debug(self, message: str, *args: object) -> None:
        if message.startswith("  ! %-15s"):
            self.discarded.append((self.state, str(args[0]).strip(), str(args[1])))

    def warning(self, *args: object) -> None:
        pass

    def error(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def built() -> parse_tables.Tables:
    return build_tables()


@pytest.fixture()
def quick_build(built: parse_tables.Tables, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make "rebuilding" the tables instant (these tests are about the cache, not the build)."""
    monkeypatch.setattr(parse_tables, "build_tables", lambda: built)


def test_no_conflict_is_left_to_ply_defaults(built: parse_tables.Tables) -> None:
    assert built.sr_conflicts == [] and built.rr_conflicts == []


def test_every_conflict_involves_explicit_precedences() -> None:
    from ply.yacc import Grammar, LRGeneratedTable

    g = Grammar(list(TERMINALS))
    levels = {}
    for level, (assoc, *terms) in enumerate(grammar.PRECEDENCE, start=1):
        for term in terms:
            g.set_precedence(term, assoc, level)
            levels[term] = level
    for number, prod in enumerate(grammar.productions(), start=1):
        symbols = list(prod.symbols) + (["%prec", prod.prec] if prod.prec else [])
        g.add_production(prod.lhs, symbols, line=number)
    g.set_start(grammar.START)
    log = _ConflictLog()
    LRGeneratedTable(g, "LALR", log)  # type: ignore[arg-type]
    assert log.discarded, "the grammar is expected to rely on precedence declarations"
    for state, token, _action in log.discarded:
        assert token in levels, f"state {state}: conflict on {token} resolved by default"


def test_tables_round_trip_through_the_cache(tmp_path: Path, quick_build: None,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    built = load_tables(tmp_path)
    files = list(tmp_path.iterdir())
    assert [f.name for f in files] == [f"parser-{grammar.signature()}.marshal"]

    def fail() -> None:
        raise AssertionError("tables rebuilt although the cache is valid")

    monkeypatch.setattr(parse_tables, "build_tables", fail)
    cached = load_tables(tmp_path)
    assert cached.action == built.action and cached.goto == built.goto


@pytest.mark.parametrize("content", [b"", b"garbage", b"\xe3\x00\x00\x00"])
def test_a_corrupt_cache_is_rebuilt(tmp_path: Path, content: bytes, quick_build: None) -> None:
    path = tmp_path / f"parser-{grammar.signature()}.marshal"
    path.write_bytes(content)
    tables = load_tables(tmp_path)
    assert len(tables.action) > 100
    assert path.read_bytes() != content


def test_a_stale_cache_is_ignored(tmp_path: Path, quick_build: None) -> None:
    import marshal

    path = tmp_path / f"parser-{grammar.signature()}.marshal"
    path.write_bytes(marshal.dumps(("old-signature", [], [], [], [], [])))
    assert len(load_tables(tmp_path).action) > 100


def test_tables_of_older_grammars_are_removed(tmp_path: Path, quick_build: None) -> None:
    (tmp_path / "parser-0123456789abcdef.marshal").write_bytes(b"old")
    (tmp_path / "other.cmlb").write_bytes(b"not ours")
    load_tables(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "other.cmlb", f"parser-{grammar.signature()}.marshal"]


def test_an_unwritable_cache_folder_falls_back_to_memory(tmp_path: Path,
                                                         quick_build: None) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    assert len(load_tables(blocker / "chatml").action) > 100


def test_parsing_writes_nothing_into_the_working_directory(tmp_path: Path, quick_build: None
                                                           ) -> None:
    work = tmp_path / "work"
    work.mkdir()
    cache = tmp_path / "cache"
    load_tables(cache / "chatml")  # seed the cache so the children need not build
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "PYTHONPATH": str(REPO_ROOT)}
    code = "from chatml.syntax.parser import parse_program; parse_program('print(1)')"
    for _ in range(2):
        subprocess.run([sys.executable, "-c", code], cwd=work, env=env, check=True,
                       capture_output=True)
    assert list(work.iterdir()) == []
    assert [p.name for p in (cache / "chatml").iterdir()] == [
        f"parser-{grammar.signature()}.marshal"]
