"""The inlined ``Hashtbl.get``/``set``/``mem`` (:mod:`chatml.vm.intrinsics`) behave as the
builtins do.

Generated programs apply random Hashtbl operations -- on tables made by
``Hashtbl.create`` (the dict form the inline code handles) and on plain
``ref([])`` cells, with reads of ``!t`` and ``t := a`` in between (which take
a table out of its dict form), at top level, in a function and in a loop --
and run through the translated VM and the reference interpreter (which calls
every builtin), under step and memory budgets small enough to run out at
any operation. Output, the diagnostic (code, message, position, stack), and
the steps and memory charged must agree. The translation of such a program
really contains the inline form, and a host's own (unmarked) ``Hashtbl.get``
is called, never inlined.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from chatml.build import build_source, runtime_values
from chatml.limits import Limits
from chatml.values import Module, Variant
from chatml.vm.loader import translation_for
from tests.chatml.differential import both

KEYS = ['"a"', '"b"', '"c"', '""']

statement = st.one_of(
    st.builds(lambda t, k, v: f"Hashtbl.set({t}, {k}, {v})",
              st.sampled_from(["t", "r"]), st.sampled_from(KEYS), st.integers(-3, 9)),
    st.builds(lambda t, k: f"print(match Hashtbl.get({t}, {k}) with | `Some(v) -> v | `None -> -1)",
              st.sampled_from(["t", "r"]), st.sampled_from(KEYS)),
    st.builds(lambda t, k: f"print(Hashtbl.mem({t}, {k}))",
              st.sampled_from(["t", "r"]), st.sampled_from(KEYS)),
    st.builds(lambda t, k: f"Hashtbl.remove({t}, {k})",
              st.sampled_from(["t", "r"]), st.sampled_from(KEYS)),
    st.just("print(length(!t))"),                        # spills the dict form
    st.just("t := Array.append(!r, [{key = \"z\"; value = 5}])"),
    st.just("r := !t"),                                  # the two cells share an array
)

PAD = """let pad n =
  let i = ref(0) in
  while !i < n do Hashtbl.set(t, "p" ++ to_string(!i), !i); i := !i + 1 done
"""


@st.composite
def hashtbl_programs(draw: st.DrawFn) -> str:
    body = draw(st.lists(statement, min_size=1, max_size=12))
    padding = draw(st.sampled_from([0, 70, 140]))  # long tables charge scan steps
    where = draw(st.sampled_from(["top", "function", "loop"]))
    lines = ["let t = Hashtbl.create()", "let r = ref([])", PAD, f"let u = pad({padding})"]
    if where == "top":
        lines.extend(f"let u = ({line})" for line in body)
    elif where == "function":
        lines.append("let run u =\n  " + ";\n  ".join(body))
        lines.append("let u = run(())")
    else:
        lines.append("let run n =\n  let i = ref(0) in\n  while !i < n do\n    "
                     + ";\n    ".join(body) + ";\n    i := !i + 1\n  done")
        lines.append("let u = run(3)")
    lines.append("print(length(!t) + length(!r))")
    return "\n".join(lines) + "\n"


@settings(max_examples=150, deadline=None)
@given(hashtbl_programs(), st.integers(5, 400), st.integers(600, 40_000))
def test_inline_hashtbl_agrees_with_the_builtins(text: str, steps: int, memory: int) -> None:
    outcomes = both(text, "hashtbl.chatml", Limits(max_steps=steps, max_memory=memory))
    assert outcomes is not None, text
    translated, referenced = outcomes
    assert translated.comparable() == referenced.comparable()


def test_programs_run_to_the_end_and_out_of_each_budget() -> None:
    """The sweep above reaches every outcome (so the agreement is not vacuous)."""
    text = ('let t = Hashtbl.create()\n' + PAD + 'let u = pad(200)\n'
            'let u = Hashtbl.set(t, "k", 1)\n'
            'print(match Hashtbl.get(t, "k") with | `Some(v) -> v | `None -> -1)\n'
            'print(Hashtbl.mem(t, "p7"))\n')
    codes = set()
    for steps, memory in ((10**6, 10**7), (40, 10**7), (10**6, 20_000)):
        outcomes = both(text, "hashtbl.chatml", Limits(max_steps=steps, max_memory=memory))
        assert outcomes is not None
        translated, referenced = outcomes
        assert translated.comparable() == referenced.comparable()
        diagnostic = translated.comparable()[1]
        codes.add(diagnostic["code"] if diagnostic else None)
    assert codes == {None, "chatml.step_limit", "chatml.memory_limit"}


def test_the_translation_inlines_marked_builtins_only() -> None:
    text = ('let t = Hashtbl.create()\nlet u = Hashtbl.set(t, "k", 1)\n'
            'print(Hashtbl.mem(t, "k"))\n'
            'print(match Hashtbl.get(t, "k") with | `Some(v) -> v | `None -> 0)\n')
    values = runtime_values("core")
    built = build_source(text, "inline.chatml", values=values)
    source = translation_for(built.module, values).source
    assert "_hp.get(" in source and " in _hp" in source and "_hp[" in source

    def host_get(table: object, key: object) -> Variant:
        return Variant("None")

    module = values["Hashtbl"]
    assert isinstance(module, Module)
    host_values = {**values, "Hashtbl": Module("Hashtbl", {**module, "get": host_get})}
    host_source = translation_for(built.module, host_values).source
    assert "_hp.get(" not in host_source and " in _hp" in host_source
