"""What typecheck_program / check_source give later phases: binders, field access, diagnostics."""

from __future__ import annotations

from chatcommon.sources import SourceFile
from chatml import ast
from chatml.check import check_source
from chatml.syntax.parser import parse_program
from chatml.typecheck import typecheck_program
from chatml.typecheck.errors import ALL_CODES
from chatml.typecheck.types import Namer, show_type


def _binders(source: str) -> dict[str, str]:
    """Binder text -> printed type, for every binder the checker recorded."""
    result = typecheck_program(parse_program(source).program)
    namer = Namer(signature=True)
    return {span.text: show_type(t, namer) for span, t in result.binder_types.items()}


def test_types_are_recorded_at_every_kind_of_binder() -> None:
    binders = _binders(
        "let total xs = let n = length(xs) in n + 1\n"
        "let rec loop i = if i > 0 then loop(i - 1) else i\n"
        "let pick v = match v with | `Some(inner) -> inner | _ -> 0\n"
        "module M = struct let k = 1 end\n")
    assert binders["xs"] == "'a array"
    assert binders["n"] == "int"
    assert binders["total"] == "('a array -> int)"
    assert binders["loop"] == "(int -> int)"
    assert binders["inner"] == "int"
    assert binders["M"] == "{k: int}"


def test_binder_types_are_keyed_by_the_name_span() -> None:
    program = parse_program("let answer = 42").program
    result = typecheck_program(program)
    stmt = program.statements[0]
    assert isinstance(stmt, ast.LetStmt) and stmt.name_span is not None
    assert show_type(result.binder_types[stmt.name_span]) == "int"


def test_field_accesses_say_whether_their_base_is_a_record_or_a_module() -> None:
    source = ("module M = struct let x = 1 end\n"
              "let a = M.x\n"
              "let r = { y = 2 }\n"
              "let b = r.y\n"
              "let get v = v.z\n")
    program = parse_program(source).program
    result = typecheck_program(program)
    kinds = {span.text: kind for span, kind in result.field_access.items()}
    assert kinds == {"M.x": "module", "r.y": "record", "v.z": "either"}


def test_top_level_bindings_and_final_types() -> None:
    result = check_source("let x = 1\nlet x = \"two\"\nmodule M = struct let y = x end")
    assert result.ok
    assert result.val_lines() == ["val x : int", "val x : string", "val M : {y: string}"]
    assert result.types is not None
    assert show_type(result.types.type_of("x")) == "string"  # type: ignore[attr-defined,arg-type]
    assert result.types.type_of("print") is None  # type: ignore[attr-defined]
    assert [b.is_module for b in result.bindings] == [False, False, True]


def test_all_independent_errors_are_reported_in_source_order_with_catalogued_codes() -> None:
    result = check_source("let a = 1 + true\nlet b = undefined\nlet c = a.f + b.g\n"
                          "let d = [1] == [2]\ntype int = string\nopen Array\n")
    assert not result.ok
    lines = [d.line for d in result.diagnostics]
    assert lines == sorted(lines) == [1, 2, 4, 5, 6]
    for diagnostic in result.diagnostics:
        assert diagnostic.code in ALL_CODES
        assert diagnostic.phase == "type"
        assert diagnostic.file == "<string>"
        assert diagnostic.end_line is not None and diagnostic.end_column is not None


def test_parse_errors_stop_before_typechecking() -> None:
    result = check_source("let x = ", name="broken.chatml")
    assert not result.ok and result.types is None and result.program is None
    assert [d.phase for d in result.diagnostics] == ["parse"]


def test_a_script_embedded_in_another_file_reports_that_files_positions() -> None:
    text = "let ok = 1\nlet bad = ok + \"s\"\n"
    source = SourceFile("prompt.md", text, line_offset=9, first_line_column_offset=4)
    result = check_source(text, source=source)
    (error,) = result.diagnostics
    assert (error.file, error.line, error.column) == ("prompt.md", 11, 11)


def test_deeply_nested_programs_are_checked_or_reported_never_crash() -> None:
    long_sum = "let s = " + " + ".join(["1"] * 3000)
    assert check_source(long_sum).ok
    nested_ifs = "let v = " + "if true then 1 else " * 1500 + "0"
    assert check_source(nested_ifs).ok
    brackets = "let a = " + "[" * 2000 + "1" + "]" * 2000
    result = check_source(brackets)
    assert result.ok or {d.code for d in result.diagnostics} <= {"chatml.too_deep"}


def test_checking_is_deterministic() -> None:
    source = "let f x y = { a = x; b = `T(y) }\nlet g = f(1, \"s\")\n"
    assert check_source(source).val_lines() == check_source(source).val_lines() == [
        "val f : 'a, 'b -> {a: 'a; b: [`T('b) | ...]}",
        "val g : {a: int; b: [`T(string) | ...]}",
    ]
