"""Generated ChatML and ChatMD inputs of a given size, shared by the robustness tests."""

from __future__ import annotations


def constant_pattern(depth: int) -> str:
    """A match on a variant pattern nested ``depth`` deep (one deep constant)."""
    pattern = "`A(" * depth + "y" + ")" * depth
    return f"let f x = match x with | {pattern} -> 1 | _ -> 2\nprint(f(`B))\n"


def mutual_recursion(count: int) -> str:
    """``let rec f0 x = x and f1 x = f0(x) and ...`` with ``count`` functions."""
    lines = ["let rec f0 x = x"] + [f"and f{i} x = f{i - 1}(x)" for i in range(1, count)]
    return "\n".join(lines) + f"\nprint(f{count - 1}(7))\n"


def match_arms(count: int) -> str:
    arms = "".join(f"  | {i} -> {i}\n" for i in range(count))
    return f"let f x = match x with\n{arms}  | _ -> 0\nprint(f({count - 1}))\n"


def tag_arms(count: int) -> str:
    arms = "".join(f"  | `T{i} -> {i}\n" for i in range(count))
    return f"let f x = match x with\n{arms}\nprint(f(`T{count - 1}))\n"


def else_if_chain(count: int) -> str:
    chain = "".join(f"if x == {i} then {i} else " for i in range(count))
    return f"let f x =\n  {chain}0\nprint(f({count - 1}))\n"


def nested_while(depth: int) -> str:
    return "let f () = " + "while false do " * depth + "()" + " done" * depth + "\n"


def nested_bold_html(depth: int) -> str:
    return "<b>" * depth + "deep" + "</b>" * depth
