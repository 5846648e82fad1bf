"""Where every ChatML name is bound: binders, uses, scopes and module members of one script.

:func:`index_program` walks a parsed :class:`chatml.ast.Program` once with
lexical scopes (the rules of :mod:`chatml.resolve`: ``let``/``let rec``,
lambda parameters, ``match`` patterns, modules and ``open``) and records:

* every binder (its name span, as the typechecker keys ``binder_types``);
* every use of a name -- a :class:`Var`, or the ``x`` of ``M.x`` when ``M``
  names a module -- with the binder it refers to, or the qualified name of the
  surface builtin (``print``, ``String.length``);
* the offsets where each binder is visible (for completion);
* the members of every module the script defines.

Offsets are local to the script's :class:`~chatcommon.sources.SourceFile`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import NamedTuple

from chatcommon.sources import Span
from chatml import ast

__all__ = ["Binder", "ScriptIndex", "Use", "index_program"]


class Binder(NamedTuple):
    """A name's definition: ``qualified`` is ``M.x`` for a member of module ``M``."""

    name: str
    span: Span
    kind: str  # "let", "rec", "param", "pattern", "module"
    qualified: str


class Use(NamedTuple):
    """A name used at ``span``: bound by ``binder``, or the builtin ``builtin`` (or neither)."""

    span: Span
    name: str
    binder: Binder | None
    builtin: str | None


Target = Binder | str  # a binder of the script, or the qualified name of a builtin


class _Scope:
    __slots__ = ("names", "parent")

    def __init__(self, parent: _Scope | None) -> None:
        self.names: dict[str, Target] = {}
        self.parent = parent

    def lookup(self, name: str) -> Target | None:
        scope: _Scope | None = self
        while scope is not None:
            found = scope.names.get(name)
            if found is not None:
                return found
            scope = scope.parent
        return None


class ScriptIndex:
    """The names of one script (see the module docstring)."""

    def __init__(self, builtin_modules: dict[str, tuple[str, ...]],
                 builtin_globals: Iterable[str]) -> None:
        self.binders: list[Binder] = []
        self.uses: list[Use] = []
        self.visible: list[tuple[int, int, Binder]] = []
        self.modules: dict[str, dict[str, Binder]] = {}
        self.builtin_modules = builtin_modules
        self.builtin_globals = tuple(builtin_globals)

    def at(self, offset: int) -> Use | Binder | None:
        """The use or binder whose span holds ``offset`` (the innermost)."""
        best: Use | Binder | None = None
        best_width = -1
        for item in self.uses:
            span = item.span
            if span.start <= offset <= span.end and (best is None or span.end - span.start
                                                     < best_width):
                best, best_width = item, span.end - span.start
        for binder in self.binders:
            span = binder.span
            if span.start <= offset <= span.end and (best is None or span.end - span.start
                                                     < best_width):
                best, best_width = binder, span.end - span.start
        return best

    def in_scope(self, offset: int) -> dict[str, Binder]:
        """The script's names visible at ``offset`` (inner bindings shadow outer ones)."""
        found: dict[str, tuple[int, Binder]] = {}
        for start, end, binder in self.visible:
            if start <= offset <= end:
                previous = found.get(binder.name)
                if previous is None or start >= previous[0]:
                    found[binder.name] = (start, binder)
        return {name: binder for name, (_, binder) in found.items()}

    def members(self, module: str) -> list[str]:
        """The exports of a module the script defines, else of a builtin module."""
        if module in self.modules:
            return list(self.modules[module])
        return list(self.builtin_modules.get(module, ()))


def _label_span(node: ast.FieldGet) -> Span | None:
    """The span of ``l`` in ``M.l`` (a method call's span also covers its arguments)."""
    source = node.span.source
    text = source.text
    position = node.record.span.end
    limit = min(node.span.end, len(text))
    while position < limit and text[position] in " \t\r\n.":
        position += 1
    if not text.startswith(node.label, position):
        return None
    return Span(source, position, position + len(node.label))


