"""The resolver: which binding every ChatML name refers to, as a lexical address.

Input: a parsed (and, when the checker ran, typed) :class:`~chatml.ast.Program`
and the names of the builtin surface. Output: a :class:`Resolution`, a side
table over the syntax tree (keyed by node identity) that the compiler reads:

* every binder gets a :class:`Binding` -- a *local* slot of the function frame
  that owns it (parameters, ``let ... in``, ``let rec ... in``, match
  binders; every binder gets its own slot, slots are never reused) or a
  *global* slot (top-level and module-level definitions, modules, names
  brought in by ``open``, and the surface's builtins, which come first);
* every :class:`~chatml.ast.Var` gets an access path: ``Local(slot)``,
  ``Free(index)`` (a capture of the enclosing closure, clox-style: captures
  are threaded through every intermediate function) or ``Global(slot)``;
* every lambda gets a :class:`FunctionScope` (parameter slots, local count,
  captures and where each comes from in the enclosing frame);
* every ``module`` statement its export list and every ``open`` the globals
  it defines;
* per binding, the lambda it is bound to (when the right-hand side is a
  literal ``fun``; bindings are immutable, so such a name always denotes that
  closure) and a primitive-type hint (``int``/``float``/``string``/``bool``/
  ``unit``) from the checker's binder types when available, else from the
  right-hand side's syntax.

A name that is bound nowhere (only possible when the checker did not run)
is reported as a ``chatml.unknown_variable`` diagnostic, never a crash.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from chatcommon.diagnostics import Diagnostic, DiagnosticError
from chatcommon.sources import Span
from chatml import ast
from chatml.bytecode.code import FREE, LOCAL

PRIMITIVE_KINDS = frozenset({"int", "float", "string", "bool", "unit"})


@attrs.define(eq=False)
class FunctionScope:
    """A function frame (a lambda, or the top level)."""

    name: str
    parent: FunctionScope | None
    node: ast.Lambda | None = None
    param_slots: list[int] = attrs.Factory(list)
    n_locals: int = 0
    captures: list[tuple[int, int]] = attrs.Factory(list)
    capture_index: dict[int, int] = attrs.Factory(dict)

    def new_slot(self) -> int:
        self.n_locals += 1
        return self.n_locals - 1


@attrs.define(eq=False)
class Binding:
    """One binder."""

    name: str
    is_global: bool
    slot: int
    frame: FunctionScope | None = None
    lambda_node: ast.Lambda | None = None
    recursive: bool = False
    builtin: bool = False
    kind_hint: str | None = None
    module_exports: list[tuple[str, Binding]] | None = None
    builtin_exports: tuple[str, ...] | None = None


@attrs.frozen
class Local:
    slot: int


@attrs.frozen
class Free:
    index: int


@attrs.frozen
class Global:
    slot: int


Access = Local | Free | Global


@attrs.define(eq=False)
class Resolution:
    """Everything the compiler needs to know about names."""

    main: FunctionScope
    global_names: list[str]
    builtin_slots: list[tuple[int, str]]
    var_access: dict[int, Access] = attrs.Factory(dict)
    var_binding: dict[int, Binding] = attrs.Factory(dict)
    binders: dict[Any, Binding] = attrs.Factory(dict)
    """Keyed by ``id(node)`` for let/rec/pattern binders, ``(id(lambda), i)`` for parameters."""
    functions: dict[int, FunctionScope] = attrs.Factory(dict)
    module_exports: dict[int, tuple[Binding, list[tuple[str, Binding]]]] = attrs.Factory(dict)
    opens: dict[int, tuple[Binding, list[tuple[str, Binding]]]] = attrs.Factory(dict)
    scrutinee_slots: dict[int, int] = attrs.Factory(dict)

    def binder(self, key: Any) -> Binding:
        return self.binders[key]


BuiltinNames = Mapping[str, "tuple[str, ...] | None"]
"""Surface names: global name -> ``None`` for a function, the export names for a module."""

KindOf = Callable[[Span], "str | None"]


class _Env:
    """One scope: the names it binds, its parent, and the outer bindings found through it.

    An environment is filled when it is made, before anything nested in it is resolved,
    and never changes afterwards; so a lookup that walked through it may leave its answer
    there (``seen``), and the next lookup of that name from anywhere inside stops at it.
    Deeply nested scopes that all refer to one outer name (1,000 nested matches on ``n``)
    then cost linear time, not a walk to the top per reference.
    """

    __slots__ = ("names", "parent", "seen")

    def __init__(self, parent: _Env | None) -> None:
        self.names: dict[str, Binding] = {}
        self.parent = parent
        self.seen: dict[str, Binding] | None = None

    def lookup(self, name: str) -> Binding | None:
        found = self.names.get(name)
        if found is not None:
            return found
        walked: list[_Env] = []
        env: _Env | None = self
        while env is not None:
            found = env.names.get(name)
            if found is None and env.seen is not None:
                found = env.seen.get(name)
            if found is not None:
                break
            walked.append(env)
            env = env.parent
        if found is not None:
            for passed in walked:
                if passed.seen is None:
                    passed.seen = {}
                passed.seen[name] = found
        return found


def _unannotated(expr: ast.Expr) -> ast.Expr:
    while isinstance(expr, ast.Annot):
        expr = expr.expr
    return expr


def syntactic_kind(expr: ast.Expr, resolution: Resolution | None = None) -> str | None:
    """The primitive type of ``expr`` when its syntax alone tells it."""
    match _unannotated(expr):
        case ast.Int():
            return "int"
        case ast.Float():
            return "float"
        case ast.String():
            return "string"
        case ast.Bool():
            return "bool"
        case ast.Unit() | ast.While() | ast.ArraySet() | ast.SetRef():
            return "unit"
        case ast.Prim1(op=op):
            return "int" if op is ast.UnOp.NEG_INT else "float"
        case ast.Prim2(op=op):
            return _PRIM2_KINDS[op]
        case ast.Var() as var if resolution is not None:
            binding = resolution.var_binding.get(id(var))
            return binding.kind_hint if binding is not None else None
        case ast.Sequence(second=second):
            return syntactic_kind(second, resolution)
    return None


_PRIM2_KINDS: dict[ast.BinOp, str] = {}
for _op in ast.BinOp:
    if _op in (ast.BinOp.ADD, ast.BinOp.SUB, ast.BinOp.MUL, ast.BinOp.DIV):
        _PRIM2_KINDS[_op] = "int"
    elif _op in (ast.BinOp.FADD, ast.BinOp.FSUB, ast.BinOp.FMUL, ast.BinOp.FDIV):
        _PRIM2_KINDS[_op] = "float"
    elif _op is ast.BinOp.CONCAT:
        _PRIM2_KINDS[_op] = "string"
    else:
        _PRIM2_KINDS[_op] = "bool"


class _Resolver:
    def __init__(self, builtins: BuiltinNames, kind_of: KindOf | None) -> None:
        self.kind_of = kind_of
        self.main = FunctionScope("<top level>", None)
        self.global_names: list[str] = []
        self.builtin_slots: list[tuple[int, str]] = []
        self.result = Resolution(self.main, self.global_names, self.builtin_slots)
        self.errors: list[Diagnostic] = []
        self.builtin_env = _Env(None)
        for name, exports in builtins.items():
            binding = self.new_global(name, builtin=True)
            binding.builtin_exports = exports
            self.builtin_slots.append((binding.slot, name))
            self.builtin_env.names[name] = binding

    # ------------------------------------------------------------------ bindings

    def new_global(self, name: str, *, builtin: bool = False, display: str | None = None
                   ) -> Binding:
        self.global_names.append(display or name)
        return Binding(name, True, len(self.global_names) - 1, builtin=builtin)

    def new_local(self, name: str, frame: FunctionScope) -> Binding:
        return Binding(name, False, frame.new_slot(), frame=frame)

    def hint(self, binding: Binding, span: Span | None, rhs: ast.Expr | None) -> None:
        kind = None
        if self.kind_of is not None and span is not None:
            kind = self.kind_of(span)
        if kind is None and rhs is not None:
            kind = syntactic_kind(rhs, self.result)
        binding.kind_hint = kind if kind in PRIMITIVE_KINDS else None

    def access(self, binding: Binding, frame: FunctionScope) -> Access:
        if binding.is_global:
            return Global(binding.slot)
        if binding.frame is frame:
            return Local(binding.slot)
        return Free(self.capture(frame, binding))

    def capture(self, frame: FunctionScope, binding: Binding) -> int:
        key = id(binding)
        index = frame.capture_index.get(key)
        if index is not None:
            return index
        parent = frame.parent
        assert parent is not None, "a local binding always belongs to an enclosing frame"
        if binding.frame is parent:
            source = (LOCAL, binding.slot)
        else:
            source = (FREE, self.capture(parent, binding))
        frame.captures.append(source)
        index = len(frame.captures) - 1
        frame.capture_index[key] = index
        return index

    def unknown(self, span: Span, message: str) -> None:
        self.errors.append(Diagnostic.at(span, "chatml.unknown_variable", message,
                                         phase="resolve"))

    # ------------------------------------------------------------------ statements

    def program(self, program: ast.Program) -> Resolution:
        env = _Env(self.builtin_env)
        for statement in program.statements:
            env = self.statement(statement, env, None, "")
        self.result.functions[0] = self.main
        return self.result

    def statement(self, stmt: ast.Stmt, env: _Env, exports: dict[str, Binding] | None,
                  prefix: str) -> _Env:
        match stmt:
            case ast.LetStmt():
                return self.let_statement(stmt, env, exports, prefix)
            case ast.LetRecStmt():
                return self.let_rec_statement(stmt, env, exports, prefix)
            case ast.ExprStmt():
                self.expr(stmt.expr, env, self.main)
            case ast.ModuleStmt():
                return self.module(stmt, env, exports, prefix)
            case ast.OpenStmt():
                return self.open(stmt, env, prefix)
        return env  # ast.TypeStmt: nothing to resolve

    def let_statement(self, stmt: ast.LetStmt, env: _Env, exports: dict[str, Binding] | None,
                      prefix: str) -> _Env:
        self.expr(stmt.rhs, env, self.main, name=stmt.name)
        binding = self.new_global(stmt.name, display=prefix + stmt.name)
        rhs = _unannotated(stmt.rhs)
        if isinstance(rhs, ast.Lambda):
            binding.lambda_node = rhs
        self.hint(binding, stmt.name_span, stmt.rhs)
        self.result.binders[id(stmt)] = binding
        env = _Env(env)
        env.names[stmt.name] = binding
        if exports is not None:
            exports[stmt.name] = binding
        return env

    def let_rec_statement(self, stmt: ast.LetRecStmt, env: _Env,
                          exports: dict[str, Binding] | None, prefix: str) -> _Env:
        env = _Env(env)
        bindings = []
        for rec in stmt.bindings:
            binding = self.new_global(rec.name, display=prefix + rec.name)
            binding.recursive = True
            rhs = _unannotated(rec.rhs)
            if isinstance(rhs, ast.Lambda):
                binding.lambda_node = rhs
            self.result.binders[id(rec)] = binding
            env.names[rec.name] = binding
            bindings.append(binding)
        for rec in stmt.bindings:
            self.expr(rec.rhs, env, self.main, name=rec.name)
        if exports is not None:
            for rec, binding in zip(stmt.bindings, bindings, strict=True):
                exports[rec.name] = binding
        return env

    def module(self, stmt: ast.ModuleStmt, env: _Env, exports: dict[str, Binding] | None,
               prefix: str) -> _Env:
        module_binding = self.new_global(stmt.name, display=prefix + stmt.name)
        body_env = _Env(env)
        body_env.names[stmt.name] = module_binding
        own_exports: dict[str, Binding] = {}
        for inner in stmt.body:
            body_env = self.statement(inner, body_env, own_exports, f"{prefix}{stmt.name}.")
        own_exports.pop(stmt.name, None)
        export_list = list(own_exports.items())
        module_binding.module_exports = export_list
        self.result.module_exports[id(stmt)] = (module_binding, export_list)
        self.result.binders[id(stmt)] = module_binding
        env = _Env(env)
        env.names[stmt.name] = module_binding
        if exports is not None:
            exports[stmt.name] = module_binding
        return env

    def open(self, stmt: ast.OpenStmt, env: _Env, prefix: str) -> _Env:
        target = env.lookup(stmt.name)
        if target is None:
            self.unknown(stmt.span, f"Unknown variable '{stmt.name}'")
            return env
        names: list[tuple[str, Binding | None]]
        if target.module_exports is not None:
            names = [(name, source) for name, source in target.module_exports]
        elif target.builtin_exports is not None:
            names = [(name, None) for name in target.builtin_exports]
        else:
            self.errors.append(Diagnostic.at(stmt.span, "chatml.open_non_module",
                                             f"Cannot open non-module '{stmt.name}'",
                                             phase="resolve"))
            return env
        env = _Env(env)
        defined: list[tuple[str, Binding]] = []
        for name, source in sorted(names, key=lambda pair: pair[0]):
            binding = self.new_global(name, display=prefix + name)
            if source is not None:
                binding.lambda_node = source.lambda_node
                binding.kind_hint = source.kind_hint
            env.names[name] = binding
            defined.append((name, binding))
        self.result.opens[id(stmt)] = (target, defined)
        return env

    # ------------------------------------------------------------------ expressions

    def expr(self, root: ast.Expr, env: _Env, frame: FunctionScope, name: str | None = None
             ) -> None:
        # Explicit work stack: deeply nested programs must not exhaust the Python stack.
        work: list[tuple[ast.Node | _Hint, _Env, FunctionScope, str | None]] = [
            (root, env, frame, name)]
        while work:
            node, env, frame, name = work.pop()
            match node:
                case ast.Var():
                    binding = env.lookup(node.name)
                    if binding is None:
                        self.unknown(node.span, f"Unknown variable '{node.name}'")
                        continue
                    self.result.var_binding[id(node)] = binding
                    self.result.var_access[id(node)] = self.access(binding, frame)
                case ast.Int() | ast.String() | ast.Bool() | ast.Float() | ast.Unit():
                    pass  # leaves (the commonest nodes after variables): nothing to resolve
                case ast.App() | ast.Prim2() | ast.FieldGet():  # the commonest inner nodes
                    for child in reversed(list(ast.children(node))):
                        work.append((child, env, frame, None))
                case ast.Lambda():
                    work.append(self.lambda_(node, env, frame, name))
                case ast.LetIn():
                    binding = self.new_local(node.name, frame)
                    rhs = _unannotated(node.rhs)
                    if isinstance(rhs, ast.Lambda):
                        binding.lambda_node = rhs
                    self.result.binders[id(node)] = binding
                    body_env = _Env(env)
                    body_env.names[node.name] = binding
                    # the body is resolved after the rhs (stack order): hint needs the rhs first
                    work.append((_Hint(binding, node.name_span, node.rhs), env, frame, None))
                    work.append((node.body, body_env, frame, None))
                    work.append((node.rhs, env, frame, node.name))
                case ast.LetRec():
                    rec_env = self.let_rec_env(node, env, frame)
                    work.append((node.body, rec_env, frame, None))
                    for rec in reversed(node.bindings):
                        work.append((rec.rhs, rec_env, frame, rec.name))
                case ast.Match():
                    self.result.scrutinee_slots[id(node)] = frame.new_slot()
                    for arm in reversed(node.arms):
                        arm_env = _Env(env)
                        self.pattern(arm.pattern, arm_env, frame)
                        work.append((arm.body, arm_env, frame, None))
                    work.append((node.scrutinee, env, frame, None))
                case _Hint():
                    self.hint(node.binding, node.span, node.rhs)
                case ast.Annot():
                    work.append((node.expr, env, frame, name))
                case _:
                    for child in reversed(list(ast.children(node))):
                        work.append((child, env, frame, None))

    def lambda_(self, node: ast.Lambda, env: _Env, frame: FunctionScope, name: str | None
                ) -> tuple[ast.Expr, _Env, FunctionScope, None]:
        """Bind a function's parameters; returns the body's work item."""
        inner = FunctionScope(name or "<fun>", frame, node)
        self.result.functions[id(node)] = inner
        lambda_env = _Env(env)
        for index, param in enumerate(node.params):
            binding = self.new_local(param, inner)
            inner.param_slots.append(binding.slot)
            span = node.param_spans[index] if index < len(node.param_spans) else None
            self.hint(binding, span, None)
            self.result.binders[(id(node), index)] = binding
            lambda_env.names[param] = binding
        return node.body, lambda_env, inner, None

    def let_rec_env(self, node: ast.LetRec, env: _Env, frame: FunctionScope) -> _Env:
        rec_env = _Env(env)
        for rec in node.bindings:
            binding = self.new_local(rec.name, frame)
            binding.recursive = True
            rhs = _unannotated(rec.rhs)
            if isinstance(rhs, ast.Lambda):
                binding.lambda_node = rhs
            self.result.binders[id(rec)] = binding
            rec_env.names[rec.name] = binding
        return rec_env

    def pattern(self, root: ast.Pattern, env: _Env, frame: FunctionScope) -> None:
        stack: list[ast.Pattern] = [root]
        while stack:
            match stack.pop():
                case ast.PVar() as node:
                    binding = self.new_local(node.name, frame)
                    self.hint(binding, node.span, None)
                    self.result.binders[id(node)] = binding
                    env.names[node.name] = binding
                case ast.PVariant(args=args):
                    stack.extend(reversed(args))
                case ast.PRecord(fields=fields):
                    stack.extend(f.pattern for f in reversed(fields))


@attrs.define(eq=False)
class _Hint:
    binding: Binding
    span: Span | None
    rhs: ast.Expr


def resolve(program: ast.Program, builtins: BuiltinNames, kind_of: KindOf | None = None
            ) -> Resolution:
    """Resolve every name of ``program``; raises ``DiagnosticError`` for unbound names."""
    resolver = _Resolver(builtins, kind_of)
    resolution = resolver.program(program)
    if resolver.errors:
        raise DiagnosticError(resolver.errors)
    return resolution
