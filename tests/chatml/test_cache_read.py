"""A cache hit is translated once: reading a cache entry verifies it without translating
(:func:`chatml.build.read_cached_bytecode`), and loading translates it -- while a bytecode
*file* is still translated when read (:func:`chatml.build.read_bytecode`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import chatml.vm.loader
import chatml.vm.translate
from chatml.cli import main

SOURCE = "let rec f n = if n == 0 then 0 else g(n - 1)\nand g n = f(n)\nprint(f(3) + 42)\n"


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    original = chatml.vm.translate.translate

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(chatml.vm.translate, "translate", counted)
    monkeypatch.setattr(chatml.vm.loader, "translate", counted)
    return calls


def test_a_cache_hit_translates_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    source = tmp_path / "s.chatml"
    source.write_text(SOURCE, encoding="utf-8")
    calls = _counting(monkeypatch)
    assert main(["run", str(source)]) == 0  # miss: built from the source, then loaded
    assert capsys.readouterr().out == "42\n" and len(calls) == 1
    assert list((tmp_path / "cache" / "chatml").iterdir())
    assert main(["run", str(source)]) == 0  # hit: verified, then loaded
    assert capsys.readouterr().out == "42\n" and len(calls) == 2


def test_a_bytecode_file_is_still_translated_when_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "s.chatml"
    source.write_text(SOURCE, encoding="utf-8")
    out = tmp_path / "s.cmlb"
    assert main(["compile", str(source), "-o", str(out)]) == 0
    calls = _counting(monkeypatch)
    assert main(["dis", str(out)]) == 0
    capsys.readouterr()
    assert len(calls) == 1
