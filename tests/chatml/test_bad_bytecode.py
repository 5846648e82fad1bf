"""Invalid bytecode with a valid container: run/dis report it, the cache rebuilds it.

A file can have a valid header and zlib stream and still hold invalid code (a
code object without its RETURN). Reading validates the code objects too
(:func:`chatml.build.read_bytecode`), so ``chatml run`` and ``chatml dis`` exit 1
with ``chatml.bad_bytecode``, and such a cache entry is stale: rebuilt and rewritten.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatml.build import build_file, read_bytecode
from chatml.bytecode import cache
from chatml.bytecode.code import FORMAT_VERSION
from chatml.bytecode.opcodes import Op
from chatml.bytecode.serialize import MAGIC, BytecodeFormatError, deserialize, serialize
from chatml.cli import main
from tests.chatml.vm_support import core_values

SOURCE = "let f x = x + 1\nprint(f(41))\n"


def _document(data: bytes) -> dict:  # type: ignore[type-arg]
    return json.loads(zlib.decompress(data[len(MAGIC) + 2:]))


def _pack(document: dict) -> bytes:  # type: ignore[type-arg]
    return MAGIC + FORMAT_VERSION.to_bytes(2, "big") + zlib.compress(json.dumps(document).encode())


def _valid_bytes() -> bytes:
    from chatml.build import build_source

    return serialize(build_source(SOURCE, "s.chatml", values=core_values()).module)


def _without_return(data: bytes) -> bytes:
    """The same module with the RETURN of every code object dropped."""
    document = _document(data)
    for code in document["codes"]:
        flat, lines = code["code"], code["lines"]
        keep = [i for i in range(0, len(flat), 3) if flat[i] != Op.RETURN]
        code["code"] = [x for i in keep for x in flat[i:i + 3]]
        code["lines"] = [x for i in keep for x in lines[i // 3 * 4:i // 3 * 4 + 4]]
    return _pack(document)


def test_the_container_reads_but_the_code_is_invalid() -> None:
    bad = _without_return(_valid_bytes())
    deserialize(bad)  # the container, constants and operands are fine
    with pytest.raises(BytecodeFormatError, match="return"):
        read_bytecode(bad, "bad.cmlb")


@pytest.mark.parametrize("command", ["run", "dis"])
def test_run_and_dis_report_bad_bytecode(command: str, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.cmlb"
    path.write_bytes(_without_return(_valid_bytes()))
    assert main([command, "--format", "json", str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    [diagnostic] = json.loads(captured.err)["diagnostics"]
    assert diagnostic["code"] == "chatml.bad_bytecode"
    assert diagnostic["file"] == str(path) and diagnostic["line"] == 1
    assert "does not end with a return" in diagnostic["message"]


def test_a_cache_entry_with_invalid_code_is_rebuilt_and_rewritten(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    source = tmp_path / "s.chatml"
    source.write_text(SOURCE, encoding="utf-8")
    assert main(["run", str(source)]) == 0
    assert capsys.readouterr().out == "42\n"
    [entry] = (tmp_path / "cache" / "chatml").glob("*" + cache.SUFFIX)
    entry.write_bytes(_without_return(entry.read_bytes()))
    for _ in range(2):  # the first run rebuilds, the second uses the rewritten entry
        assert main(["run", str(source)]) == 0
        assert capsys.readouterr().out == "42\n"
    read_bytecode(entry.read_bytes(), str(entry))  # valid again
    artifact = build_file(str(source), SOURCE.encode())
    assert artifact.from_cache


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_bytecode_files_never_crash_run_or_dis(
        data: st.DataObject, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    document = _document(_valid_bytes())
    code = data.draw(st.sampled_from(document["codes"]))
    field = data.draw(st.sampled_from(["code", "lines", "captures"]))
    values = code[field]
    if values:
        for _ in range(data.draw(st.integers(1, 4))):
            position = data.draw(st.integers(0, len(values) - 1))
            values[position] = data.draw(st.one_of(st.integers(-2, 90), st.just([1, 2])))
    if data.draw(st.booleans()):
        code["parent"] = data.draw(st.integers(-2, 3))
    path = tmp_path / "m.cmlb"
    path.write_bytes(_pack(document))
    for command in ("run", "dis"):
        status = main([command, "--format", "json", "--max-steps", "10000", str(path)]
                      if command == "run" else [command, "--format", "json", str(path)])
        captured = capsys.readouterr()
        assert status in (0, 1, 3), (command, status)
        if status != 0:
            codes = {d["code"] for d in json.loads(captured.err)["diagnostics"]}
            assert codes, captured.err


def test_an_over_long_integer_in_the_body_is_bad_bytecode(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    document = _document(_valid_bytes())
    text = json.dumps(document).replace('"consts": [', '"consts": [' + "9" * 5000 + ", ", 1)
    path = tmp_path / "long.cmlb"
    path.write_bytes(MAGIC + FORMAT_VERSION.to_bytes(2, "big") + zlib.compress(text.encode()))
    assert main(["run", "--format", "json", str(path)]) == 1
    [diagnostic] = json.loads(capsys.readouterr().err)["diagnostics"]
    assert diagnostic["code"] == "chatml.bad_bytecode"
    assert "more than 4000 digits" in diagnostic["message"]
