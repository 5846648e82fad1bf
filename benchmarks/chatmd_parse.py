"""Benchmark: ChatMD frontend throughput and `chatmdc check` start-up time.

Generates a ~5 MB transcript (messages, tool calls and results, reasoning, with
RAW blocks, markdown tables and unknown tags), loads it with the full ChatMD
frontend (``load_prompt_text``: parse, imports, declarations), and parses an
equivalent XML document with ``xml.etree.ElementTree`` in the same run, the two
interleaved. Prints MB/s for both and the ratio (target: >= 0.25). Then the
element-dense shape of issue 15 (9,000 rounds of four short elements, 12 MB):
a whole ``chatmdc check`` process on it, CPU time minus the start-up of one on
a tiny prompt, against ElementTree parsing the same content as XML (target:
>= 0.25). Then the
time of ``chatmdc check`` on the bundled example prompt and on a small prompt
without shell declarations (target: < 150 ms).

Run: ``.venv/bin/python benchmarks/chatmd_parse.py [--size-mb N] [--repeat N] [--dense-rounds N]
[--dense-repeat N]``
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from chatmd.frontend import load_prompt_text  # noqa: E402

WORDS = ["the", "model", "reads", "files", "and", "writes", "patches", "|", "col", "|", "a<b",
         "then", "x", ">", "y", "<task>plan</task>", "RAW", "without", "bar", "`code`", "lorem",
         "ipsum", "dolor", "sit", "amet"]


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
        arguments = f'{{"file": "src/module_{turn}.py", "offset": 0, "line_count": 200}}'
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


PLAIN_WORDS = ["the", "model", "reads", "files", "and", "writes", "patches", "then", "code",
               "lorem", "ipsum", "dolor", "sit", "amet", "tests", "pass", "review", "module"]


def _words(rng: random.Random, count: int) -> str:
    return " ".join(rng.choice(PLAIN_WORDS) for _ in range(count))


def generate_dense(rounds: int, seed: int = 11) -> tuple[str, str]:
    """The element-dense transcript of issue 15 and the equivalent XML document.

    ``rounds`` rounds of a 70-word ``<user>``, a 70-word ``<assistant>``, a
    ``<tool_call>`` whose argument is one line of RAW JSON and a
    ``<tool_response>`` with a 70-word RAW body: 4 short elements per round
    (9,000 rounds: 36,000 elements, about 12 MB).
    """
    rng = random.Random(seed)
    chatmd = ['<config model="gpt-4o" temperature="0.2"/>\n<tool name="read_file"/>\n']
    xml = ['<doc><config model="gpt-4o" temperature="0.2"/>\n<tool name="read_file"/>\n']
    for turn in range(rounds):
        question, answer, output = _words(rng, 70), _words(rng, 70), _words(rng, 70)
        arguments = (f'{{"file": "src/module_{turn}.py", "offset": {turn % 97}, '
                     f'"line_count": 200, "note": "{_words(rng, 6)}"}}')
        chatmd.append(
            f"<user>\n{question}\n</user>\n"
            f"<assistant>\n{answer}\n</assistant>\n"
            f'<tool_call function_name="read_file" tool_call_id="call_{turn}">'
            f"RAW|{arguments}|RAW</tool_call>\n"
            f'<tool_response tool_call_id="call_{turn}">RAW|{output}|RAW</tool_response>\n')
        xml.append(
            f"<user>\n{escape(question)}\n</user>\n"
            f"<assistant>\n{escape(answer)}\n</assistant>\n"
            f'<tool_call function_name="read_file" tool_call_id="call_{turn}">'
            f"{escape(arguments)}</tool_call>\n"
            f'<tool_response tool_call_id="call_{turn}">{escape(output)}</tool_response>\n')
    xml.append("</doc>\n")
    return "".join(chatmd), "".join(xml)


def _check_cpu(prompt: Path, repeat: int) -> float:
    """Best CPU time (user + system) of a whole ``chatmdc check PROMPT`` process."""
    command = [sys.executable, "-m", "runtime.commands.chatmdc", "check", str(prompt)]
    best = float("inf")
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(command, check=False, cwd=REPO, capture_output=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        best = min(best, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return best


def _etree_cpu(xml: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.process_time()
        ElementTree.fromstring(xml)
        best = min(best, time.process_time() - start)
    return best


def report_dense(rounds: int, repeat: int) -> None:
    """``chatmdc check`` (whole process minus start-up) on the dense shape vs ElementTree.

    Each of ``repeat`` rounds runs a start-up process, a dense process and
    ElementTree once, in that order, so that a machine load that drifts moves
    all three alike; the best of each is reported.
    """
    chatmd, xml = generate_dense(rounds)
    with tempfile.TemporaryDirectory() as folder:
        dense = Path(folder) / "dense.chatmd"
        dense.write_text(chatmd, encoding="utf-8")
        plain = Path(folder) / "plain.chatmd"
        plain.write_text(NO_SHELL_PROMPT, encoding="utf-8")
        _check_cpu(plain, 1)  # (warms the interpreter's bytecode caches)
        start_up = whole = etree = float("inf")
        for _ in range(repeat):
            start_up = min(start_up, _check_cpu(plain, 1))
            whole = min(whole, _check_cpu(dense, 1))
            etree = min(etree, _etree_cpu(xml, 1))
    work = max(whole - start_up, 1e-9)
    size = len(chatmd.encode())
    ratio = (size / work) / (len(xml.encode()) / etree)
    print(f"dense transcript: {rounds} rounds, {4 * rounds} elements, {size / 1e6:.2f} MB ChatMD")
    print(f"chatmdc check (process CPU {whole * 1000:.0f} ms - start-up {start_up * 1000:.0f} ms):"
          f" {size / work / 1e6:8.1f} MB/s")
    print(f"ElementTree:      {len(xml.encode()) / etree / 1e6:8.1f} MB/s ({etree * 1000:.0f} ms)")
    print(f"dense ratio: {ratio:.2f}x ElementTree (target >= 0.25) "
          f"{'OK' if ratio >= 0.25 else 'MISSED'}")


def _interleaved_best(functions: list, repeat: int) -> list[float]:
    """Best wall time of each function, running them in turn so that load spikes hit all alike."""
    best = [float("inf")] * len(functions)
    for _ in range(repeat):
        for index, function in enumerate(functions):
            gc.collect()
            start = time.perf_counter()
            function()
            best[index] = min(best[index], time.perf_counter() - start)
    return best


NO_SHELL_PROMPT = """<config model="gpt-4o" temperature="0.2"/>
<tool name="read_file"/>
<system>You are careful.</system>
<user>Summarise README.md.</user>
"""


def _check_startup(prompt: Path, repeat: int) -> tuple[float, float, float]:
    """Median and best wall time, and median CPU time, of ``chatmdc check PROMPT``.

    Bytecode caching is allowed (as in any installed toolchain) and one
    warm-up run fills the cache first, so the numbers are what a user sees
    from the second run on. CPU time (user + system of the child) is printed
    too: on a shared machine it is the steadier number.
    """
    command = [sys.executable, "-m", "runtime.commands.chatmdc", "check", str(prompt)]
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(command, check=True, cwd=REPO, capture_output=True, env=env)
    walls = []
    cpus = []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, check=True, cwd=REPO, capture_output=True, env=env)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls), min(walls), statistics.median(cpus)


def _report_startup(label: str, prompt: Path, repeat: int) -> None:
    wall, best, cpu = _check_startup(prompt, repeat)
    print(f"chatmdc check {label}: median {wall * 1000:.0f} ms, best {best * 1000:.0f} ms, "
          f"CPU {cpu * 1000:.0f} ms (target < 150 ms) {'OK' if wall < 0.150 else 'MISSED'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=5.0)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--dense-rounds", type=int, default=9000,
                        help="rounds of the element-dense transcript (default 9000: 12 MB)")
    parser.add_argument("--dense-repeat", type=int, default=7,
                        help="rounds of start-up, dense process and ElementTree, best of each "
                        "(default 7)")
    args = parser.parse_args()
    chatmd, xml = generate(int(args.size_mb * 1_000_000))
    frontend, etree = _interleaved_best([
        lambda: load_prompt_text(chatmd, name="bench.chatmd", prompt_dir=str(REPO)),
        lambda: ElementTree.fromstring(xml)], args.repeat)
    chatmd_rate = len(chatmd.encode()) / frontend / 1e6
    etree_rate = len(xml.encode()) / etree / 1e6
    ratio = chatmd_rate / etree_rate
    print(f"document: {len(chatmd.encode()) / 1e6:.2f} MB ChatMD, {len(xml.encode()) / 1e6:.2f} MB XML")
    print(f"chatmd frontend:  {chatmd_rate:8.1f} MB/s ({frontend * 1000:.0f} ms)")
    print(f"ElementTree:      {etree_rate:8.1f} MB/s ({etree * 1000:.0f} ms)")
    print(f"ratio: {ratio:.2f}x ElementTree (target >= 0.25) {'OK' if ratio >= 0.25 else 'MISSED'}")
    report_dense(args.dense_rounds, args.dense_repeat)
    repeat = max(10, args.repeat)
    _report_startup("on examples/hello.chatmd", REPO / "examples" / "hello.chatmd", repeat)
    with tempfile.TemporaryDirectory() as folder:
        plain = Path(folder) / "plain.chatmd"
        plain.write_text(NO_SHELL_PROMPT, encoding="utf-8")
        _report_startup("on a prompt without shell declarations", plain, repeat)

if __name__ == "__main__":
    main()
