"""Every frontend entry point of both languages, driven in-process on one input.

Each ``exercise_*`` function feeds its input to every entry point that takes
it and fails (raises ``AssertionError`` or lets the unexpected exception out)
when an entry point raises anything but its documented error: the checkers
never raise; building raises ``DiagnosticError``; reading bytecode raises
``BytecodeFormatError``; running raises ``ChatMLRuntimeError`` (run limits
included). A diagnostic must be positioned inside the input.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterable
from pathlib import Path

from chatcommon.diagnostics import Diagnostic, DiagnosticError
from chatcommon.sources import SourceFile
from chatmd.canonical_writer import write_prompt
from chatmd.html_text import html_to_markdown, html_to_text
from chatmd.ir_json import ir_to_json_text
from chatmd.parser import parse
from chatmd.request import compile_request
from chatmd.request_context import ConversionContext
from chatmd.shell.cli import explain_prompt
from chatml.build import build_source, read_bytecode, runtime_values
from chatml.bytecode.code import CompiledModule
from chatml.bytecode.serialize import BytecodeFormatError, deserialize, serialize
from chatml.calls import ChatMLRuntimeError
from chatml.check import check_source
from chatml.disassembler import disassemble
from chatml.limits import Limits
from chatml.syntax.lexer import lex
from chatml.syntax.parser import parse_source
from chatml.vm.loader import load
from chatml.vm.run import on_large_stack, run_program
from runtime.prompt_checks import check_prompt, check_prompt_text

#: Tight budgets for running generated programs (they may loop).
RUN_LIMITS = Limits(max_steps=20_000, max_memory=16 * 2**20, max_depth=200)


def assert_positioned(diagnostics: Iterable[Diagnostic], text: str) -> None:
    """Every diagnostic has a code and a 1-based position (within the input's lines)."""
    lines = text.count("\n") + 1
    for diagnostic in diagnostics:
        assert diagnostic.code and "." in diagnostic.code, diagnostic
        assert diagnostic.line >= 1 and diagnostic.column >= 1, diagnostic
        if diagnostic.source is not None and diagnostic.source.text == text:
            assert diagnostic.line <= lines, diagnostic


# ----------------------------------------------------------------------------- ChatML


def exercise_chatml(text: str, *, run: bool = True) -> None:
    """Lex, parse, check (two surfaces), compile, serialise, read back, disassemble, run."""
    source = SourceFile("fuzz.chatml", text)
    with contextlib.suppress(DiagnosticError):
        lex(source)
    with contextlib.suppress(DiagnosticError):
        parse_source(source)
    for surface in ("core", "moderator"):
        result = check_source(text, name="fuzz.chatml", surface=surface)
        assert_positioned(result.diagnostics, text)
    try:
        built = build_source(text, "fuzz.chatml")
    except DiagnosticError as error:
        assert_positioned(error.diagnostics, text)
        return
    data = serialize(built.module)
    assert serialize(deserialize(data)) == data
    disassemble(built.module)
    if run:
        run_chatml(built.module, built.source)


def run_chatml(module: CompiledModule, source: SourceFile | None) -> None:
    """Load and run ``module`` with tight limits; only its own errors may come out."""
    try:
        program = load(module, runtime_values(module.surface), source)
    except DiagnosticError as error:  # too deep to run: positioned, coded
        assert all(d.code.startswith("chatml.") for d in error.diagnostics)
        return
    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(ChatMLRuntimeError):
        on_large_stack(lambda: run_program(program, RUN_LIMITS))


def exercise_bytecode(data: bytes) -> None:
    """Read (possibly damaged) bytecode: valid, or ``BytecodeFormatError``; then disassemble."""
    try:
        module = read_bytecode(data, "fuzz.bc")
    except (BytecodeFormatError, DiagnosticError):
        return
    disassemble(module)
    with contextlib.suppress(BytecodeFormatError):
        run_chatml(module, None)


# ----------------------------------------------------------------------------- ChatMD


def exercise_chatmd_text(text: str) -> None:
    """Parse (document and content mode) and check ``text`` with no files around it."""
    source = SourceFile("fuzz.chatmd", text)
    for content_mode in (False, True):
        result = parse(source, content_mode=content_mode)
        assert_positioned(result.diagnostics, text)
    checked = check_prompt_text(text, name="fuzz.chatmd", prompt_dir="/nonexistent-fuzz-dir")
    assert_positioned(checked.diagnostics, text)
    if checked.prompt is not None:
        write_prompt(checked.prompt)
        ir_to_json_text(checked.prompt)


def exercise_chatmd_files(folder: Path, main: str, *, confine: bool) -> None:
    """Check the prompt file ``folder/main`` (which may refer to the others), compile its
    request from local files, write it back canonically and explain its shell runtimes."""
    path = folder / main
    result = check_prompt(path, confine=confine)
    text = path.read_text(encoding="utf-8", errors="replace")
    assert_positioned([d for d in result.diagnostics if d.file == str(path)], text)
    explain_prompt(path)
    if result.prompt is None:
        return
    write_prompt(result.prompt)
    ir_to_json_text(result.prompt)
    context = ConversionContext.local(folder, confine=confine, cwd=folder)
    compiled = compile_request(result.prompt, context)
    if confine:
        outside = folder.parent / "outside.txt"
        if outside.exists() and compiled.request is not None:
            assert outside.read_text(encoding="utf-8") not in repr(compiled.request)


def exercise_html(text: str) -> None:
    html_to_markdown(text)
    html_to_text(text)


def write_tree(folder: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
