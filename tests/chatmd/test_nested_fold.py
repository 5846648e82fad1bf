"""The bottom-up fold over nested items (chatmd.nested_fold): order of work, values, depth."""

from __future__ import annotations

import sys

from chatmd.nested_fold import Nested, fold_nested

# A tree is a leaf string or a (name, children) pair.
Tree = str | tuple[str, list["Tree"]]


def _fold(trees: list[Tree], log: list[str]) -> list[str]:
    def visit(tree: Tree) -> str | Nested[Tree, str]:
        if isinstance(tree, str):
            log.append(f"leaf {tree}")
            return tree
        name, children = tree
        log.append(f"open {name}")

        def finish(values: list[str]) -> str:
            log.append(f"close {name}")
            return f"{name}({','.join(values)})"
        return Nested(children, finish)

    return fold_nested(trees, visit)


def test_values_keep_their_order_and_nesting() -> None:
    log: list[str] = []
    trees: list[Tree] = ["a", ("f", ["b", ("g", []), "c"]), "d"]
    assert _fold(trees, log) == ["a", "f(b,g(),c)", "d"]


def test_items_are_visited_before_their_children_and_finished_after_them() -> None:
    log: list[str] = []
    _fold([("f", ["b", ("g", ["c"])]), "d"], log)
    assert log == ["open f", "leaf b", "open g", "leaf c", "close g", "close f", "leaf d"]


def test_no_items_no_values() -> None:
    assert _fold([], []) == []


def test_nesting_far_past_the_recursion_limit() -> None:
    depth = sys.getrecursionlimit() * 5
    tree: Tree = "x"
    for _ in range(depth):
        tree = ("n", [tree])
    log: list[str] = []
    [value] = _fold([tree], log)
    assert value == "n(" * depth + "x" + ")" * depth
    assert len(log) == 2 * depth + 1
