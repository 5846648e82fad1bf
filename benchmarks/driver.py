"""Benchmark: chat driver overhead per turn, and the cost of appending a turn to a transcript.

1. Overhead: ``--turns`` chat turns (user message, streamed answer, transcript write-back,
   placeholder) through :class:`runtime.driver.loop.FileRun` and the real ``openai`` client
   against the loopback Responses server (tests/runtime/driver/loopback.py). Driver overhead
   = turn time minus the time the server spent answering. The reference, measured in the
   same run: the same request body sent with a plain ``client.responses.create(**body,
   stream=True)`` and its events consumed (no transcript, no session), and through the
   driver's adapter alone (which hands the body to the SDK untransformed), to separate the
   model call from the driver's own work. Target: overhead under
   10 ms per turn.
2. Append: one turn (tool call, tool output, assistant message, placeholder) appended with
   :class:`runtime.driver.transcript.TranscriptAppender` to a 10 MB transcript and to a
   small one, interleaved. Target: big/small within 2x. The whole-file atomic rewrite of
   :func:`chatmd.transcript_writer.append_to_transcript` is printed as the reference it replaces.

Run: ``.venv/bin/python benchmarks/driver.py [--turns N] [--appends N] [--size-mb N]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from chatmd.transcript_writer import append_to_transcript  # noqa: E402
from runtime.driver.client import ClientSettings, make_client  # noqa: E402
from runtime.driver.context import DriverContext  # noqa: E402
from runtime.driver.display import QuietDisplay  # noqa: E402
from runtime.driver.events import EventLog  # noqa: E402
from runtime.driver.loop import FileRun  # noqa: E402
from runtime.driver.streaming import NullObserver, stream_response  # noqa: E402
from runtime.driver.transcript import TranscriptAppender  # noqa: E402
from runtime.items import input_message  # noqa: E402
from tests.runtime.driver import loopback as lb  # noqa: E402

ANSWER = "A reasonably sized answer of the model, streamed in a few deltas. " * 4


def _overhead(turns: int, folder: Path) -> tuple[float, float, float, float]:
    """Medians (ms): driver turn, server time per turn, the same body through the adapter
    alone (:func:`stream_response`), and through a plain SDK call."""
    prompt = folder / "bench.chatmd"
    prompt.write_text('<config model="m"/>\n<system>Be brief.</system>\n<user>\n\n</user>\n')
    with lb.LoopbackServer([lb.text(ANSWER) for _ in range(3 * turns + 3)]) as server:
        settings = ClientSettings(base_url=server.base_url, api_key="k")
        client = make_client(settings)
        file_run = FileRun(prompt, DriverContext(client=client, client_settings=settings,
                                                 workspace=folder, events=EventLog(),
                                                 display=QuietDisplay()))
        file_run.open()
        driver_ms, server_ms, adapter_ms, bare_ms = [], [], [], []
        for turn in range(turns + 1):
            before = server.server_seconds
            started = time.perf_counter()
            assert file_run.appender is not None
            file_run.appender.user_message(input_message("user", f"question {turn}"))
            file_run.session.add_user_message(f"question {turn}")
            outcome = file_run.run(None)
            elapsed = time.perf_counter() - started
            assert outcome.exit_code == 0, outcome.message
            spent = server.server_seconds - before
            body = {key: value for key, value in server.requests[-1].items()
                    if key != "stream"}
            started = time.perf_counter()
            stream_response(client, body, settings, NullObserver())
            adapter = time.perf_counter() - started
            started = time.perf_counter()
            for _event in client.responses.create(**body, stream=True):
                pass
            bare = time.perf_counter() - started
            if turn:  # the first turn warms the connection pool and imports
                driver_ms.append(elapsed * 1000)
                server_ms.append(spent * 1000)
                adapter_ms.append(adapter * 1000)
                bare_ms.append(bare * 1000)
        file_run.close()
    return (statistics.median(driver_ms), statistics.median(server_ms),
            statistics.median(adapter_ms), statistics.median(bare_ms))


def _turn_items(n: int) -> list[dict[str, object]]:
    return [{"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}", "name": "read_file",
             "arguments": '{"file": "src/main.py"}'},
            {"type": "function_call_output", "call_id": f"call_{n}", "output": "x = 1\n" * 40},
            {"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": ANSWER}]}]


def _big_transcript(path: Path, size_mb: float) -> None:
    chunk = ("<assistant id=\"old\" status=\"completed\">\nRAW|" + ANSWER * 8 + "|RAW</assistant>\n")
    count = int(size_mb * 1024 * 1024 / len(chunk)) + 1
    path.write_text('<config model="m"/>\n<user>hi</user>\n' + chunk * count)


def _append_costs(appends: int, size_mb: float, folder: Path) -> dict[str, float]:
    small, big = folder / "small.chatmd", folder / "big.chatmd"
    small.write_text('<config model="m"/>\n<user>hi</user>\n')
    _big_transcript(big, size_mb)
    writers = {name: TranscriptAppender(path, show_tool_call=False,
                                        payload_dir=folder / f".{name}")
               for name, path in (("small", small), ("big", big))}
    times: dict[str, list[float]] = {"small": [], "big": [], "rewrite_small": [],
                                     "rewrite_big": []}
    for n in range(appends):
        for name in ("small", "big"):
            started = time.perf_counter()
            for item in _turn_items(n):
                writers[name].append(item)
            writers[name].placeholder()
            times[name].append((time.perf_counter() - started) * 1000)
    for n in range(max(3, appends // 4)):
        for name, path in (("rewrite_small", small), ("rewrite_big", big)):
            started = time.perf_counter()
            append_to_transcript(path, _turn_items(10_000 + n), show_tool_call=False,
                                 payload_dir=folder / f".{name}", placeholder=True)
            times[name].append((time.perf_counter() - started) * 1000)
    result = {name: statistics.median(values) for name, values in times.items()}
    result["big_mb"] = os.path.getsize(big) / 1024 / 1024
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--appends", type=int, default=40)
    parser.add_argument("--size-mb", type=float, default=10.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        driver, server, adapter, bare = _overhead(args.turns, folder)
        costs = _append_costs(args.appends, args.size_mb, folder)
    overhead = driver - server
    print(f"turn through the driver: {driver:.2f} ms (median of {args.turns}); "
          f"server: {server:.2f} ms")
    print(f"driver overhead per turn: {overhead:.2f} ms (target < 10 ms) "
          f"{'OK' if overhead < 10 else 'MISSED'}")
    print(f"of which the model call (same body through the adapter alone: SDK, HTTP, SSE "
          f"parsing): {adapter:.2f} ms; the driver's own work (session, transcript, fsync at "
          f"the turn's end, events): {driver - adapter:.2f} ms")
    print(f"reference, the same request through a plain client.responses.create(**body, "
          f"stream=True): {bare:.2f} ms; driver turn / plain SDK call = {driver / bare:.2f}x")
    ratio = costs["big"] / costs["small"]
    print(f"append one turn: small transcript {costs['small']:.2f} ms, "
          f"{costs['big_mb']:.1f} MB transcript {costs['big']:.2f} ms; "
          f"ratio {ratio:.2f}x (target <= 2x) {'OK' if ratio <= 2 else 'MISSED'}")
    print(f"reference, whole-file atomic rewrite (chatmd.transcript_writer.append_to_transcript): "
          f"small {costs['rewrite_small']:.2f} ms, big {costs['rewrite_big']:.2f} ms; "
          f"ratio {costs['rewrite_big'] / costs['rewrite_small']:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
