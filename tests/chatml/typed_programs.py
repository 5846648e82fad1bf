"""Hypothesis strategies for random *well-typed* ChatML programs (for VM property tests).

Every program typechecks against the core surface by construction: all
generated expressions have type ``int`` and combine arithmetic (including
``/`` and values near the 63-bit bounds, so division by zero and ``integer
overflow`` happen), ``if``/``match`` over ints and variants, ``let``,
records and copy-update, arrays (out-of-bounds indexes included), refs,
``while`` loops, lambdas, top-level functions and tail-recursive loops.
"""

from __future__ import annotations

from hypothesis import strategies as st

_BIG = ["4611686018427387903", "(-4611686018427387903 - 1)", "2305843009213693952",
        "3037000499"]


@st.composite
def int_expr(draw: st.DrawFn, env: tuple[str, ...], funcs: tuple[str, ...], depth: int,
             fresh: list[int]) -> str:
    def sub(extra: tuple[str, ...] = ()) -> str:
        return draw(int_expr(env + extra, funcs, depth - 1, fresh))

    def name() -> str:
        fresh[0] += 1
        return f"v{fresh[0]}"

    leaves = ["literal", "big"] + (["var"] * 2 if env else [])
    forms = leaves if depth <= 0 else leaves + [
        "arith", "arith", "div", "if", "let", "match", "variant", "record", "extend",
        "array", "ref", "while", "lambda", "length"] + (["call"] * 2 if funcs else [])
    form = draw(st.sampled_from(forms))
    if form == "literal":
        value = draw(st.integers(-20, 20))
        return f"({value})" if value < 0 else str(value)
    if form == "big":
        return draw(st.sampled_from(_BIG))
    if form == "var":
        return draw(st.sampled_from(env))
    if form == "arith":
        return f"({sub()} {draw(st.sampled_from(['+', '-', '*']))} {sub()})"
    if form == "div":
        return f"({sub()} / {sub()})"
    if form == "if":
        test = draw(st.sampled_from(["<", "<=", ">", ">=", "==", "!="]))
        return f"(if {sub()} {test} {sub()} then {sub()} else {sub()})"
    if form == "let":
        v = name()
        return f"(let {v} = {sub()} in {sub((v,))})"
    if form == "match":
        v = name()
        return f"(match {sub()} with | 0 -> {sub()} | 1 -> {sub()} | {v} -> {sub((v,))})"
    if form == "variant":
        v = name()
        return (f"(match (if {sub()} < 0 then `A({sub()}) else `B) with "
                f"| `A({v}) -> {sub((v,))} | `B -> {sub()})")
    if form == "record":
        return f"({{f = {sub()}; g = {sub()}}}.{draw(st.sampled_from(['f', 'g']))})"
    if form == "extend":
        return f"({{ {{f = {sub()}; g = {sub()}}} with g = {sub()} }}.g)"
    if form == "array":
        return f"([{sub()}, {sub()}][{sub()}])"
    if form == "ref":
        v = name()
        return f"(let {v} = ref({sub()}) in ({v} := !{v} + {sub()}); !{v})"
    if form == "while":
        v = name()
        bound = draw(st.integers(0, 5))
        return f"(let {v} = ref(0) in (while !{v} < {bound} do {v} := !{v} + 1 done); !{v} + {sub()})"
    if form == "lambda":
        v = name()
        return f"((fun {v} -> {sub((v,))})({sub()}))"
    if form == "length":
        return f"String.length(to_string({sub()}))"
    return f"{draw(st.sampled_from(funcs))}({sub()})"


@st.composite
def programs(draw: st.DrawFn, max_depth: int = 3) -> str:
    """A whole well-typed program that prints a few ints."""
    fresh = [0]
    lines: list[str] = []
    funcs: list[str] = []
    for index in range(draw(st.integers(0, 3))):
        body = draw(int_expr(("x",), tuple(funcs), max_depth, fresh))
        lines.append(f"let f{index} x = {body}")
        funcs.append(f"f{index}")
    if draw(st.booleans()):
        step = draw(int_expr(("n", "acc"), tuple(funcs), max_depth - 1, fresh))
        lines.append(f"let rec loop n acc = if n <= 0 then acc else loop(n - 1, acc + {step})")
        lines.append(f"print(loop({draw(st.integers(0, 60))}, 0))")
    for _ in range(draw(st.integers(1, 3))):
        lines.append(f"print({draw(int_expr((), tuple(funcs), max_depth, fresh))})")
    return "\n".join(lines) + "\n"
