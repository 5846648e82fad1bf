"""Promises about the project itself: the README's commands, CI, and module docstrings."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.support import REPO_ROOT

PACKAGES = ("chatcommon", "chatmd", "chatml", "runtime")


def _readme_commands() -> list[str]:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    setup = readme.split("## Set up on a fresh machine", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)\n```", setup, re.S)


def test_readme_gives_the_two_setup_commands() -> None:
    commands = _readme_commands()
    assert len(commands) == 2
    run_example, run_tests = commands
    assert "chatmdc check examples/" in run_example
    assert "pytest" in run_tests
    example = run_example.split("chatmdc check ", 1)[1].split()[0]
    assert (REPO_ROOT / example).is_file()


def test_ci_runs_exactly_the_readme_test_command() -> None:
    ci_script = (REPO_ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert _readme_commands()[1] in ci_script.splitlines()


def test_ci_type_checks_the_packages_and_benchmarks_with_mypy() -> None:
    import tomllib

    ci_lines = (REPO_ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert any(line.startswith(".venv/bin/mypy ") for line in ci_lines)
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert any(dep.startswith("mypy") for dep in project["project"]["optional-dependencies"]["dev"])
    assert project["tool"]["mypy"]["files"] == [*PACKAGES, "benchmarks"]


def test_every_module_has_a_docstring() -> None:
    missing = []
    for package in PACKAGES:
        for path in (REPO_ROOT / package).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            if ast.get_docstring(tree) is None and path.stat().st_size > 0:
                missing.append(str(path.relative_to(REPO_ROOT)))
    assert not missing, f"modules without a docstring: {missing}"


# ----------------------------------------------------------------------------- import graph
#
# The graph has one node per module of the four packages and one edge per import
# statement anywhere in a module: at the top, inside functions, and under
# ``if TYPE_CHECKING:``, plus every ``importlib.import_module("...")`` /
# ``__import__("...")`` call with a literal name and every ``"package.module:name"``
# string naming a module of the project (a module reached through a string is
# imported all the same). An edge goes to the most specific module named
# (``from chatml.syntax import lexer`` -> ``chatml.syntax.lexer``).
#
# Decision on TYPE_CHECKING-only imports: they count for the layering (a type
# annotation naming the other language is still a dependency on it) but not for
# the cycle check: they never execute, and two modules naming each other's types
# in annotations is not an initialisation-order hazard. One exception: a module
# defining a module-level ``__getattr__`` exports names lazily, and lists the
# modules it imports on first use under TYPE_CHECKING (for type checkers); those
# imports do run, so they count as ordinary edges.

LAYERS = {"chatcommon": 0, "chatmd": 1, "chatml": 1, "runtime": 2}
_NAMED_MODULE = re.compile(r"^((?:chatcommon|chatmd|chatml|runtime)(?:\.\w+)*)(?::\w+)?$")


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((REPO_ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(REPO_ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    if any(isinstance(node, ast.FunctionDef) and node.name == "__getattr__"
           for node in tree.body):
        return set()  # lazy exports: the TYPE_CHECKING imports are the real ones
    guarded: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for stmt in node.body:
                guarded.update(id(inner) for inner in ast.walk(stmt))
    return guarded


def _imported_names(node: ast.AST, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            anchor = module.split(".") if is_package else module.split(".")[:-1]
            anchor = anchor[:len(anchor) - node.level + 1]
            base = ".".join([*anchor, *([base] if base else [])])
        return [f"{base}.{alias.name}" for alias in node.names]
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name in ("import_module", "__import__") and isinstance(node.args[0].value, str):
            return [node.args[0].value]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        match = _NAMED_MODULE.match(node.value)
        if match and (":" in node.value or node.value.count(".") >= 1):
            return [match.group(1)]
    return []


def _target(name: str, modules: dict[str, Path]) -> str | None:
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def import_graph() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """``(runtime_edges, all_edges)``: module -> the project modules it imports.

    ``all_edges`` adds the imports made only under ``if TYPE_CHECKING:``.
    """
    modules = _modules()
    run_edges: dict[str, set[str]] = {name: set() for name in modules}
    all_edges: dict[str, set[str]] = {name: set() for name in modules}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        guarded = _type_checking_nodes(tree)
        is_package = path.name == "__init__.py"
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and id(node) in guarded:
                continue
            for name in _imported_names(node, module, is_package):
                target = _target(name, modules)  # ``from pkg import function``: pkg
                if target is None or target == module:
                    continue
                all_edges[module].add(target)
                if id(node) not in guarded:
                    run_edges[module].add(target)
    return run_edges, all_edges


def import_cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(edges[node]):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(components)


def layering_violations(edges: dict[str, set[str]]) -> list[str]:
    """``importer -> imported`` pairs going against :data:`LAYERS`."""
    bad = []
    for module, targets in sorted(edges.items()):
        top = module.split(".")[0]
        for target in sorted(targets):
            other = target.split(".")[0]
            if other != top and LAYERS[other] >= LAYERS[top]:
                bad.append(f"{module} -> {target}")
    return bad


def test_the_import_graph_sees_every_kind_of_import() -> None:
    run_edges, all_edges = import_graph()
    assert "chatml.syntax.lexer" in run_edges["chatml.syntax.parser"]
    assert any(target.startswith("chatmd.") for target in run_edges["runtime.commands.chatmdc"])
    assert run_edges["chatcommon.records"] == set()
    only_typing = {module for module in all_edges if all_edges[module] - run_edges[module]}
    assert only_typing, "some module imports under TYPE_CHECKING; the graph must see it"


def test_no_import_goes_against_the_layering() -> None:
    _, all_edges = import_graph()
    assert layering_violations(all_edges) == []


def test_no_import_cycles() -> None:
    run_edges, _ = import_graph()
    assert import_cycles(run_edges) == []
