"""Generates realistic, *well-typed* ChatML programs (typechecker speed and property tests).

Like :mod:`tests.chatml.program_gen`, but every template typechecks against the
core surface, alone and in any combination (names are made unique per
template instance), so a generated program has no type errors. The
templates cover what real scripts do: type declarations, modules and
``open``, recursive functions, matches over variants and records,
copy-updates, arrays, loops, references, ``let*`` and the builtin modules.
"""

from __future__ import annotations

from tests.chatml.program_gen import program_from_templates

_TEMPLATES = [
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
    {{ state with running = false; errors = state.errors + String.length(msg) }}
  | _ -> state
let {name}_s = {name}({{ running = false; ticks = 0; errors = 0 }}, `Tick({k}))
""",
    """\
let rec {name} n acc =
  if n <= 0 then acc
  else {name}(n - 1, acc * 2 + n / {k})
let {name}_v = {name}({k}, 1)
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
let {name}_sum = {name}([1, 2, 3, {k}])
""",
    """\
module {mod} = struct
  let scale = {k}
  let apply f x = f(x) * scale
  let pair a b = {{ first = a; second = b; label = "{name}" }}
  let swap p = {{ p with first = p.second; second = p.first }}
end
let {name}_p = {mod}.swap({mod}.pair(1, 2))
let {name}_a = {mod}.apply(fun x -> x + 1, {name}_p.first)
""",
    """\
type {name}_t =
  {{ id : string
  ; count : int
  ; status : [ `Idle | `Busy(int, string) | `Done ]
  ; tags : string array
  }}
let {name}_make : string -> {name}_t =
  fun id -> {{ id = id; count = 0; status = `Idle; tags = [] }}
let {name}_describe : {name}_t -> string =
  fun t ->
    match t.status with
    | `Idle -> t.id ++ " idle"
    | `Busy(n, who) -> t.id ++ " busy " ++ to_string(n) ++ " " ++ who
    | `Done -> t.id ++ " done"
""",
    """\
let {name} () =
  let* x = Task.pure({k}) in
  let+ y = Task.pure(x + 1) in
  to_string(y) ++ "!"
let {name}_t = {name}()
""",
    """\
let {name} r =
  match r with
  | {{ kind = "a"; size = s; _ }} -> s +. 1.0
  | {{ kind = "b"; size = s; _ }} -> s -. 1.0
  | _ -> 0.0
let {name}_f = {name}({{ kind = "a"; size = 2.5; extra = true }})
""",
    """\
let {name}_table = [[1, 2, 3], [4, 5, {k}], [7, 8, 9]]
let {name}_cell = {name}_table[1][2] + {name}_table[2][1]
let {name}_text = to_string({name}_cell) ++ " cells"
""",
    """\
let {name} cfg ms =
  let base = if cfg.enabled == true then cfg else fail("feature disabled") in
  {{ base with timeout_ms = ms; retries = base.retries + {k}; name = "{name}" }}
let {name}_c = {name}({{ enabled = true; retries = 0 }}, 250)
""",
    """\
let rec {name}_even n = if n == 0 then true else {name}_odd(n - 1)
and {name}_odd n = if n == 0 then false else {name}_even(n - 1)
let {name}_b = {name}_even({k})
""",
    """\
let rec {name}_eval e =
  match e with
  | `Int(n) -> n
  | `Add(a, b) -> {name}_eval(a) + {name}_eval(b)
  | `Mul(a, b) -> {name}_eval(a) * {name}_eval(b)
let {name}_r = {name}_eval(`Add(`Int({k}), `Mul(`Int(2), `Int(3))))
""",
    """\
let {name} words =
  let counts = Hashtbl.create() in
  Array.iter(words, fun w ->
    let n = Option.get_or(Hashtbl.get(counts, w), 0) in
    Hashtbl.set(counts, w, n + 1));
  Array.map(words, fun w -> Option.get_or(Hashtbl.get(counts, w), 0))
let {name}_c = {name}(String.split("a b a c {k}", " "))
""",
    """\
let {name} text =
  match Json.parse_opt(text) with
  | `None -> "invalid"
  | `Some(j) ->
    match Json.get_field(j, "name") with
    | `Some(`String(s)) -> s
    | _ -> Json.stringify(j)
let {name}_n = {name}("{{}}")
""",
]


def typed_program(lines: int, seed: int = 0) -> str:
    """A well-typed program of at least ``lines`` lines, reproducible from ``seed``."""
    return program_from_templates(_TEMPLATES, lines, seed)


def templates() -> list[str]:
    """Each template instantiated once (for tests that check them one by one)."""
    return [t.format(name="f0", mod="M0", k=7) for t in _TEMPLATES]
