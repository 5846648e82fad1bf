"""Every frontend entry point, driven in-process on one input through :func:`harness.total`.

ChatMD (:func:`drive_chatmd`): ``check_prompt`` with and without ``confine``,
diagnostic rendering (text and JSON, as ``chatmdc`` prints them), the three
``chatmdc compile --emit`` artefacts (IR JSON, the request body without
network, canonical ChatMD) through :data:`runtime.commands.chatmdc.EMITTERS`, and
``chatmdc shell explain`` (:func:`chatmd.shell.integration.explain_prompt`).

ChatML (:func:`drive_chatml`): ``check_source``, diagnostic rendering,
``build_source`` (compile to bytecode), serialise and read back (the cache's
path), ``dis``, loading and running in the VM with small step and memory
limits on the large stack ``chatml run`` uses, and the REPL's ``step`` fed the
text line by line. :func:`drive_bytecode` loads arbitrary bytes as a bytecode
file (``build_file``), disassembles and runs what loads.
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from chatcommon.diagnostics import Diagnostic, DiagnosticError
from chatcommon.render import render_all_text, render_json
from chatcommon.sources import SourceRegistry
from tests.fuzzing.harness import FuzzFailure, total

if TYPE_CHECKING:
    from chatmd.frontend import CheckResult

#: Budgets of a fuzzed VM run: small enough that a generated loop ends quickly.
MAX_STEPS = 20_000
MAX_MEMORY = 4 * 2**20
#: The text of a file beside (outside) every generated prompt folder, and reachable from it
#: as ``../outside.txt`` and through the symlink ``link.txt``: what ``--confine`` must keep
#: out of every artefact.
OUTSIDE_MARKER = "OUTSIDE-THE-PROMPT-FOLDER-5b1e"
#: REPL inputs fed per example (each is a full check, compile and run).
MAX_REPL_LINES = 6


def write_files(folder: Path, files: Mapping[str, str | bytes]) -> None:
    """Write ``files`` (relative name -> text or bytes) beneath ``folder``."""
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            path.write_bytes(content.encode("utf-8", "surrogatepass"))
        else:
            path.write_bytes(content)


def _render(label: str, diagnostics: tuple[Diagnostic, ...],
            registry: SourceRegistry | None) -> None:
    total(f"{label} render text", lambda: render_all_text(diagnostics, registry))
    total(f"{label} render json", lambda: render_json(diagnostics))


def _check(path: Path, confine: bool) -> CheckResult:
    from runtime.prompt_checks import check_prompt

    label = f"chatmd check confine={confine}"
    result = total(label, functools.partial(check_prompt, path, confine=confine))
    if result is None:
        raise FuzzFailure(f"{label}: check_prompt must return a CheckResult")
    _render(label, result.diagnostics, result.sources)
    return result


def _emit_all(result: CheckResult) -> None:
    """Every ``compile --emit`` artefact of a confined result; none may show the outside file."""
    from runtime.commands.chatmdc import EMITTERS, EmitUnavailable

    args = argparse.Namespace(allow_network=False, confine=True, format="text")
    for mode, emitter in EMITTERS.items():
        emitted = total(f"chatmd compile --confine --emit {mode}",
                        functools.partial(emitter, result, args),
                        (DiagnosticError, EmitUnavailable))
        text = emitted if isinstance(emitted, str) or emitted is None else emitted[0]
        if text is not None and OUTSIDE_MARKER in text:
            raise FuzzFailure(f"chatmd compile --confine --emit {mode}: "
                              "a file outside the prompt folder was read")


def drive_chatmd(path: Path) -> None:
    """Run every ChatMD entry point on the prompt file ``path``."""
    from chatmd.shell.cli import explain_prompt

    _check(path, confine=False)
    confined = _check(path, confine=True)
    if confined.prompt is not None:
        _emit_all(confined)
    explained = total("chatmd shell explain", functools.partial(explain_prompt, path))
    if explained is not None:
        _render("shell explain", tuple(explained.diagnostics), None)


def drive_chatmd_files(folder: Path, files: Mapping[str, str | bytes], root: str) -> None:
    """Write ``files`` into ``folder/prompt`` and drive the entry points on ``root`` there.

    ``folder/outside.txt`` (holding :data:`OUTSIDE_MARKER`) and the symlink
    ``prompt/link.txt`` to it are what the confinement check looks for.
    """
    (folder / "outside.txt").write_text(OUTSIDE_MARKER + "\n", encoding="utf-8")
    inner = folder / "prompt"
    inner.mkdir()
    (inner / "link.txt").symlink_to("../outside.txt")
    write_files(inner, files)
    drive_chatmd(inner / root)


def drive_chatml(text: str, name: str = "fuzz.chatml") -> None:
    """Run every ChatML entry point on the source ``text``."""
    from chatml.build import build_source
    from chatml.check import check_source

    checked = total("chatml check", lambda: check_source(text, name=name))
    if checked is None:
        raise AssertionError("chatml check: check_source must return a CheckResult")
    _render("chatml check", checked.diagnostics, None)
    built = total("chatml compile", lambda: build_source(text, name))
    if built is not None:
        _exercise_module(built.module, built.source)
    _drive_repl(text)


def _exercise_module(module: object, source: object) -> None:
    from chatml.build import read_bytecode
    from chatml.bytecode.serialize import serialize
    from chatml.disassembler import disassemble

    data = total("chatml serialize", lambda: serialize(module))  # type: ignore[arg-type]
    if data is not None:
        back = total("chatml read bytecode", lambda: read_bytecode(data, "fuzz.chatmlc"))
        if back is None:
            raise AssertionError("a module the compiler wrote must read back")
    total("chatml dis", lambda: disassemble(module))  # type: ignore[arg-type]
    _run(module, source)


def _run(module: object, source: object) -> None:
    from chatml.build import runtime_values
    from chatml.limits import Limits
    from chatml.vm.loader import load
    from chatml.vm.run import on_large_stack, run_program

    loaded = total("chatml load", lambda: load(module, runtime_values(module.surface),  # type: ignore[arg-type,attr-defined]
                                               source))  # type: ignore[arg-type]
    if loaded is None:
        return
    limits = Limits(max_steps=MAX_STEPS, max_memory=MAX_MEMORY)
    total("chatml run", lambda: on_large_stack(
        lambda: run_program(loaded, limits, sink=lambda _text: None)))


def _drive_repl(text: str) -> None:
    from chatml.limits import Limits
    from chatml.repl import ReplState, step

    lines = [line for line in text.split("\n") if not line.lstrip().startswith(":load")]

    def feed() -> None:
        state = ReplState.start(limits=Limits(max_steps=MAX_STEPS, max_memory=MAX_MEMORY))
        for line in lines[:MAX_REPL_LINES]:
            state, _shown = step(state, line)
        step(state, ";;")

    total("chatml repl step", feed)


def drive_bytecode(data: bytes) -> None:
    """Load ``data`` as a bytecode file; disassemble and run what loads."""
    from chatml.build import build_file

    artifact = total("chatml load bytecode",
                     lambda: build_file("fuzz.chatmlc", data, use_cache=False))
    if artifact is not None:
        _exercise_module(artifact.module, artifact.source)
