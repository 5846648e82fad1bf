"""Benchmark: the language server's latency against ``chatmdc check`` in the same run.

A 5,000-line transcript (``<config>``, a system message, then alternating
user/assistant messages) imports a file that declares a moderator script
(``<script src>``, a guard moderator of about 40 lines). Measured, each the
median and best of ``--repeat`` runs:

* **reference** -- :func:`chatmd.frontend.check_prompt` of the file in this
  process (what ``chatmdc check`` runs, start-up excluded), warm;
* **diagnostics** -- from sending a ``didChange`` (one character edited in
  the last message) to ``chatmdc lsp`` over stdio until its
  ``publishDiagnostics`` for the document arrives, through pygls's client.
  Target: median within 1.5x the reference's median plus 20 ms;
* **hover** -- a ``hover`` request on a tag near the end of the transcript
  (the first after an edit, and the next ones) and
  on a ChatML name of the moderator script (opened in the server). Target:
  under 20 ms once the document is analysed.

Run: ``.venv/bin/python benchmarks/lsp.py [--repeat N] [--lines N]``
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from lsprotocol import types as lsp  # noqa: E402
from pygls.lsp.client import LanguageClient  # noqa: E402
from pygls.uris import from_fs_path  # noqa: E402

from chatmd.frontend import check_prompt  # noqa: E402

DIAGNOSTICS_FACTOR = 1.5
DIAGNOSTICS_SLACK_MS = 20.0
HOVER_TARGET_MS = 20.0

MODERATOR = r"""(* A guard: refuses a dangerous tool, counts what it allowed, ends long sessions. *)
type state = { rejected : int; allowed : int; turns : int }

let initial_state = { rejected = 0; allowed = 0; turns = 0 }

let max_turns = 50

let dangerous call = Tool_call.is_named(call, "delete_file")

let note_turn st =
  let turns = st.turns + 1 in
  if turns >= max_turns then
    let* () = Runtime.end_session("turn limit reached") in
    Task.pure({ st with turns = turns })
  else Task.pure({ st with turns = turns })

let on_event ctx st ev =
  match ev with
  | `Pre_tool_call(call) ->
    if dangerous(call) then
      let* () = Tool.reject("delete_file is disabled by the guard") in
      Task.pure({ st with rejected = st.rejected + 1 })
    else
      let* () = Log.info("allowed " ++ call.name) in
      Task.pure({ st with allowed = st.allowed + 1 })
  | `Turn_end -> note_turn(st)
  | _ -> Task.pure(st)
