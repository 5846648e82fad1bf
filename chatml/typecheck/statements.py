"""Statements (spec 4.15) and the statement loop with error recovery.

Statements are checked in order. A statement whose checking fails reports its
diagnostic; the names it would have defined are bound to the error type
(which unifies with anything), the level and scope are restored, and checking
goes on with the next statement -- so independent errors are all reported
and none cascades. Inside a module body the same holds per body statement.
"""

from __future__ import annotations

from chatcommon.diagnostics import Diagnostic
from chatcommon.sources import Span
from chatml import ast
from chatml.typecheck import errors
from chatml.typecheck.bindings import bind_group, bind_value
from chatml.typecheck.checker import Checker, StatementError
from chatml.typecheck.environment import Entry
from chatml.typecheck.modules import (
    bind_failed,
    check_initialisation,
    check_module,
    check_open,
)
from chatml.typecheck.schemes import Scheme
from chatml.typecheck.type_exprs import declare_type


def defined_names(stmt: ast.Stmt) -> list[str]:
    """The value names a statement binds."""
    if isinstance(stmt, (ast.LetStmt, ast.ModuleStmt)):
        return [stmt.name]
    if isinstance(stmt, ast.LetRecStmt):
        return [b.name for b in stmt.bindings]
    return []


def check_statements(ck: Checker, statements: tuple[ast.Stmt, ...],
                     defined: list[str] | None = None) -> None:
    """Check ``statements`` in order; ``defined`` collects a module body's exports."""
    env = ck.env
    for stmt in statements:
        level = ck.level
        mark = len(env.trail)  # env.mark(), without the call
        try:
            if ck.init_frames:
                check_initialisation(ck, stmt)
            _check_statement(ck, stmt, top=defined is None)
        except StatementError as error:
            ck.level = level
            env.undo(mark)
            ck.report(error.diagnostic)
            bind_failed(ck, defined_names(stmt))
        except RecursionError:
            ck.level = level
            env.undo(mark)
            ck.report(_too_deep(ck, stmt))
            bind_failed(ck, defined_names(stmt))
        if defined is not None:
            for name in defined_names(stmt):
                if name not in defined:
                    defined.append(name)


#: A statement nested less deeply than this that still overflows the checker's stack
#: does so because of its *type* (issue 15: a chain of definitions each doubling the
#: type of the one before), not its syntax.
SHALLOW_STATEMENT = 200


def _too_deep(ck: Checker, stmt: ast.Stmt) -> Diagnostic:
    """``chatml.too_deep`` for a statement: its syntax nests too deeply, or its type does."""
    if syntax_depth(stmt, SHALLOW_STATEMENT) < SHALLOW_STATEMENT:
        return ck.error(stmt.span, errors.TOO_DEEP,
                        "The type inferred for this statement is nested too deeply to be checked",
                        hint="applying a function that duplicates its argument to its own "
                             "result (f(f(x))) doubles the depth of the type at each such "
                             "definition: written out, this one is thousands of levels deep")
    return ck.error(stmt.span, errors.TOO_DEEP,
                    "This statement is nested too deeply to be checked",
                    hint="split deeply nested expressions with let bindings")


def syntax_depth(node: ast.Node, cap: int) -> int:
    """How deeply ``node``'s syntax tree nests, counting up to ``cap`` (iterative)."""
    deepest = 0
    stack = [(node, 1)]
    while stack:
        current, depth = stack.pop()
        if depth > deepest:
            deepest = depth
            if deepest >= cap:
                return cap
        stack.extend((child, depth + 1) for child in ast.children(current))
    return deepest


def _check_statement(ck: Checker, stmt: ast.Stmt, top: bool) -> None:
    env = ck.env
    match stmt:
        case ast.LetStmt():  # the commonest statement: _record inlined
            entry = bind_value(ck, stmt.rhs)
            name = stmt.name
            env.bind(name, entry)
            span = stmt.name_span
            if span is not None:
                bound = entry.body if type(entry) is Scheme else entry  # entry_type, inlined
                ck.binders.append((span, bound))
            if top:
                ck.top_bindings.append((name, entry, span))
        case ast.ExprStmt():
            ck.rules[type(stmt.expr)](ck, stmt.expr)
        case ast.LetRecStmt():
            bindings = stmt.bindings
            entries = bind_group(ck, bindings)
            for binding, entry in zip(bindings, entries, strict=True):
                env.bind(binding.name, entry)
                _record(ck, binding.name, entry, binding.name_span, top)
        case ast.ModuleStmt():
            entry = check_module(ck, stmt, check_statements)
            env.bind(stmt.name, entry)
            _record(ck, stmt.name, entry, stmt.name_span, top)
        case ast.OpenStmt():
            check_open(ck, stmt)
        case ast.TypeStmt():
            if not top:  # the parser rejects this; kept as a guard for hand-built trees
                raise StatementError(ck.error(stmt.span, errors.UNKNOWN_TYPE,
                                              "type declarations are allowed only at top level"))
            declare_type(ck, stmt)


def _record(ck: Checker, name: str, entry: Entry, span: Span | None, top: bool) -> None:
    if span is not None:
        bound = entry.body if type(entry) is Scheme else entry  # entry_type, inlined
        ck.binders.append((span, bound))
    if top:
        ck.top_bindings.append((name, entry, span))
