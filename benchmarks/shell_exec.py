"""Benchmark: one fixed shell tool call through the whole executor vs a bare ``subprocess.run``.

The executor path is everything a model's call goes through: JSON input
validation, request building, executable resolution with fingerprinting
(the SHA-256 cached by stat identity, so repeated calls pay one ``stat``),
re-verification before spawn, built-in effects, policy, capability check,
a hash-chained JSONL audit log (one fsync'd append per record), the direct
backend with output capture, finalisation and rendering. The reference is
``subprocess.run`` of the same argv with captured output, measured
interleaved in the same run. Prints the median per-call times, the overhead
per call (target: at most 5 ms) and the ratio; then the chain parser's
throughput on a generated chain.

Run: ``.venv/bin/python benchmarks/shell_exec.py [--calls N] [--no-audit]``
"""

from __future__ import annotations

import argparse
import gc
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from chatmd.shell.compile.chain import parse_chain  # noqa: E402
from runtime.shell.host import open_shell  # noqa: E402

PROMPT = """\
<shell_access id="bench">
  <capabilities sandbox="preferred"><read path="${{workspace}}"/></capabilities>
  <backends merge="replace"><direct/></backends>
  <policy default="deny"><rule id="true" action="allow"><basename value="true"/></rule></policy>
  {audit}
</shell_access>
<tool name="ok" type="shell" runtime="bench" command="true"/>
<user>bench</user>
"""


def measure_calls(calls: int, audit: bool) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.chatmd"
        audit_line = '<audit format="jsonl" path="audit.jsonl"/>' if audit else ""
        path.write_text(PROMPT.format(audit=audit_line), encoding="utf-8")
        session = open_shell(path, workspace=Path(folder), approvals="deny",
                             environ={"PATH": "/usr/bin:/bin"})
        argv = ["/usr/bin/true"]
        assert session.call("ok", "{}").error_code is None
        executor: list[float] = []
        bare: list[float] = []

        def through_executor() -> None:
            start = time.perf_counter()
            outcome = session.call("ok", "{}")
            executor.append(time.perf_counter() - start)
            assert outcome.error_code is None, outcome.text

        def bare_run() -> None:
            start = time.perf_counter()
            subprocess.run(argv, capture_output=True, check=False)
            bare.append(time.perf_counter() - start)

        gc.collect()
        for index in range(calls):  # alternate which goes first: no ordering bias
            first, second = (through_executor, bare_run) if index % 2 else (bare_run,
                                                                             through_executor)
            first()
            second()
        return statistics.median(executor), statistics.median(bare)


def chain_throughput(seconds: float = 1.0) -> tuple[float, int]:
    text = " && ".join(f"grep -n 'pattern {i}' \"file {i}.txt\" | sort | uniq -c ; echo done\\ {i}"
                       for i in range(200))
    data = len(text.encode())
    count = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        parse_chain(text)
        count += 1
    elapsed = time.perf_counter() - start
    return data * count / elapsed / 1e6, len(parse_chain(text).pipelines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--no-audit", action="store_true")
    args = parser.parse_args()
    executor, bare = measure_calls(args.calls, not args.no_audit)
    overhead = (executor - bare) * 1000
    print(f"fixed tool call through the executor: {executor * 1000:.2f} ms/call (median of "
          f"{args.calls}, audit {'off' if args.no_audit else 'jsonl'})")
    print(f"bare subprocess.run of the same argv: {bare * 1000:.2f} ms/call")
    print(f"overhead: {overhead:+.2f} ms/call (target <= 5 ms: "
          f"{'met' if overhead <= 5 else 'NOT met'}); ratio {executor / bare:.2f}x")
    rate, pipelines = chain_throughput()
    print(f"chain parser: {rate:.1f} MB/s on a {pipelines}-pipeline chain")


if __name__ == "__main__":
    main()