class _Indexer:
    def __init__(self, index: ScriptIndex) -> None:
        self.index = index

    def bind(self, scope: _Scope, name: str, span: Span | None, kind: str, visible: tuple[int, int],
             prefix: str = "") -> Binder | None:
        if span is None or name.startswith("__chatml"):
            return None
        binder = Binder(name, span, kind, prefix + name)
        self.index.binders.append(binder)
        self.index.visible.append((visible[0], visible[1], binder))
        scope.names[name] = binder
        return binder

    def statements(self, statements: Iterable[ast.Stmt], scope: _Scope, end: int,
                   prefix: str = "") -> dict[str, Binder]:
        defined: dict[str, Binder] = {}
        for stmt in statements:
            if type(stmt) is ast.LetStmt:
                self.expr(stmt.rhs, scope)
                binder = self.bind(scope, stmt.name, stmt.name_span, "let",
                                   (stmt.span.end, end), prefix)
                if binder is not None:
                    defined[binder.name] = binder
            elif type(stmt) is ast.LetRecStmt:
                for binding in stmt.bindings:
                    binder = self.bind(scope, binding.name, binding.name_span, "rec",
                                       (stmt.span.start, end), prefix)
                    if binder is not None:
                        defined[binder.name] = binder
                for binding in stmt.bindings:
                    self.expr(binding.rhs, scope)
            elif type(stmt) is ast.ModuleStmt:
                inner = _Scope(scope)
                members = self.statements(stmt.body, inner, stmt.span.end,
                                          f"{prefix}{stmt.name}.")
                self.index.modules[stmt.name] = members
                binder = self.bind(scope, stmt.name, stmt.name_span, "module",
                                   (stmt.span.end, end), prefix)
                if binder is not None:
                    defined[binder.name] = binder
            elif type(stmt) is ast.OpenStmt:
                self.open(stmt, scope, end)
            elif type(stmt) is ast.ExprStmt:
                self.expr(stmt.expr, scope)
        return defined

    def open(self, stmt: ast.OpenStmt, scope: _Scope, end: int) -> None:
        name = stmt.name
        if stmt.name_span is not None:
            target = scope.lookup(name)
            self.index.uses.append(Use(stmt.name_span, name,
                                       target if isinstance(target, Binder) else None,
                                       name if target is None else None))
        members = self.index.modules.get(name)
        if members is not None:
            for member, binder in members.items():
                scope.names[member] = binder
                self.index.visible.append((stmt.span.end, end, binder))
            return
        for member in self.index.builtin_modules.get(name, ()):
            scope.names[member] = f"{name}.{member}"

    def use(self, span: Span, name: str, scope: _Scope) -> None:
        target = scope.lookup(name)
        if isinstance(target, Binder):
            self.index.uses.append(Use(span, name, target, None))
        elif target is not None:
            self.index.uses.append(Use(span, name, None, target))
        elif name in self.index.builtin_modules or name in self.index.builtin_globals:
            self.index.uses.append(Use(span, name, None, name))
        else:
            self.index.uses.append(Use(span, name, None, None))

    def field(self, node: ast.FieldGet, scope: _Scope) -> None:
        record = node.record
        self.expr(record, scope)
        if type(record) is not ast.Var or not record.name[:1].isupper():
            return
        label_span = _label_span(node)
        if label_span is None:
            return
        module = record.name
        target = scope.lookup(module)
        if isinstance(target, Binder) or module in self.index.modules:
            member = self.index.modules.get(module, {}).get(node.label)
            self.index.uses.append(Use(label_span, node.label, member, None))
        else:
            self.index.uses.append(Use(label_span, node.label, None, f"{module}.{node.label}"))

    def pattern(self, pattern: ast.Pattern, scope: _Scope, visible: tuple[int, int]) -> None:
        stack: list[ast.Node] = [pattern]
        while stack:
            node = stack.pop()
            if type(node) is ast.PVar:
                self.bind(scope, node.name, node.span, "pattern", visible)
            else:
                stack.extend(ast.children(node))

    def expr(self, node: ast.Node, scope: _Scope) -> None:
        if isinstance(node, ast.Var):
            self.use(node.span, node.name, scope)
        elif isinstance(node, ast.FieldGet):
            self.field(node, scope)
        elif isinstance(node, ast.Lambda):
            self.function(node, scope)
        elif isinstance(node, ast.LetIn):
            self.expr(node.rhs, scope)
            inner = _Scope(scope)
            self.bind(inner, node.name, node.name_span, "let",
                      (node.body.span.start, node.body.span.end))
            self.expr(node.body, inner)
        elif isinstance(node, ast.LetRec):
            inner = _Scope(scope)
            for binding in node.bindings:
                self.bind(inner, binding.name, binding.name_span, "rec",
                          (node.span.start, node.span.end))
            for binding in node.bindings:
                self.expr(binding.rhs, inner)
            self.expr(node.body, inner)
        elif isinstance(node, ast.Match):
            self.expr(node.scrutinee, scope)
            for arm in node.arms:
                inner = _Scope(scope)
                self.pattern(arm.pattern, inner, (arm.body.span.start, arm.body.span.end))
                self.expr(arm.body, inner)
        else:
            for child in ast.children(node):
                self.expr(child, scope)

    def function(self, node: ast.Lambda, scope: _Scope) -> None:
        inner = _Scope(scope)
        body = node.body
        spans = node.param_spans
        for index, name in enumerate(node.params):
            span = spans[index] if index < len(spans) else None
            self.bind(inner, name, span, "param", (body.span.start, body.span.end))
        self.expr(body, inner)


def index_program(program: ast.Program, builtin_modules: dict[str, tuple[str, ...]],
                  builtin_globals: Iterable[str]) -> ScriptIndex:
    """The :class:`ScriptIndex` of ``program`` against a surface's builtin names.

    A program nested too deeply for a recursive walk is indexed as far as it went.
    """
    index = ScriptIndex(builtin_modules, builtin_globals)
    with contextlib.suppress(RecursionError):
        _Indexer(index).statements(program.statements, _Scope(None), program.span.end)
    return index
