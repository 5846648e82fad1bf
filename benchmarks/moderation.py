"""Benchmark: the moderator runtime -- events per second, per-turn overhead, snapshots.

Three measurements, each the best of ``--repeat`` runs:

* **events/s** -- a realistic moderator (a guard that rewrites or rejects tool
  calls, a redactor that replaces items mentioning a secret, turn bookkeeping
  in a record state, ``Context`` searches at ``turn_start``) receives a mixed
  stream of ``turn_start`` / ``pre_tool_call`` / ``message_appended`` /
  ``post_tool_response`` / ``turn_end`` / internal events against a 200-item
  canonical history; every event is a full transaction (ctx, handler run in
  the VM, task interpretation, effect validation, overlay commit).
  Target: >= 5,000 events/s.
* **overhead per model turn** -- :meth:`runtime.session.Session.run_turn` on the
  200-item history (reset to those 200 items between turns) with a fake model that answers one message and one tool
  call (a no-op tool), minus the same turn without a moderator: the cost the
  moderator adds to a turn (``turn_start`` + drain, ``pre_tool_call``,
  ``message_appended`` x3, ``post_tool_response`` + drain, ``turn_end`` + drain,
  projections). Target: < 5 ms.
* **snapshot save / restore** -- a state of about 1 MB (records of strings and
  numbers in arrays): ``snapshot()`` + atomic write, and read + validate +
  ``ModeratorManager.create(snapshot=...)``. Reported, no target.

Run: ``.venv/bin/python benchmarks/moderation.py [--repeat N] [--events N]``
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from chatml.values import Variant  # noqa: E402
from runtime.ids import Entry, EntryAllocator  # noqa: E402
from runtime.manager import ModeratorManager  # noqa: E402
from runtime.moderation import (  # noqa: E402
    InternalEvent,
    ItemAppended,
    PostToolResponse,
    PreToolCall,
    TurnEnd,
    TurnStart,
)
from runtime.registry import ModeratorRegistry  # noqa: E402
from runtime.snapshot import load_snapshot, save_snapshot  # noqa: E402

EVENTS_TARGET = 5_000
TURN_TARGET_MS = 5.0
HISTORY_SIZE = 200

MODERATOR = r"""
type state = { turns : int; rejected : int; rewritten : int; redacted : int; ticks : int }

let initial_state = { turns = 0; rejected = 0; rewritten = 0; redacted = 0; ticks = 0 }

let mentions_secret item =
  Array.exists(Item.text_parts(item), fun text -> String.contains(text, "SECRET"))

