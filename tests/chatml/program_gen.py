"""Generates realistic, syntactically valid ChatML programs (for speed and round-trip tests).

The programs use every construct a real script does -- type declarations,
modules, recursive functions, matches over variants and records, copy-updates,
arrays, loops, references, ``let*`` -- laid out as a person would write them.
They are meant to parse, not necessarily to typecheck. Run
``python -m tests.chatml.program_gen [LINES]`` to measure lex+parse throughput.
"""

from __future__ import annotations

import random

_TEMPLATES = [
    """\
(* {name}: breadth-first distances over an adjacency matrix *)
let {name} g start =
  let n = length(g) in

  (* distances start at -1 (unvisited) *)
  let dist = [-1, -1, -1, -1, -1, -1] in
  dist[start] <- 0;

  let q = [0, 0, 0, 0, 0, 0] in
  let head = ref(0) in
  let tail = ref(1) in
  q[0] <- start;

  while !head < !tail do
    let u = q[!head] in
    head := !head + 1;
    let v = ref(0) in
    while !v < n do
      if g[u][!v] == 1 then
        dist[!v] <- dist[u] + 1
      else ();
      v := !v + 1
    done
  done;

  dist
""",
    """\
(* {name}: a small configuration record *)
let {name} =
  {{ enabled = true
  ; timeout_ms = {k}00
  ; retries = {k}
  ; label = "{name}"
  }}

print({name}.label)
print(to_string({name}.retries))
""",
    """\
module {mod} = struct
  (* counters keyed by position *)
  let counts = [0, 0, 0, 0]

  let bump i =
    counts[i] <- counts[i] + 1

  let total () =
    counts[0] + counts[1] + counts[2] + counts[3]
end

{mod}.bump(1)
print({mod}.total())
""",
    """\
(* {name}: classify an event and update the state *)
let {name} state event =
  match event with
  | `Start -> {{ state with running = true; ticks = 0 }}
  | `Tick(n) ->
    let ticks = state.ticks + n in
    if ticks > {k} then {{ state with running = false; ticks = ticks }}
    else {{ state with ticks = ticks }}
  | `Fail(msg) ->
    print("failed: " ++ msg);
    {{ state with running = false; errors = state.errors + 1 }}
  | _ -> state
""",
    """\
let rec {name} n acc =
  if n <= 0 then acc
  else {name}(n - 1, acc * 2 + n / {k})
""",
    """\
let {name} xs =
  let total = ref(0) in
  let i = ref(0) in
  while !i < length(xs) do
    total := !total + xs[!i] * {k};
    i := !i + 1
  done;
  !total
""",
    """\
module {mod} = struct
  let scale = {k}
  let apply f x = f(x) * scale
  let pair a b = {{ first = a; second = b; label = "{name}" }}
  let swap p = {{ p with first = p.second; second = p.first }}
end
""",
    """\
type {name}_t =
  {{ id : string
  ; count : int
  ; status : [ `Idle | `Busy(int, string) | `Done ]
  ; tags : string array
  }}
""",
    """\
let {name} (* helper with a nested (* comment *) *) () =
  let* x = Task.pure({k}) in
  let+ y = Task.pure(x + 1) in
  y *. 2.5
""",
    """\
let {name} r =
  match r with
  | {{ kind = "a"; size = s; _ }} -> s +. 1.0
  | {{ kind = "b"; size = s; _ }} -> s -. 1.0
  | _ -> 0.0
""",
    """\
let {name}_table = [[1, 2, 3], [4, 5, {k}], [7, 8, 9]]
{name}_table[1][2] <- {name}_table[0][0] + {name}_table[2][1]
print(to_string({name}_table[1][2]) ++ " cells")
""",
    """\
let {name} cfg ms =
  let base = if cfg.enabled == true then cfg else fail("feature disabled") in
  {{ base with timeout_ms = ms; retries = base.retries + {k}; name = "{name}" }}
""",
    """\
let rec {name}_even n = if n == 0 then true else {name}_odd(n - 1)
and {name}_odd n = if n == 0 then false else {name}_even(n - 1)
print({name}_even({k}))
""",
]


def realistic_program(lines: int, seed: int = 0) -> str:
    """A program of at least ``lines`` lines, reproducible from ``seed``."""
    return program_from_templates(_TEMPLATES, lines, seed)


def program_from_templates(templates: list[str], lines: int, seed: int) -> str:
    """Templates drawn at random (reproducibly from ``seed``) until ``lines`` lines are reached;
    each is filled with a fresh ``name``/``mod`` and a small constant ``k``."""
    rng = random.Random(seed)
    parts: list[str] = []
    count = 0
    index = 0
    while count < lines:
        template = rng.choice(templates)
        text = template.format(name=f"f{index}", mod=f"M{index}", k=rng.randint(1, 99))
        parts.append(text)
        count += text.count("\n") + 1
        index += 1
    return "\n".join(parts)


def main() -> None:
    """``python -m tests.chatml.program_gen [LINES]``: lex+parse throughput on a generated program."""
    import sys
    import time

    from chatcommon.sources import SourceFile
    from chatml.syntax.lexer import lex
    from chatml.syntax.parser import parse_program

    text = realistic_program(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000, seed=1)
    lines = text.count("\n") + 1
    stream, _ = lex(SourceFile("<generated>", text))
    parse_program("let warm_up = 1")
    timings = []
    for _ in range(7):
        start = time.perf_counter()
        parse_program(text)
        timings.append(time.perf_counter() - start)
    best = min(timings)
    print(f"{lines} lines, {(len(stream) - 1) / lines:.1f} tokens/line: "
          f"{lines / best:,.0f} lines/s (lex+parse, best of 7: {best * 1e3:.0f} ms)")


if __name__ == "__main__":
    main()
