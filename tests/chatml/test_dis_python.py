"""``chatml dis --python [--code N]``: the Python the VM generates, line by line.

The listing is the translation the VM loads (``chatml.vm.loader.translation_for``)
with each line followed by ``# CODE:PC OPCODE``, the instruction it was generated
for; ``--code N`` keeps the lines of one code object (and restricts the bytecode
listing the same way). Bad arguments are usage errors (exit 2).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from chatml.build import build_source
from chatml.bytecode.opcodes import Op
from chatml.cli import main
from chatml.vm.loader import translation_for
from tests.chatml.vm_support import core_values

FIB = """let rec fib n = if n < 2 then n else fib(n - 1) + fib(n - 2)
let total = ref(0)
let i = ref(0)
while !i < 5 do total := !total + fib(!i); i := !i + 1 done
print(to_string(!total))
"""
_LINE = re.compile(r"^(?P<text>.*?) *  # (?P<code>\d+):(?P<pc>\d{4}) (?P<op>[A-Z_]+)$")


def _listing(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str
             ) -> tuple[int, str, str]:
    path = tmp_path / "fib.chatml"
    path.write_text(FIB, encoding="utf-8")
    status = main(["dis", "--no-cache", *extra, str(path)])
    out, err = capsys.readouterr()
    return status, out, err


def test_the_listing_is_the_translation_the_vm_runs(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = _listing(tmp_path, capsys, "--python")
    assert status == 0 and err == ""
    head, *lines = out.splitlines()
    assert head.endswith("(generated Python)")
    module = build_source(FIB, str(tmp_path / "fib.chatml"), values=core_values()).module
    translation = translation_for(module, core_values())
    parsed = [_LINE.match(line) for line in lines]
    assert all(parsed), [line for line, match in zip(lines, parsed, strict=True) if not match]
    texts = [match.group("text") for match in parsed if match]
    assert [text.rstrip() for text in translation.source.splitlines()] == texts
    where = [(int(match.group("code")), int(match.group("pc"))) for match in parsed if match]
    assert where == list(translation.line_map)
    for match in parsed:
        assert match is not None
        code, pc = int(match.group("code")), int(match.group("pc"))
        assert Op(module.codes[code].instructions[pc][0]).name == match.group("op")
    compile(translation.source, "fib", "exec")  # the listed text is real Python


def test_lines_name_the_instruction_they_come_from(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _listing(tmp_path, capsys, "--python")
    assert re.search(r"def _c1\(v1_0\):\s+# 1:0000", out)
    assert re.search(r"if \(v1_0 < 2\):\s+# 1:\d{4} IF", out)
    assert re.search(r"if not \(\w+ < 5\): break\s+# 0:\d{4} LOOP_TEST", out)
    assert re.search(r"_str\(\w+\)\s+# 0:\d{4} CALL", out)  # to_string of an int, inlined


def test_code_selects_one_code_object(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _listing(tmp_path, capsys, "--python", "--code", "1")
    assert status == 0
    lines = out.splitlines()[1:]
    assert lines and all(re.search(r"# 1:\d{4} ", line) for line in lines)
    assert lines[0].lstrip().startswith("def _c1(")
    status, out, _ = _listing(tmp_path, capsys, "--code", "1")
    assert status == 0
    assert "== fib  (code 1" in out and "<top level>" not in out


def test_a_bytecode_file_lists_the_same_python(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    _, from_source, _ = _listing(tmp_path, capsys, "--python")
    compiled = tmp_path / "fib.cmlb"
    assert main(["compile", "--no-cache", str(tmp_path / "fib.chatml"), "-o", str(compiled)]) == 0
    assert main(["dis", "--python", str(compiled)]) == 0
    from_bytecode = capsys.readouterr().out
    assert from_bytecode.splitlines()[1:] == from_source.splitlines()[1:]


@pytest.mark.parametrize("extra, message", [
    (["--code", "9"], "no code object 9"),
    (["--code", "x"], "expected a code object index"),
    (["--code", "-1"], "expected a code object index"),
])
def test_bad_code_indexes_are_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          extra: list[str], message: str) -> None:
    status, out, err = _listing(tmp_path, capsys, "--python", *extra)
    assert status == 2 and out == ""
    assert message in err


def test_a_program_with_errors_lists_nothing(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.chatml"
    path.write_text("print(1 + true)\n", encoding="utf-8")
    assert main(["dis", "--python", "--no-cache", "--format", "json", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and '"phase": "type"' in err
