"""The translator's fused ``Hashtbl`` paths behave as the builtins do.

Two fast paths of :mod:`chatml.vm.translate` are tested here against the
reference interpreter (which calls every builtin), under swept step and memory
budgets small enough to run out at any operation, in plain and transactional
runs (output, diagnostic with its position, steps and memory must agree):

* a ``match Hashtbl.get(t, k) with ...`` whose result only the match reads keeps
  the found value *unwrapped* (no ``Some`` is made; the arms test ``_ABSENT``),
  with every arm shape the fusion accepts (`` `Some(v) ``, `` `Some(_) ``,
  `` `Some(3) ``, ``_``, `` `None ``) and a ``get`` whose option is used
  otherwise (not fused);
* later inline operations on the same table variable reuse the first one's
  dict-form test and length (:mod:`chatml.vm.table_facts`) -- with everything
  that may take the table out of its dict form in between: ``!t``, ``t := a``,
  calls that read the table, ``set``/``remove`` through an alias of the same
  table, a transactional run's journal, an ``integer overflow`` between a
  ``get`` and its ``set``, branches and loops.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from chatml.build import build_source, runtime_values
from chatml.limits import Limits
from chatml.vm.loader import translation_for
from tests.chatml.differential import both

KEYS = ['"a"', '"b"', '""', "k", '"c"', '"d"']
TABLES = ["t", "r"]
VALUES = st.sampled_from(["0", "2", "-7", "4611686018427387903"])  # the last overflows at c + 1


def _table() -> st.SearchStrategy[str]:
    return st.sampled_from(TABLES)


def _key() -> st.SearchStrategy[str]:
    return st.sampled_from(KEYS)


statement = st.one_of(
    st.builds(lambda t, k, v: f"Hashtbl.set({t}, {k}, {v})", _table(), _key(), VALUES),
    st.builds(lambda t, k: f"print(match Hashtbl.get({t}, {k}) with | `Some(v) -> v | `None -> -1)",
              _table(), _key()),
    st.builds(lambda t, k, t2, k2: (f"(match Hashtbl.get({t}, {k}) with | `Some(c) -> "
                                    f"Hashtbl.set({t2}, {k}, c + 1) | `None -> "
                                    f"Hashtbl.set({t2}, {k2}, 1))"),
              _table(), _key(), _table(), _key()),
    st.builds(lambda t, k: f"(match Hashtbl.get({t}, {k}) with | `Some(_) -> print(1) | _ -> print(0))",
              _table(), _key()),
    st.builds(lambda t, k: (f"(match Hashtbl.get({t}, {k}) with | `Some(2) -> print(22) "
                            f"| `Some(v) -> print(v) | `None -> ())"), _table(), _key()),
    st.builds(lambda t, k: f"(let o = Hashtbl.get({t}, {k}) in print(o == `None))",
              _table(), _key()),
    st.builds(lambda t, k: (f"(if Hashtbl.mem({t}, {k}) then Hashtbl.set({t}, {k}, 0) "
                            f"else Hashtbl.remove({t}, {k}))"), _table(), _key()),
    st.builds(lambda t, k: (f"(match Hashtbl.get({t}, {k}) with | `Some(c) -> (print(peek({t})); "
                            f"Hashtbl.set({t}, {k}, c)) | `None -> (print(length(!{t})); "
                            f"Hashtbl.set({t}, {k}, 2)))"), _table(), _key()),
    st.builds(lambda k: (f"(match Hashtbl.get(t, {k}) with | `Some(c) -> "
                         f"(match Hashtbl.get(r, {k}) with | `Some(d) -> Hashtbl.set(t, {k}, c + d) "
                         f"| `None -> Hashtbl.set(r, {k}, c)) | `None -> ())"), _key()),
    st.builds(lambda t, k: f"Hashtbl.remove({t}, {k})", _table(), _key()),
    # straight-line runs of operations (nothing in between forgets what the first learnt)
    st.builds(lambda t, k, t2, k2: (f"Hashtbl.set({t}, {k}, (match Hashtbl.get({t2}, {k2}) with "
                                    f"| `Some(c) -> c | `None -> 0))"),
              _table(), _key(), _table(), _key()),
    st.builds(lambda t, k, t2, k2: (f"(if Hashtbl.mem({t}, {k}) then () "
                                    f"else Hashtbl.set({t2}, {k2}, 5))"),
              _table(), _key(), _table(), _key()),
    st.builds(lambda ops: "; ".join(f"Hashtbl.set({t}, {k}, {v})" for t, k, v in ops),
              st.lists(st.tuples(_table(), _key(), VALUES), min_size=2, max_size=4)),
    st.just("print(peek(t))"),
    st.just("print(length(!r))"),
    st.just('t := Array.append(!r, [{key = "z"; value = 5}])'),
)

ALIASES = {"same": "t", "table": "Hashtbl.create()", "ref": "ref([])"}

PRELUDE = """let peek tbl = length(!tbl)
let fill tbl n =
  let i = ref(0) in
  while !i < n do Hashtbl.set(tbl, "p" ++ to_string(!i), !i); i := !i + 1 done
