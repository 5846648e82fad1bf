"""The project's import graph, built with ``ast`` (imports inside functions included).

:func:`import_graph` maps each module under the given packages to the project
modules it imports anywhere in its text (module level, inside functions, under
``TYPE_CHECKING``): ``import a.b``, ``from a import b`` (``a.b`` when ``b`` is a
submodule, else ``a``) and relative imports. :func:`cycles` lists the
strongly connected components with more than one module (Tarjan).

Run as a script it prints the cycles among the given module prefixes::

    .venv/bin/python -m tests.chatml.import_graph chatml.calls chatml.stdlib chatml.vm
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("common", "chatmd", "chatml", "runtime")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO_ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((REPO_ROOT / package).rglob("*.py")):
            found[_module_name(path)] = path
    return found


def _imported(node: ast.AST, module: str, is_package: bool, known: dict[str, Path]
              ) -> Iterable[str]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            anchor = module.split(".")
            anchor = anchor if is_package else anchor[:-1]
            anchor = anchor[: len(anchor) - (node.level - 1)]
            base = ".".join(anchor + ([base] if base else []))
        for alias in node.names:
            candidate = f"{base}.{alias.name}"
            yield candidate if candidate in known else base


def import_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports (anywhere in its text)."""
    known = _modules()
    graph: dict[str, set[str]] = {}
    for module, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        is_package = path.name == "__init__.py"
        targets: set[str] = set()
        for node in ast.walk(tree):
            for name in _imported(node, module, is_package, known):
                while name and name not in known:
                    name = name.rpartition(".")[0]
                if name and name != module:
                    targets.add(name)
        graph[module] = targets
    return graph


def cycles(graph: dict[str, set[str]], prefixes: tuple[str, ...] = ()) -> list[list[str]]:
    """The strongly connected components of more than one module, among modules whose
    name starts with one of ``prefixes`` (all modules when empty)."""

    def keep(name: str) -> bool:
        return not prefixes or any(name == p or name.startswith(p + ".") or name.startswith(p)
                                   for p in prefixes)

    nodes = [name for name in graph if keep(name)]
    edges = {name: sorted(t for t in graph[name] if keep(t)) for name in nodes}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work: list[tuple[str, int]] = [(root, 0)]
        while work:
            node, position = work.pop()
            if position == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            successors = edges[node]
            if position < len(successors):
                work.append((node, position + 1))
                successor = successors[position]
                if successor not in index:
                    work.append((successor, 0))
                elif successor in on_stack:
                    low[node] = min(low[node], index[successor])
                continue
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def main(argv: list[str]) -> int:
    found = cycles(import_graph(), tuple(argv))
    for component in found:
        print(f"cycle of {len(component)} modules: " + ", ".join(component))
    print(f"{len(found)} cycle(s)")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
