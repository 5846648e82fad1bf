"""The bytecode format: serialisation round trips, strict reading, the cache, the listing."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatcommon.diagnostics import DiagnosticError
from chatml.build import build_file, build_source
from chatml.bytecode import cache
from chatml.bytecode.code import FORMAT_VERSION, CompiledModule
from chatml.bytecode.opcodes import Op
from chatml.bytecode.serialize import (
    MAGIC,
    BytecodeFormatError,
    deserialize,
    read_version,
    serialize,
)
from chatml.calls import ChatMLRuntimeError
from chatml.disassembler import disassemble
from chatml.limits import Limits
from chatml.vm.loader import load
from chatml.vm.run import run_program
from chatml.vm.translate import translate
from tests.chatml.typed_programs import programs
from tests.chatml.vm_support import core_values

SAMPLE = """
let rec fib n = if n < 2 then n else fib(n - 1) + fib(n - 2)
let xs = [1.5, -.0.0, 2.0 *. 3.0]
let p = {name = "Ann"; tags = [`A, `B("é\\t")]}
module M = struct let twice f x = f(f(x)) end
print(M.twice(fib, 5))
print(match p.tags[1] with | `B(s) -> s | _ -> "?")
let i = ref(0)
while !i < 3 do i := !i + 1 done
print(xs)
"""


def compiled(text: str = SAMPLE) -> CompiledModule:
    return build_source(text, "sample.chatml", values=core_values()).module


def run_module(module: CompiledModule) -> str:
    out: list[str] = []
    run_program(load(module, core_values()), sink=out.append)
    return "".join(out)


def body(data: bytes) -> dict:  # type: ignore[type-arg]
    return json.loads(zlib.decompress(data[len(MAGIC) + 2:]))


def rebuilt(document: dict, version: int = FORMAT_VERSION) -> bytes:  # type: ignore[type-arg]
    text = json.dumps(document).encode()
    return MAGIC + version.to_bytes(2, "big") + zlib.compress(text)


# --------------------------------------------------------------------------- round trips


def test_round_trip_gives_an_equal_module_that_runs_the_same() -> None:
    module = compiled()
    data = serialize(module)
    again = deserialize(data)
    assert again == module
    assert serialize(again) == data
    assert run_module(again) == run_module(module) == "5\né\t\n[|1.5, -0., 6.|]\n"


def test_every_instruction_has_a_position() -> None:
    module = compiled()
    for code in module.codes:
        assert len(code.positions) == len(code.instructions) > 0
        for line, column, end_line, end_column in code.positions:
            assert 1 <= line <= end_line and column >= 1 and end_column >= 1


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_serialisation_round_trips_random_programs(text: str) -> None:
    module = compiled(text)
    again = deserialize(serialize(module))
    assert again == module
    assert translate(again).source == translate(module).source


def test_constants_keep_their_kind() -> None:
    module = compiled("print([1.0, 0.1])\nprint(1)\nprint(true)")
    consts = deserialize(serialize(module)).consts
    kinds = {(type(c).__name__, repr(c)) for c in consts}
    assert {("float", "1.0"), ("float", "0.1"), ("int", "1"), ("bool", "True")} <= kinds


# --------------------------------------------------------------------------- strict reading


@pytest.mark.parametrize("data", [b"", b"CHATMLB", b"not bytecode at all", MAGIC + b"\x00"])
def test_garbage_is_rejected(data: bytes) -> None:
    with pytest.raises(BytecodeFormatError):
        deserialize(data)


def test_other_versions_are_rejected() -> None:
    data = rebuilt(body(serialize(compiled())), FORMAT_VERSION + 1)
    assert read_version(data) == FORMAT_VERSION + 1
    with pytest.raises(BytecodeFormatError, match="version"):
        deserialize(data)


@pytest.mark.parametrize("damage", [
    lambda d: d["codes"][0]["code"].append(1),                      # truncated instruction
    lambda d: d["codes"][0]["code"].__setitem__(0, 999),             # unknown opcode
    lambda d: d["codes"][0]["lines"].pop(),                          # line table too short
    lambda d: d["consts"].append({"f": "not a float"}),
    lambda d: d["consts"].append({"x": 1}),
    lambda d: d.pop("surface"),
    lambda d: d["codes"].clear(),
    lambda d: d["codes"][0].__setitem__("arity", -1),
])
def test_damaged_files_are_rejected(damage) -> None:  # type: ignore[no-untyped-def]
    document = body(serialize(compiled()))
    damage(document)
    with pytest.raises(BytecodeFormatError):
        deserialize(rebuilt(document))


def test_out_of_range_operands_are_rejected() -> None:
    document = body(serialize(compiled()))
    code = document["codes"][0]["code"]
    index = next(i for i in range(0, len(code), 3) if code[i] == Op.CONST)
    code[index + 1] = 10_000
    with pytest.raises(BytecodeFormatError, match="out of range"):
        deserialize(rebuilt(document))


def test_structurally_broken_code_is_rejected_by_the_loader() -> None:
    module = compiled("print(if 1 < 2 then 3 else 4)")
    main = module.codes[0]
    without_else = tuple(i for i in main.instructions if i[0] != Op.ELSE)
    broken = attrs.evolve(module, codes=(attrs.evolve(
        main, instructions=without_else, positions=main.positions[:len(without_else)]),)
        + module.codes[1:])
    with pytest.raises(BytecodeFormatError):
        translate(broken)


def test_a_loop_without_its_test_is_rejected() -> None:
    module = compiled("let i = ref(0)\nwhile !i < 3 do i := !i + 1 done")
    main = module.codes[0]
    kept = [index for index, ins in enumerate(main.instructions) if ins[0] != Op.LOOP_TEST]
    broken = attrs.evolve(module, codes=(attrs.evolve(
        main, instructions=tuple(main.instructions[i] for i in kept),
        positions=tuple(main.positions[i] for i in kept)),) + module.codes[1:])
    with pytest.raises(BytecodeFormatError, match="LOOP_TEST|stack"):
        translate(broken)


@settings(max_examples=120, deadline=None)
@given(st.data())
def test_mutated_bytecode_never_crashes_the_vm(data: st.DataObject) -> None:
    document = body(serialize(compiled()))
    code = data.draw(st.sampled_from(document["codes"]))["code"]
    for _ in range(data.draw(st.integers(1, 4))):
        position = data.draw(st.integers(0, len(code) - 1))
        code[position] = data.draw(st.integers(0, 90))
    try:
        module = deserialize(rebuilt(document))
        run_program(load(module, core_values()), Limits(max_steps=10_000),
                    sink=lambda text: None)
    except (BytecodeFormatError, ChatMLRuntimeError, DiagnosticError):
        pass


# --------------------------------------------------------------------------- cache


def test_cache_location_follows_xdg(tmp_path: Path) -> None:
    assert cache.cache_dir({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "chatml"
    assert cache.cache_dir({"HOME": str(tmp_path)}) == tmp_path / ".cache" / "chatml"
    assert cache.cache_dir({}) is None


def test_a_file_in_the_way_means_no_cache(tmp_path: Path) -> None:
    (tmp_path / "blocker").write_text("x")
    assert cache.cache_dir({"XDG_CACHE_HOME": str(tmp_path / "blocker")}) is None


def test_source_builds_are_cached_and_corrupt_entries_rebuilt(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    data = SAMPLE.encode()
    first = build_file("sample.chatml", data, values=core_values())
    assert not first.from_cache
    entries = list((tmp_path / "chatml").glob("*" + cache.SUFFIX))
    assert len(entries) == 1
    second = build_file("sample.chatml", data, values=core_values())
    assert second.from_cache and second.module == first.module
    entries[0].write_bytes(b"CHATMLBC\x00\x01garbage")
    third = build_file("sample.chatml", data, values=core_values())
    assert not third.from_cache and third.module == first.module
    assert deserialize(entries[0].read_bytes()) == first.module
    assert build_file("sample.chatml", data, values=core_values()).from_cache


def test_cache_entry_for_other_source_is_not_used(tmp_path: Path) -> None:
    module = compiled()
    folder = tmp_path
    cache.write_entry(folder, "k", module)
    assert cache.read_entry(folder, "k", module.source_hash, "core") == module
    assert cache.read_entry(folder, "k", "0" * 64, "core") is None
    assert cache.read_entry(folder, "k", module.source_hash, "moderator") is None


def test_no_cache_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    build_file("sample.chatml", SAMPLE.encode(), values=core_values(), use_cache=False)
    assert not (tmp_path / "chatml").exists()


def test_bytecode_files_load_for_their_surface() -> None:
    data = serialize(compiled())
    assert build_file("x.cmlb", data).module == compiled()
    with pytest.raises(DiagnosticError) as caught:
        build_file("x.cmlb", data, surface="moderator")
    assert caught.value.code == "chatml.surface_mismatch"
    with pytest.raises(DiagnosticError) as caught:
        build_file("x.cmlb", data[:-5])
    assert caught.value.code == "chatml.bad_bytecode"


# --------------------------------------------------------------------------- disassembler


def test_disassembly_lists_every_code_object_and_instruction() -> None:
    module = compiled()
    listing = disassemble(module)
    assert listing.count("\n== ") == len(module.codes)
    assert "== fib  (code 1: 1 param, 1 local, 0 captures) ==" in listing
    assert "STORE_GLOBAL" in listing and "MATCH_ARM" in listing
    instruction_lines = [line for line in listing.splitlines() if line[:4].isdigit()]
    assert len(instruction_lines) == module.instruction_count()
    assert "'é\\t'" in listing
