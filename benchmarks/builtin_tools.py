"""Benchmark: built-in tool runners and MCP calls against plain references in the same run.

* ``read_file`` of a 10 MB text file (output cut at 380,928 bytes) against a bare
  ``open().read(380928).decode()``, and a 100-line slice deep in the file
  (``offset`` 150,000) against ``itertools.islice`` over the file's lines;
* ``apply_patch`` of one hunk in the middle of a 1 MB file against the same edit
  done by hand (read, ``str.replace``, ``atomic_write_bytes``);
* one MCP ``tools/call`` through the synchronous runner (the event-loop thread
  bridge) against the same call made directly with the SDK's async client on
  its own loop, both to the same kind of stdio server.

The file pairs are interleaved and timed ``--repeat`` times, the MCP calls
``10 * --repeat`` times each; medians and ratios (runner / reference) are
printed. Targets: read_file and apply_patch within 3x of the references, the
MCP bridge within 2x (a loaded machine makes the MCP figures noisy).

Run: ``.venv/bin/python benchmarks/builtin_tools.py [--repeat N]``
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import shlex
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from chatcommon.atomic import atomic_write_bytes  # noqa: E402
from chatmd.frontend import load_prompt_text  # noqa: E402
from chatmd.ir import McpTool  # noqa: E402
from runtime.builtin_tools import ToolEnv, builtin_runner  # noqa: E402
from runtime.mcp import CatalogueCache, open_mcp_tools  # noqa: E402

SERVER = REPO / "tests" / "runtime" / "tools" / "mcp_server.py"


def median_time(action: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def pair(name: str, runner: Callable[[], object], reference: Callable[[], object],
         repeat: int) -> None:
    runner()
    reference()  # warm caches
    ours, theirs = [], []
    for _ in range(repeat):
        ours.append(median_time(runner, 1))
        theirs.append(median_time(reference, 1))
    a, b = statistics.median(ours), statistics.median(theirs)
    print(f"{name:<34} runner {a * 1e3:8.2f} ms   reference {b * 1e3:8.2f} ms   "
          f"ratio {a / b:5.2f}")


def tool(declaration: str, folder: Path) -> object:
    return load_prompt_text(declaration + "\n<user>x</user>\n", name="b.chatmd",
                            prompt_dir=str(folder)).tools[0]


def bench_read_file(folder: Path, repeat: int) -> None:
    path = folder / "big.txt"
    path.write_text("".join(f"line {n:07d} of the benchmark file, some words\n"
                            for n in range(200_000)))  # ~10 MB
    run = builtin_runner(tool('<tool name="read_file"/>', folder), ToolEnv(folder, folder))  # type: ignore[arg-type]
    whole = json.dumps({"file": "big.txt"})
    pair("read_file 10 MB (cut at 380,928 B)", lambda: run(whole),
         lambda: path.open("rb").read(380_928).decode(), repeat)
    deep = json.dumps({"file": "big.txt", "offset": 150_000, "line_count": 100})

    def islice_reference() -> str:
        with path.open("rb") as handle:
            return b"".join(itertools.islice(handle, 150_000, 150_100)).decode()

    pair("read_file offset 150,000 x 100", lambda: run(deep), islice_reference, repeat)


def bench_apply_patch(folder: Path, repeat: int) -> None:
    path = folder / "code.py"
    lines = [f"def function_{n}(x):\n    return x + {n}\n\n" for n in range(8_000)]
    original = "".join(lines) * 4  # about 1 MB
    run = builtin_runner(tool('<tool name="apply_patch"/>', folder), ToolEnv(folder, folder))  # type: ignore[arg-type]
    patches = [f"*** Begin Patch\n*** Update File: code.py\n@@ def function_4000(x):\n"
               f"-    return x + {old}\n+    return x + {new}\n*** End Patch"
               for old, new in (("4000", "-1"), ("-1", "4000"))]
    state = itertools.cycle(range(2))

    def patch() -> None:
        output = run(patches[next(state)])
        assert str(output).startswith("Success"), output

    def by_hand() -> None:
        text = path.read_text()
        atomic_write_bytes(path, text.replace("return x + 4000\n", "return x + 4000\n", 1)
                           .encode())

    path.write_text(original)
    pair("apply_patch 1 hunk, 1 MB file", patch, by_hand, repeat)


async def _direct_calls(repeat: int) -> list[float]:
    """Per-call times of ``echo`` made with the SDK's async client on its own loop."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=[str(SERVER)])
    samples = []
    async with Client(params, cache=None) as client:
        await client.call_tool("echo", {"text": "hi"})
        for _ in range(repeat):
            start = time.perf_counter()
            await client.call_tool("echo", {"text": "hi"})
            samples.append(time.perf_counter() - start)
    return samples


def bench_mcp(folder: Path, repeat: int) -> None:
    stdio = "stdio:" + shlex.join([sys.executable, str(SERVER)])
    prompt = load_prompt_text(f'<tool mcp_server="{stdio}" name="echo"/>\n<user>x</user>',
                              name="b.chatmd", prompt_dir=str(folder))
    nodes = [t for t in prompt.tools if isinstance(t, McpTool)]
    with open_mcp_tools(nodes, ToolEnv(folder, folder), cache=CatalogueCache()) as tools:
        echo = tools.runners["echo"]
        echo('{"text": "hi"}')
        ours = [median_time(lambda: echo('{"text": "hi"}'), 1) for _ in range(10 * repeat)]
    theirs = asyncio.run(_direct_calls(10 * repeat))
    a, b = statistics.median(ours), statistics.median(theirs)
    print(f"{'MCP tools/call (stdio echo)':<34} runner {a * 1e3:8.2f} ms   reference "
          f"{b * 1e3:8.2f} ms   ratio {a / b:5.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        bench_read_file(folder, args.repeat)
        bench_apply_patch(folder, args.repeat)
        bench_mcp(folder, args.repeat)


if __name__ == "__main__":
    main()