let redacted item =
  let id = Item.id(item) in
  if Item.is_tool_result(item) then
    Item.create(id, Json.set_field(Item.value(item), "output", `String("[redacted]")))
  else if Item.is_assistant(item) then Item.output_text_message(id, "[redacted]")
  else Item.input_text_message(id, "user", "[redacted]")

let on_event ctx st ev =
  match ev with
  | `Turn_start ->
    (match Context.last_user_item(ctx) with
     | `Some(item) ->
       if mentions_secret(item) then
         let* () = Turn.replace_item(Item.id(item), redacted(item)) in
         Task.pure({ st with redacted = st.redacted + 1 })
       else Task.pure(st)
     | `None -> Task.pure(st))
  | `Pre_tool_call(call) ->
    if Tool_call.is_named(call, "delete_file") then
      let* () = Tool.reject("delete_file is disabled") in
      Task.pure({ st with rejected = st.rejected + 1 })
    else
      (match Tool_call.arg_string(call, "path") with
       | `Some(path) ->
         if String.starts_with(path, "/") then
           let* () = Tool.rewrite_args(`Object([{ key = "path"; value = `String("." ++ path) }])) in
           Task.pure({ st with rewritten = st.rewritten + 1 })
         else Task.pure(st)
       | `None -> Task.pure(st))
  | `Item_appended(item) ->
    if mentions_secret(item) then
      let* () = Turn.replace_item(Item.id(item), redacted(item)) in
      Task.pure({ st with redacted = st.redacted + 1 })
    else Task.pure(st)
  | `Post_tool_response(result) -> Task.pure(st)
  | `Turn_end ->
    let* () = Runtime.emit(`Tick) in
    Task.pure({ st with turns = st.turns + 1 })
  | `Tick ->
    let* () = Log.debug("tick") in
    Task.pure({ st with ticks = st.ticks + 1 })
  | _ -> Task.pure(st)
"""


def message(role: str, text: str, item_id: str | None = None) -> dict[str, Any]:
    if role == "assistant":
        return {"type": "message", "role": "assistant", "id": item_id or "msg", "status":
                "completed", "content": [{"type": "output_text", "text": text,
                                          "annotations": []}]}
    return {"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]}


def history(size: int, allocator: EntryAllocator) -> list[Entry]:
    """A conversation of user questions, answers, tool calls and outputs."""
    items: list[dict[str, Any]] = []
    turn = 0
    while len(items) < size:
        turn += 1
        items.append(message("user", f"question {turn}: please read the file number {turn}"))
        items.append({"type": "function_call", "name": "read_file", "call_id": f"c{turn}",
                      "arguments": f'{{"path": "src/file_{turn}.py"}}', "id": f"fc{turn}"})
        items.append({"type": "function_call_output", "call_id": f"c{turn}",
                      "output": f"def f{turn}():\n    return {turn}\n" * 5})
        items.append(message("assistant", f"The file {turn} defines f{turn}. " * 4,
                             f"msg{turn}"))
    return [Entry(allocator.allocate(), item) for item in items[:size]]


def best(repeat: int, run: Callable[[], float]) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        times.append(run())
    return min(times)


def bench_events(artifact: Any, count: int, repeat: int) -> tuple[float, int]:
    allocator = EntryAllocator("bench/stream")
    entries = history(HISTORY_SIZE, allocator)
    secret = Entry(allocator.allocate(), message("assistant", "the SECRET is 42", "msg-s"))
    plain = Entry(allocator.allocate(), message("assistant", "nothing to see", "msg-p"))
    output = {"type": "function_call_output", "call_id": "c1", "output": "ok"}
    cycle: list[Any] = [
        TurnStart(),
        PreToolCall("c1", "read_file", '{"path": "/etc/passwd"}'),
        PreToolCall("c2", "delete_file", '{"path": "x"}'),
        PreToolCall("c3", "read_file", '{"path": "src/a.py"}'),
        ItemAppended(plain),
        ItemAppended(secret),
        PostToolResponse("c1", "read_file", output["output"]),
        TurnEnd(),
        InternalEvent(Variant("Tick")),
    ]
    full = entries + [secret, plain]

    def run() -> float:
        manager = ModeratorManager.create(artifact, allocator=EntryAllocator("bench/o"))
        start = time.perf_counter()
        for index in range(count):
            manager.handle_event(cycle[index % len(cycle)], session_id="bench",
                                 history=full, now_ms=0)
        return time.perf_counter() - start

    elapsed = best(repeat, run)
    return count / elapsed, len(cycle)


def bench_turn(prompt_dir: Path, turns: int, repeat: int) -> tuple[float, float]:
    from runtime.prompt_checks import load_prompt
    from runtime.session import Session

    def fake_model(request: Any) -> list[dict[str, Any]]:
        return [message("assistant", "Let me look at that file.", "msg-x"),
                {"type": "function_call", "name": "search", "call_id": "cx",
                 "arguments": '{"arguments": ["/etc/hosts"]}', "id": "fcx"}]

    def session_for(name: str) -> Any:
        session = Session.open(load_prompt(prompt_dir / name),
                               runners={"search": lambda payload: "no match"},
                               parallel_tool_calls=False)
        seed = history(HISTORY_SIZE, EntryAllocator("seed"))
        for entry in seed:
            session._history.append(Entry(session.allocator.allocate(), entry.item))
        return session

    def timed(name: str) -> float:
        # Every turn runs on the same 200-item history: the items a turn adds
        # are dropped again between turns, outside the timed region, so the
        # figure is the cost of one turn on a 200-item history rather than on
        # a history that keeps growing with the number of turns measured.
        session = session_for(name)
        seeded = len(session._history)
        elapsed = 0.0
        for _ in range(turns):
            start = time.perf_counter()
            session.run_turn(fake_model)
            elapsed += time.perf_counter() - start
            del session._history[seeded:]
        return elapsed / turns

    moderated = best(repeat, lambda: timed("moderated.chatmd"))
    plain = best(repeat, lambda: timed("plain.chatmd"))
    return moderated * 1000, plain * 1000


STATE_SCRIPT = """
type entry = { key : string; text : string; score : float; tags : string array }
let initial_state = { entries = [{ key = ""; text = ""; score = 0.0; tags = [""] }] }
let on_event ctx st ev = Task.pure(st)
"""


def big_state(target_bytes: int) -> dict[str, Any]:
    entries = []
    size = 0
    index = 0
    while size < target_bytes:
        text = f"note {index}: " + "lorem ipsum dolor sit amet " * 4
        entries.append({"key": f"k{index}", "text": text, "score": index / 7,
                        "tags": ["alpha", "beta", f"t{index % 10}"]})
        size += len(text) + 120
        index += 1
    return {"entries": entries}


def bench_snapshot(repeat: int, folder: Path) -> tuple[float, float, int]:
    artifact = ModeratorRegistry().compile_text(STATE_SCRIPT, script_id="big")
    manager = ModeratorManager.create(artifact)
    manager._state = big_state(1_000_000)
    path = folder / "big.snapshot.json"

    def save() -> float:
        start = time.perf_counter()
        save_snapshot(path, manager.snapshot())
        return time.perf_counter() - start

    def restore() -> float:
        start = time.perf_counter()
        ModeratorManager.create(artifact, snapshot=load_snapshot(path))
        return time.perf_counter() - start

    save_time = best(repeat, save)
    restore_time = best(repeat, restore)
    return save_time * 1000, restore_time * 1000, path.stat().st_size


PROMPT = """<config model="bench" id="bench"/>
<tool name="search" command="grep -r"/>
{script}<system>You are helpful.</system>
<user>Hello</user>
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--turns", type=int, default=200)
    args = parser.parse_args()

    artifact = ModeratorRegistry().compile_text(MODERATOR, script_id="bench")
    events_per_second, kinds = bench_events(artifact, args.events, args.repeat)
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        (folder / "bench.chatml").write_text(MODERATOR)
        (folder / "moderated.chatmd").write_text(PROMPT.format(
            script='<script language="chatml" kind="moderator" id="bench" src="bench.chatml"/>\n'))
        (folder / "plain.chatmd").write_text(PROMPT.format(script=""))
        moderated_ms, plain_ms = bench_turn(folder, args.turns, args.repeat)
        save_ms, restore_ms, size = bench_snapshot(args.repeat, folder)
    overhead = moderated_ms - plain_ms
    print(f"history: {HISTORY_SIZE} items; {kinds} event kinds in rotation")
    print(f"events/s:            {events_per_second:10,.0f}   (target >= {EVENTS_TARGET:,}) "
          f"{'OK' if events_per_second >= EVENTS_TARGET else 'MISSED'}")
    print(f"turn, moderated:     {moderated_ms:10.3f} ms")
    print(f"turn, no moderator:  {plain_ms:10.3f} ms")
    print(f"moderation overhead: {overhead:10.3f} ms per model turn (target < {TURN_TARGET_MS} ms) "
          f"{'OK' if overhead < TURN_TARGET_MS else 'MISSED'}")
    print(f"snapshot save:       {save_ms:10.1f} ms  ({size / 1e6:.2f} MB file)")
    print(f"snapshot restore:    {restore_ms:10.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