"""


@st.composite
def fused_programs(draw: st.DrawFn) -> str:
    body = draw(st.lists(statement, min_size=1, max_size=10))
    padding = draw(st.sampled_from([0, 70, 140]))  # long tables charge scan steps
    alias = ALIASES[draw(st.sampled_from(sorted(ALIASES)))]
    where = draw(st.sampled_from(["parameter", "local", "loop"]))
    lines = [PRELUDE]
    head = '  let k = "k" ++ to_string(1) in\n'
    if where == "parameter":  # the table is a parameter of the function
        lines.append("let run t r =\n" + head + "  " + ";\n  ".join(body))
        lines.append(f"let t0 = Hashtbl.create()\nlet u = fill(t0, {padding})")
        lines.append(f"let r0 = {'t0' if alias == 't' else alias}")
        lines.append("let u = run(t0, r0)")
        lines.append("print(length(!t0) + length(!r0))")
    else:  # made in the function, used straight or in a loop
        statements = ";\n  ".join(body)
        if where == "loop":
            statements = ("let i = ref(0) in\n  while !i < 3 do\n    "
                          + ";\n    ".join(body) + ";\n    i := !i + 1\n  done")
        lines.append(f"let run n =\n  let t = Hashtbl.create() in\n  let r = {alias} in\n"
                     f"  fill(t, n);\n{head}  {statements};\n  print(length(!t) + length(!r))")
        lines.append(f"let u = run({padding})")
    return "\n".join(lines) + "\n"


@settings(max_examples=200, deadline=None)
@given(fused_programs(), st.one_of(st.integers(5, 600), st.just(10**6)),
       st.one_of(st.integers(600, 40_000), st.just(10**7)), st.booleans())
def test_fused_hashtbl_paths_agree_with_the_builtins(text: str, steps: int, memory: int,
                                                      transactional: bool) -> None:
    outcomes = both(text, "fused.chatml", Limits(max_steps=steps, max_memory=memory),
                    transactional=transactional)
    assert outcomes is not None, text
    translated, referenced = outcomes
    assert translated.comparable() == referenced.comparable(), text


COUNTING = """let run n =
  let t = Hashtbl.create() in
  let i = ref(0) in
  while !i < n do
    let key = "k" ++ to_string(!i - (!i / 90) * 90) in
    (match Hashtbl.get(t, key) with
     | `Some(c) -> Hashtbl.set(t, key, c + 1)
     | `None -> Hashtbl.set(t, key, 1));
    i := !i + 1
  done;
  print(length(!t));
  print(match Hashtbl.get(t, "k7") with | `Some(c) -> c | `None -> -1)
