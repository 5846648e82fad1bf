"""ChatML programs nested ``depth`` deep, or flat and ``count`` long, with known output.

Shared by the deep-nesting tests (``tests/chatml/test_deep_programs.py``: through
``chatml run``, ``compile`` + run of the bytecode, ``dis``) and the differential test
(the translated VM, or its reference-interpreter fallback, against the reference).
Every program prints what its innermost part computed, so running it is checked, not
only loading it.
"""

from __future__ import annotations

from collections.abc import Callable


def nested_if(depth: int) -> str:
    """``if n > 0 then if n > 1 then ... n else 1 ... else 0``: blocks nested ``depth`` deep."""
    head = "".join(f"if n > {i} then " for i in range(depth))
    tail = "".join(f" else {i}" for i in reversed(range(depth)))
    return (f"let f n = {head}n * 2{tail}\n"
            f"print(to_string(f({depth + 5})))\nprint(to_string(f(3)))\n")


def nested_let(depth: int) -> str:
    head = "".join(f"let a{i} = {i} + 1 in " for i in range(depth))
    return f"let x = {head}a0 + a{depth - 1}\nprint(to_string(x))\n"


def nested_fun(depth: int) -> str:
    """A function of ``depth`` curried parameters (closures nested ``depth`` deep)."""
    head = "".join(f"fun a{i} -> " for i in range(depth))
    calls = "".join(f"({i})" for i in range(depth))
    return f"let f = {head}a1 + a{depth - 1}\nprint(to_string(f{calls}))\n"


def nested_match(depth: int) -> str:
    """Matches nested in the first arm of each other."""
    head = "".join(f"match n - {i} with | 0 -> {i} | _ -> (" for i in range(depth))
    return (f"let f n = {head}n{')' * depth}\n"
            f"print(to_string(f(7)))\nprint(to_string(f({depth + 3})))\n")


def nested_pattern(depth: int) -> str:
    """A constant pattern ``depth`` deep, matched and not matched."""
    value = "`A(" * depth + "5" + ")" * depth
    pattern = "`A(" * depth + "y" + ")" * depth
    near = "`A(" * (depth - 1) + "`B" + ")" * (depth - 1)
    return (f"let f v = match v with | {pattern} -> y | _ -> 2\n"
            f"print(to_string(f({value})))\nprint(to_string(f({near})))\n")


def nested_record(depth: int) -> str:
    value = "{a = " * depth + "4" + "}" * depth
    return f"let r = {value}\nprint(to_string(r{'.a' * depth} + 1))\n"


def nested_list(depth: int) -> str:
    value = "[" * depth + "6" + "]" * depth
    return f"let l = {value}\nprint(to_string(l{'[0]' * depth} + 1))\n"


NESTED: dict[str, Callable[[int], str]] = {
    "if": nested_if, "let": nested_let, "fun": nested_fun, "match": nested_match,
    "pattern": nested_pattern, "record": nested_record, "list": nested_list,
}


def nested_output(shape: str, depth: int) -> str:
    """What the program ``NESTED[shape](depth)`` prints."""
    return {
        "if": f"{(depth + 5) * 2}\n3\n",
        "let": f"{1 + depth}\n",
        "fun": f"{1 + depth - 1}\n",
        "match": f"7\n{depth + 3}\n",  # (depth > 7)
        "pattern": "5\n2\n",
        "record": "5\n",
        "list": "7\n",
    }[shape]


def else_if_chain(count: int, impure: bool = False) -> str:
    """``if x == 0 then 0 else if x == 1 then 2 else ... else -1``; with ``impure`` each
    condition calls a function (so its test emits lines before the ``if``)."""
    test = "g(x)" if impure else "x"
    links = "".join(f"if {test} == {i} then {i * 2} else " for i in range(count))
    return (f"let g x = x\nlet f x = {links}-1\n"
            f"print(to_string(f({count - 1})))\nprint(to_string(f({count + 9})))\n")


def else_if_output(count: int) -> str:
    return f"{(count - 1) * 2}\n-1\n"


def match_arms(count: int) -> str:
    arms = "".join(f"  | {i} -> {i * 3}\n" for i in range(count))
    return f"let f x = match x with\n{arms}  | _ -> 0\nprint(to_string(f({count - 1})))\n"


def match_arms_output(count: int) -> str:
    return f"{(count - 1) * 3}\n"
