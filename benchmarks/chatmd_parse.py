"""Benchmark: ChatMD frontend throughput and `chatmdc check` start-up time.

Generates a ~5 MB transcript (messages, tool calls and results, reasoning, with
RAW blocks, markdown tables and unknown tags), parses it with the full ChatMD
frontend, and parses an equivalent XML document with ``xml.etree.ElementTree``
in the same run. Prints MB/s for both and the ratio (target: >= 0.25), then the
wall time of ``chatmdc check`` on a small prompt (target: < 150 ms).

Run: ``.venv/bin/python benchmarks/chatmd_parse.py [--size-mb N] [--repeat N]``
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from chatmd.frontend import load_prompt_text  # noqa: E402

WORDS = ("the model reads files and writes patches | col | a<b then x > y "
         "<task>plan</task> RAW without bar `code` lorem ipsum dolor sit amet").split()


def _paragraph(rng: random.Random, words: int) -> str:
    lines = []
    for _ in range(max(1, words // 12)):
        lines.append(" ".join(rng.choice(WORDS) for _ in range(12)))
    return "\n".join(lines)


def generate(size: int, seed: int = 7) -> tuple[str, str]:
    """A ChatMD transcript of about ``size`` characters and the equivalent XML document."""
    rng = random.Random(seed)
    chatmd = ['<config model="gpt-4o" temperature="0.2" show_tool_call/>\n',
              '<tool name="read_file"/>\n<tool name="rg" command="rg" description="search"/>\n',
              "<system>\nYou are careful. Use <b>tools</b> when needed.\n</system>\n"]
    xml = ['<doc><config model="gpt-4o" temperature="0.2" show_tool_call=""/>\n',
           '<tool name="read_file"/>\n<tool name="rg" command="rg" description="search"/>\n',
           "<system>\nYou are careful. Use &lt;b&gt;tools&lt;/b&gt; when needed.\n</system>\n"]
    total = 0
    turn = 0
    while total < size:
        question = _paragraph(rng, 40)
        answer = _paragraph(rng, 150)
        arguments = '{"file": "src/module_%d.py", "offset": 0, "line_count": 200}' % turn
        output = _paragraph(rng, 300)
        summary = _paragraph(rng, 30)
        parts = [
            f"<user>\nRAW|{question}|RAW\n</user>\n",
            f'<reasoning id="rs_{turn}">\n<summary type="summary_text">RAW|{summary}|RAW</summary>\n</reasoning>\n',
            f'<tool_call function_name="read_file" tool_call_id="call_{turn}" id="fc_{turn}">\nRAW|{arguments}|RAW</tool_call>\n',
            f'<tool_response tool_call_id="call_{turn}">\nRAW|{output}|RAW</tool_response>\n',
            f'<assistant id="msg_{turn}" status="completed">\nRAW|{answer}|RAW</assistant>\n',
        ]
        xml_parts = [
            f"<user>{escape(question)}</user>\n",
            f'<reasoning id="rs_{turn}">\n<summary type="summary_text">{escape(summary)}</summary>\n</reasoning>\n',
            f'<tool_call function_name="read_file" tool_call_id={quoteattr(f"call_{turn}")} id="fc_{turn}">{escape(arguments)}</tool_call>\n',
            f'<tool_response tool_call_id="call_{turn}">{escape(output)}</tool_response>\n',
            f'<assistant id="msg_{turn}" status="completed">{escape(answer)}</assistant>\n',
        ]
        chunk = "".join(parts)
        chatmd.append(chunk)
        xml.append("".join(xml_parts))
        total += len(chunk)
        turn += 1
    xml.append("</doc>\n")
    return "".join(chatmd), "".join(xml)


def _best(function, repeat: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def _check_startup(repeat: int) -> float:
    prompt = REPO / "examples" / "hello.chatmd"
    command = [sys.executable, "-m", "chatmd.cli", "check", str(prompt)]
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, check=True, cwd=REPO, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=5.0)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    chatmd, xml = generate(int(args.size_mb * 1_000_000))
    frontend = _best(lambda: load_prompt_text(chatmd, name="bench.chatmd", prompt_dir=str(REPO)),
                     args.repeat)
    etree = _best(lambda: ElementTree.fromstring(xml), args.repeat)
    chatmd_rate = len(chatmd.encode()) / frontend / 1e6
    etree_rate = len(xml.encode()) / etree / 1e6
    ratio = chatmd_rate / etree_rate
    print(f"document: {len(chatmd.encode()) / 1e6:.2f} MB ChatMD, {len(xml.encode()) / 1e6:.2f} MB XML")
    print(f"chatmd frontend:  {chatmd_rate:8.1f} MB/s ({frontend * 1000:.0f} ms)")
    print(f"ElementTree:      {etree_rate:8.1f} MB/s ({etree * 1000:.0f} ms)")
    print(f"ratio: {ratio:.2f}x ElementTree (target >= 0.25) {'OK' if ratio >= 0.25 else 'MISSED'}")
    startup = _check_startup(max(3, args.repeat))
    print(f"chatmdc check on a small prompt: {startup * 1000:.0f} ms (target < 150 ms) "
          f"{'OK' if startup < 0.150 else 'MISSED'}")


if __name__ == "__main__":
    main()