let u = run(500)
"""


def test_the_counting_loop_is_fused_and_runs_to_the_end_and_out_of_each_budget() -> None:
    """The benchmark's shape: the translation really holds both fast paths, and the sweep
    reaches every outcome, in plain and transactional runs."""
    values = runtime_values("core")
    source = translation_for(build_source(COUNTING, "count.chatml", values=values).module,
                             values).source
    assert "_hp.get(key" not in source  # (the key is a local: v<code>_<slot>)
    assert ", _ABSENT)" in source and " is not _ABSENT:" in source  # the unwrapped get
    assert "(_hp := _hp" in source  # the sets reuse the get's test
    assert "_new(_V)" not in source  # no Some is made
    codes = set()
    for transactional in (False, True):
        for steps, memory in ((10**6, 10**7), (300, 10**7), (10**6, 20_000)):
            outcomes = both(COUNTING, "count.chatml", Limits(max_steps=steps, max_memory=memory),
                            transactional=transactional)
            assert outcomes is not None
            translated, referenced = outcomes
            assert translated.comparable() == referenced.comparable()
            diagnostic = translated.comparable()[1]
            codes.add((transactional, diagnostic["code"] if diagnostic else None))
    assert codes == {(transactional, code) for transactional in (False, True)
                     for code in (None, "chatml.step_limit", "chatml.memory_limit")}
    finished = both(COUNTING, "count.chatml", Limits(max_steps=10**6, max_memory=10**7))
    assert finished is not None and finished[0].stdout == "90\n6\n"


def test_an_overflow_between_get_and_set_fails_at_the_addition() -> None:
    text = ('let run u =\n  let t = Hashtbl.create() in\n'
            '  Hashtbl.set(t, "a", 4611686018427387903);\n'
            '  (match Hashtbl.get(t, "a") with\n'
            '   | `Some(c) -> Hashtbl.set(t, "a", c + 1)\n'
            '   | `None -> ())\n'
            'let u = run(())\n')
    outcomes = both(text, "overflow.chatml", Limits(max_steps=10**6, max_memory=10**7))
    assert outcomes is not None
    translated, referenced = outcomes
    assert translated.comparable() == referenced.comparable()
    error = translated.error
    assert error is not None and error["message"] == "integer overflow"
    assert (error["line"], error["column"]) == (5, 38)  # `c + 1`


def _function(body: str, padding: int = 70) -> str:
    """A program whose function ``run`` makes the table ``t`` (``padding`` entries)."""
    return (PRELUDE + "let run n =\n  let t = Hashtbl.create() in\n  fill(t, n);\n  "
            + body.strip().replace("\n", "\n  ")
            + ";\n  print(length(!t))\n" + f"let u = run({padding})\n")


RULES = {
    # a set grows the table: the next operation measures it again
    "set then set": 'Hashtbl.set(t, "c", (match Hashtbl.get(t, "a") with | `Some(c) -> c '
                    '| `None -> 0));\nHashtbl.set(t, "d", 1);\nHashtbl.set(t, "e", 1)',
    # ... also through another variable holding the same table
    "alias": 'Hashtbl.set(t, "c", (match Hashtbl.get(t, "a") with | `Some(c) -> c '
             '| `None -> 0));\nlet r = t in\nHashtbl.set(r, "d", (match Hashtbl.get(t, "b") '
             'with | `Some(c) -> c | `None -> 0));\nHashtbl.set(t, "e", 1)',
    # !t, a call reading the table, t := a, to_string(t): the dict form is left in between
    "deref": 'Hashtbl.set(t, "c", (match Hashtbl.get(t, "a") with | `Some(c) -> c '
             '| `None -> 0));\nHashtbl.set(t, "d", length(!t))',
    "call": 'Hashtbl.set(t, "c", (match Hashtbl.get(t, "a") with | `Some(c) -> c '
            '| `None -> 0));\nHashtbl.set(t, "d", peek(t))',
    "assign": 'let a = [{key = "z"; value = 5}] in\nHashtbl.set(t, "c", (match '
              'Hashtbl.get(t, "a") with | `Some(c) -> c | `None -> 0));\nt := a;\n'
              'Hashtbl.set(t, "d", 1)',
    "to_string": 'Hashtbl.set(t, "c", (match Hashtbl.get(t, "a") with | `Some(c) -> c '
                 '| `None -> 0));\nHashtbl.set(t, "d", String.length(to_string(t)))',
    "match arm": '(match Hashtbl.get(t, "a") with | `Some(c) -> () | `None -> '
                 '(Hashtbl.set(t, "a", length(!t)); Hashtbl.set(t, "b", 2)))',
    # a set in one branch: after the block the length is measured again
    "branch": '(match Hashtbl.get(t, "a") with | `Some(c) -> () | `None -> ());\n'
              '(if n > 3 then Hashtbl.set(t, "x", 1) else ());\nHashtbl.set(t, "y", 2)',
    # what a branch learns does not hold in the other branch (paddings 62, 70: the else)
    "sibling": '(if n > 100 then Hashtbl.set(t, "c", (match Hashtbl.get(t, "a") with '
               '| `Some(c) -> c | `None -> 0)) else Hashtbl.set(t, "d", 1));\n'
               'Hashtbl.set(t, "e", 1)',
    # a loop: what was known before it does not hold in its second iteration
    "loop": 'Hashtbl.set(t, "c", (match Hashtbl.get(t, "a") with | `Some(c) -> c '
            '| `None -> 0));\nlet i = ref(0) in\nwhile !i < 3 do\n  Hashtbl.set(t, "l" ++ '
            'to_string(!i), 1);\n  Hashtbl.set(t, "m" ++ to_string(!i), 1);\n  i := !i + 1\ndone',
}


def test_each_rule_of_the_shared_table_test() -> None:
    """One program per way a table can change between two inline operations: each really
    shares a test, and agrees with the reference with and without the undo journal,
    with budgets that run out anywhere in it."""
    values = runtime_values("core")
    for name, body in RULES.items():
        for padding in (62, 70, 127):  # (next to the 64-entry steps of the scan)
            text = _function(body, padding)
            built = build_source(text, f"{name}.chatml", values=values)
            assert "(_hp := _hp" in translation_for(built.module, values).source, name
            for transactional in (False, True):
                for steps in (10**6, *range(60, 1200, 37)):
                    for memory in (10**7, *range(400 * 8, 1200 * 8, 8 * 13)):
                        if steps != 10**6 and memory != 10**7:
                            continue
                        outcomes = both(text, f"{name}.chatml",
                                        Limits(max_steps=steps, max_memory=memory),
                                        transactional=transactional)
                        assert outcomes is not None, name
                        translated, referenced = outcomes
                        assert translated.comparable() == referenced.comparable(), (
                            name, padding, transactional, steps, memory)