"""


def write_project(folder: Path, lines: int) -> Path:
    (folder / "lib").mkdir()
    (folder / "lib" / "guard.chatml").write_text(MODERATOR, encoding="utf-8")
    (folder / "lib" / "moderation.chatmd").write_text(
        '<script language="chatml" kind="moderator" src="guard.chatml"/>\n', encoding="utf-8")
    text = ['<config model="gpt-4o" max_tokens="512"/>', '<import src="lib/moderation.chatmd"/>',
            "<system>You are a careful assistant.</system>"]
    turn = 0
    while len(text) < lines - 6:
        turn += 1
        text += ["<user>", f"Question {turn}: what does file {turn}.txt say?", "</user>",
                 "<assistant>", f"It says line {turn} of the answer.", "</assistant>"]
    text += ["<user>", "last question", "</user>"]
    path = folder / "transcript.chatmd"
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    return path


def reference_ms(path: Path, repeat: int) -> list[float]:
    check_prompt(path)  # warm
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = check_prompt(path)
        times.append((time.perf_counter() - start) * 1000)
        assert not result.diagnostics, result.diagnostics
    return times


class Bench:
    def __init__(self) -> None:
        self.client = LanguageClient("benchmark", "1")
        self.waiting: dict[str, asyncio.Future[list[lsp.Diagnostic]]] = {}

        @self.client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: lsp.PublishDiagnosticsParams) -> None:
            future = self.waiting.pop(params.uri, None)
            if future is not None and not future.done():
                future.set_result(list(params.diagnostics))

    def expect(self, uri: str) -> asyncio.Future[list[lsp.Diagnostic]]:
        future: asyncio.Future[list[lsp.Diagnostic]] = asyncio.get_running_loop().create_future()
        self.waiting[uri] = future
        return future

    async def start(self) -> None:
        await self.client.start_io(sys.executable, "-m", "runtime.commands.chatmdc", "lsp")
        await self.client.initialize_async(lsp.InitializeParams(
            capabilities=lsp.ClientCapabilities()))
        self.client.initialized(lsp.InitializedParams())

    async def open(self, path: Path) -> str:
        uri = from_fs_path(str(path)) or ""
        future = self.expect(uri)
        self.client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id="chatmd", version=1,
                                               text=path.read_text(encoding="utf-8"))))
        await future
        return uri

    async def change_ms(self, uri: str, line: int, version: int) -> float:
        future = self.expect(uri)
        edit = lsp.TextDocumentContentChangePartial(
            range=lsp.Range(start=lsp.Position(line=line, character=0),
                            end=lsp.Position(line=line, character=1)),
            text="L" if version % 2 else "l")
        start = time.perf_counter()
        self.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[edit]))
        diagnostics = await future
        elapsed = (time.perf_counter() - start) * 1000
        assert diagnostics == [], diagnostics
        return elapsed

    async def hover_ms(self, uri: str, line: int, character: int) -> float:
        start = time.perf_counter()
        found = await self.client.text_document_hover_async(lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            position=lsp.Position(line=line, character=character)))
        elapsed = (time.perf_counter() - start) * 1000
        assert found is not None
        return elapsed

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()


def _show(name: str, times: list[float]) -> str:
    return f"{name:<34} median {statistics.median(times):8.2f} ms   best {min(times):8.2f} ms"


async def run(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory() as folder:
        path = write_project(Path(folder), args.lines)
        lines = path.read_text(encoding="utf-8").count("\n")
        reference = reference_ms(path, args.repeat)
        bench = Bench()
        await bench.start()
        try:
            uri = await bench.open(path)
            await bench.hover_ms(uri, 0, 2)  # warm: the first request imports the feature
            last_text_line = lines - 2  # "last question"
            changes = [await bench.change_ms(uri, last_text_line, version)
                       for version in range(2, args.repeat + 2)]
            first_hover = [await bench.hover_ms(uri, lines - 3, 2)]
            tag_hover = [await bench.hover_ms(uri, lines - 3, 2) for _ in range(args.repeat)]
            script = await bench.open(Path(folder) / "lib" / "guard.chatml")
            name_hover = [await bench.hover_ms(script, 16, 8) for _ in range(args.repeat)]
        finally:
            await bench.stop()
    check = statistics.median(reference)
    diagnostics = statistics.median(changes)
    budget = DIAGNOSTICS_FACTOR * check + DIAGNOSTICS_SLACK_MS
    print(f"transcript: {lines} lines, moderator script imported; {args.repeat} runs each")
    print(_show("chatmdc check (in-process)", reference))
    print(_show("didChange -> publishDiagnostics", changes))
    print(_show("hover on a tag, first after edit", first_hover))
    print(_show("hover on a tag", tag_hover))
    print(_show("hover on a ChatML name", name_hover))
    print(f"diagnostics / check: {diagnostics / check:.2f}x; budget 1.5x + 20 ms = "
          f"{budget:.1f} ms: {'met' if diagnostics <= budget else 'MISSED'}")
    hover = max(statistics.median(tag_hover), statistics.median(name_hover))
    print(f"hover: {hover:.2f} ms (target < {HOVER_TARGET_MS:.0f} ms): "
          f"{'met' if hover < HOVER_TARGET_MS else 'MISSED'}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--lines", type=int, default=5_000)
    return asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
