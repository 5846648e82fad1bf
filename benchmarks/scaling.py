"""Benchmark: every adversarial shape of issue 16 costs time and memory linear in its size.

Each shape generates an input of size ``n`` and of size ``4n`` and runs one
command line on it as a fresh process (``chatml check``, ``chatml dis``,
``chatmdc check`` ...), best of ``--repeat`` runs. It prints, per shape, the
CPU time (user + system, of that child: steadier than wall time on a shared
machine) and the peak resident memory, both as GNU ``time`` (``/usr/bin/time``) reports them, (``ru_maxrss`` of that child) at both
sizes and the fitted exponents

    time exponent   = log((t(4n) - t0) / (t(n) - t0)) / log 4
    memory exponent = log((m(4n) - m0) / (m(n) - m0)) / log 4

where ``t0`` and ``m0`` are the reference measured in the same run: the same
command on a trivial input (interpreter start-up and imports). 1.0 is linear,
2.0 quadratic; the target is at most 1.2 for every shape. Large literals (10 or
20 MB at n, 4 times that at 4n) also print their peak memory per input byte at
both sizes (target: at most 40).

Run: ``.venv/bin/python benchmarks/scaling.py [--scale F] [--repeat N] [--only NAME...]``
(``--scale 0.25`` for a quick look; exit status 1 when a shape misses its target).
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
TARGET_EXPONENT = 1.2
TARGET_BYTES_PER_BYTE = 40


@dataclass(frozen=True)
class Shape:
    """An input family: ``make(n)`` gives the files, ``command`` runs on ``main``."""

    name: str
    n: int
    command: tuple[str, ...]
    main: str
    make: Callable[[int], dict[str, str]]
    literal: bool = False  # also report peak bytes per input byte


def _ml(text: str) -> dict[str, str]:
    return {"p.chatml": text}


def _md(text: str, **extra: str) -> dict[str, str]:
    return {"p.chatmd": text, **extra}


def nested_modules(n: int) -> dict[str, str]:
    return _ml("module M = struct\n" * n + "let x = 1\n" + "end\n" * n)


def nested_lists(n: int) -> dict[str, str]:
    return _ml("let x = " + "[" * n + "1" + "]" * n + "\n")


def distinct_tags(n: int) -> dict[str, str]:
    return _ml("let x = [" + "; ".join(f"`T{i}" for i in range(n)) + "]\n")


def tags_statement(n: int) -> dict[str, str]:
    return _ml("[" + ", ".join(f"`T{i}" for i in range(n)) + "]\n")


def match_arms(n: int) -> dict[str, str]:
    arms = "".join(f"  | {i} -> {i}\n" for i in range(n))
    return _ml(f"let f x = match x with\n{arms}  | _ -> 0\n")


def tag_match_arms(n: int) -> dict[str, str]:
    arms = "".join(f"  | `T{i} -> {i}\n" for i in range(n))
    return _ml(f"let f x = match x with\n{arms}")


def nested_records(n: int) -> dict[str, str]:
    return _ml("let x = " + "{ a = " * n + "1" + " }" * n + "\n")


def large_record(n: int) -> dict[str, str]:
    return _ml("let x = { " + "; ".join(f"f{i} = {i}" for i in range(n)) + " }\n"
               "let y = x.f0\n")


def string_matches(n: int) -> dict[str, str]:
    arms = "".join(f'  | "{"s" * 20}{i}" -> {i}\n' for i in range(n))
    return _ml(f"let f x = match x with\n{arms}  | _ -> 0\n")


def sequence(n: int) -> dict[str, str]:
    return _ml("let f () =\n  " + ";\n  ".join(f"print({i})" for i in range(n)) + "\n")


def swallowing_sequence(n: int) -> dict[str, str]:
    item = "if true then 0 else (while false do () done)"
    return _ml("let f () = (" + "; ".join([item] * n) + ")\n")


def mutual_recursion(n: int) -> dict[str, str]:
    lines = ["let rec f0 x = x"] + [f"and f{i} x = f{i - 1}(x)" for i in range(1, n)]
    return _ml("\n".join(lines) + "\n")


def else_if_chain(n: int) -> dict[str, str]:
    return _ml("let f x =\n  " + "".join(f"if x == {i} then {i} else " for i in range(n))
               + "0\n")


def deep_constant(n: int) -> dict[str, str]:
    """32 functions matching a pattern ``n`` deep (32, so that the work at n is several times
    the start-up being subtracted while 4n stays within ``MAX_PATTERN_DEPTH``; with 8 it
    was barely above it, and the fitted exponent swung between 1.0 and 1.7 from run to run)."""
    pattern = "`A(" * n + "y" + ")" * n
    return _ml("".join(f"let f{i} x = match x with | {pattern} -> 1 | _ -> 2\n"
                       for i in range(32)))


def nested_while(n: int) -> dict[str, str]:
    return _ml("let f () = " + "while false do " * n + "()" + " done" * n + "\n")


def run_nested_if(n: int) -> dict[str, str]:
    """``if`` nested ``n`` deep (past Python's 100 levels: the reference-interpreter fallback)."""
    head = "".join(f"if n > {i} then " for i in range(n))
    tail = "".join(f" else {i}" for i in reversed(range(n)))
    return _ml(f"let f n = {head}n{tail}\nprint(to_string(f({n + 1})))\n")


def run_nested_fun(n: int) -> dict[str, str]:
    """A function of ``n`` curried parameters, applied (closures nested ``n`` deep)."""
    calls = "".join(f"({i})" for i in range(n))
    return _ml("let f = " + "".join(f"fun a{i} -> " for i in range(n)) + f"a{n - 1}\n"
               f"print(to_string(f{calls}))\n")


def run_nested_match(n: int) -> dict[str, str]:
    head = "".join(f"match n - {i} with | 0 -> {i} | _ -> (" for i in range(n))
    return _ml(f"let f n = {head}n{')' * n}\nprint(to_string(f({n + 3})))\n")


def run_deep_pattern(n: int) -> dict[str, str]:
    value = "`A(" * n + "5" + ")" * n
    return _ml("let f v = match v with | " + "`A(" * n + "y" + ")" * n + " -> y | _ -> 2\n"
               f"print(to_string(f({value})))\n")


def run_else_if_chain(n: int) -> dict[str, str]:
    links = "".join(f"if x == {i} then {i} else " for i in range(n))
    return _ml(f"let f x = {links}0\nprint(to_string(f({n - 1})))\n")


def run_impure_else_if_chain(n: int) -> dict[str, str]:
    links = "".join(f"if g(x) == {i} then {i} else " for i in range(n))
    return _ml(f"let g x = x\nlet f x = {links}0\nprint(to_string(f({n - 1})))\n")


def run_match_arms(n: int) -> dict[str, str]:
    arms = "".join(f"  | {i} -> {i}\n" for i in range(n))
    return _ml(f"let f x = match x with\n{arms}  | _ -> 0\nprint(to_string(f({n - 1})))\n")


def string_literal(n: int) -> dict[str, str]:
    return _ml('let s = "' + "x" * n + '"\n')


def comment(n: int) -> dict[str, str]:
    return _ml("(* " + "x" * n + " *)\nlet s = 1\n")


def close_tags_one_line(n: int) -> dict[str, str]:
    return _md("</user>" * n + "\n")


def chatmd_messages(n: int) -> dict[str, str]:
    return _md("".join(f"<user>message {i}</user>\n<assistant>answer {i}</assistant>\n"
                       for i in range(n)))


def chatmd_nested_html(n: int) -> dict[str, str]:
    return _md('<user><doc src="d.html" local markdown/></user>\n',
               **{"d.html": "<div><p>" * n + "x" + "</p></div>" * n})


def chatmd_nested_elements(n: int) -> dict[str, str]:
    """Elements nested far past the parser's limit: one diagnostic."""
    return _md("<user>" + "<agent>" * n + "x" + "</agent>" * n + "</user>\n")


def chatmd_nested_at_limit(n: int) -> dict[str, str]:
    """``n`` prompts side by side, each nested exactly as deep as the parser allows."""
    from chatmd.parser import MAX_NESTING

    inner = MAX_NESTING - 1
    one = "<user>" + '<msg role="user">a<agent>b' * (inner // 2) + "</agent></msg>" * (
        inner // 2) + "</user>\n"
    return _md(one * n)


def chatmd_dense(n: int) -> dict[str, str]:
    """The element-dense transcript of ``benchmarks/chatmd_parse.py`` (``n`` rounds)."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    from chatmd_parse import generate_dense

    return _md(generate_dense(n)[0])


def chatmd_text_literal(n: int) -> dict[str, str]:
    return _md("<user>" + "x" * n + "</user>\n")


CHECK = ("chatml", "check")
RUN = ("chatml", "run", "--no-cache")
DIS = ("chatml", "dis", "--no-cache")  # every run builds: best of N must not be a cache hit
SHAPES = [
    Shape("nested modules", 10_000, CHECK, "p.chatml", nested_modules),
    Shape("nested lists", 10_000, CHECK, "p.chatml", nested_lists),
    Shape("distinct tags in an array", 40_000, CHECK, "p.chatml", distinct_tags),
    Shape("distinct tags, a statement (dis)", 20_000, DIS, "p.chatml",
          tags_statement),
    Shape("match arms (ints)", 60_000, CHECK, "p.chatml", match_arms),
    Shape("match arms (tags)", 40_000, CHECK, "p.chatml", tag_match_arms),
    Shape("match arms (strings)", 60_000, CHECK, "p.chatml", string_matches),
    Shape("nested records", 5_000, CHECK, "p.chatml", nested_records),
    Shape("large record", 60_000, CHECK, "p.chatml", large_record),
    Shape("`;` sequence", 40_000, CHECK, "p.chatml", sequence),
    Shape("`else` swallowing a `;` sequence", 10_000, CHECK, "p.chatml", swallowing_sequence),
    Shape("let rec ... and", 10_000, CHECK, "p.chatml", mutual_recursion),
    Shape("else if chain", 20_000, CHECK, "p.chatml", else_if_chain),
    Shape("deep constant pattern (dis)", 1_000, DIS, "p.chatml", deep_constant),
    Shape("nested while (dis)", 5_000, DIS, "p.chatml", nested_while),
    Shape("nested if (run)", 2_000, RUN, "p.chatml", run_nested_if),
    Shape("nested fun (run)", 2_000, RUN, "p.chatml", run_nested_fun),
    Shape("nested match (run)", 2_000, RUN, "p.chatml", run_nested_match),
    Shape("deep constant pattern (run)", 1_000, RUN, "p.chatml", run_deep_pattern),
    Shape("else if chain (run)", 5_000, RUN, "p.chatml", run_else_if_chain),
    Shape("impure else if chain (run)", 5_000, RUN, "p.chatml", run_impure_else_if_chain),
    Shape("match arms (run)", 5_000, RUN, "p.chatml", run_match_arms),
    Shape("string literal", 20_000_000, CHECK, "p.chatml", string_literal, literal=True),
    Shape("comment", 20_000_000, CHECK, "p.chatml", comment, literal=True),
    Shape("</user> x n on one line", 50_000, ("chatmdc", "check"), "p.chatmd",
          close_tags_one_line),
    Shape("chatmd messages", 20_000, ("chatmdc", "check"), "p.chatmd", chatmd_messages),
    Shape("nested HTML doc (request)", 10_000, ("chatmdc", "compile", "--emit", "request"),
          "p.chatmd", chatmd_nested_html),
    Shape("ChatMD text literal", 10_000_000, ("chatmdc", "check"), "p.chatmd",
          chatmd_text_literal, literal=True),
    Shape("ChatMD elements nested past the limit", 100_000, ("chatmdc", "check"), "p.chatmd",
          chatmd_nested_elements),
    Shape("ChatMD prompts nested to the limit (IR)", 20, ("chatmdc", "compile", "--emit", "ir"),
          "p.chatmd", chatmd_nested_at_limit),
    Shape("ChatMD dense transcript", 5_000, ("chatmdc", "check"), "p.chatmd", chatmd_dense),
]


#: Launches each run and reports its CPU time and peak memory (GNU time's format).
TIME = "/usr/bin/time"


def _run_once(argv: list[str], cwd: Path) -> tuple[float, int]:
    """CPU seconds (user + system) and peak RSS bytes of one run of ``argv``.

    CPU time of the child, not wall time: on a shared machine the wall time of a
    run depends on what else runs; its CPU time much less. The command runs
    under GNU ``time`` (a small process), because a child forked straight from
    this benchmark would report this process's memory as its own peak.
    """
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report:
        subprocess.run([TIME, "-o", report.name, "-f", "%U %S %M", *argv], cwd=cwd,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        user, system, kilobytes = report.read().split()[-3:]
    return float(user) + float(system), int(kilobytes) * 1024


def measure(shape: Shape, n: int, repeat: int) -> tuple[float, int, int]:
    """Best time, best peak memory and the input size (bytes) for ``shape`` at ``n``."""
    with tempfile.TemporaryDirectory(prefix="scaling-") as folder:
        root = Path(folder)
        size = 0
        for name, text in shape.make(n).items():
            (root / name).write_text(text, encoding="utf-8")
            size += len(text.encode("utf-8"))
        argv = [str(BIN / shape.command[0]), *shape.command[1:], shape.main]
        runs = [_run_once(argv, root) for _ in range(repeat)]
    return min(t for t, _ in runs), min(m for _, m in runs), size


def exponent(small: float, large: float, base: float) -> float:
    """The fitted exponent between sizes n and 4n, ``base`` (start-up) taken off both."""
    small, large = max(small - base, 1e-9), max(large - base, 1e-9)
    return math.log(large / small) / math.log(4)


def reference(command: tuple[str, ...], main: str, repeat: int) -> tuple[float, int]:
    """Start-up time and memory of ``command`` on a trivial input."""
    trivial = Shape("reference", 1, command, main,
                    (lambda n: _ml("let x = 1\n")) if main.endswith(".chatml")
                    else (lambda n: _md("<user>hi</user>\n")))
    seconds, memory, _ = measure(trivial, 1, repeat)
    return seconds, memory


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every n by this")
    parser.add_argument("--repeat", type=int, default=3, help="runs per size (best is kept)")
    parser.add_argument("--only", nargs="*", default=None, help="shape names containing these")
    args = parser.parse_args()
    shapes = [s for s in SHAPES
              if not args.only or any(word in s.name for word in args.only)]
    references: dict[tuple[tuple[str, ...], str], tuple[float, int]] = {}
    print(f"{'shape':<30} {'n':>9} {'cpu(n)':>7} {'cpu(4n)':>7} {'time exp':>8} "
          f"{'MB(n)':>7} {'MB(4n)':>7} {'mem exp':>7}  note")
    failed = False
    for shape in shapes:
        key = (shape.command, shape.main)
        if key not in references:  # more runs: every exponent of the command depends on it
            references[key] = reference(shape.command, shape.main, 3 * args.repeat)
        t0, m0 = references[key]
        n = max(1, int(shape.n * args.scale))
        t1, m1, size1 = measure(shape, n, args.repeat)
        t4, m4, size4 = measure(shape, 4 * n, args.repeat)
        time_exp = exponent(t1, t4, t0)
        memory_exp = exponent(m1, m4, m0)
        note = []
        if shape.literal:  # at n (10 MB) and at 4n
            per_byte = max((m1 - m0) / size1, (m4 - m0) / size4)
            note.append(f"{(m1 - m0) / size1:.1f}/{(m4 - m0) / size4:.1f} B per input byte")
            failed |= per_byte > TARGET_BYTES_PER_BYTE
        ok = time_exp <= TARGET_EXPONENT and memory_exp <= TARGET_EXPONENT
        failed |= not ok
        note.append("ok" if ok else "ABOVE TARGET")
        print(f"{shape.name:<30} {n:>9} {t1:>7.2f} {t4:>7.2f} {time_exp:>8.2f} "
              f"{m1 / 2**20:>7.1f} {m4 / 2**20:>7.1f} {memory_exp:>7.2f}  {', '.join(note)}",
              flush=True)
    print("reference (trivial input, same run): " + ", ".join(
        f"{' '.join(c)}: {t:.2f} s {m / 2**20:.1f} MB" for (c, _), (t, m) in references.items()))
    print(f"target: every exponent <= {TARGET_EXPONENT}; literals <= "
          f"{TARGET_BYTES_PER_BYTE} bytes of peak memory per input byte")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
