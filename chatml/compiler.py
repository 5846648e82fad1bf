"""The ChatML compiler: a resolved syntax tree to bytecode (:mod:`chatml.bytecode`).

Input: the :class:`~chatml.ast.Program` and its :class:`~chatml.resolve.Resolution`.
Output: a :class:`~chatml.bytecode.code.CompiledModule`. Every instruction
carries the source position of the node that produced it (the line table).

What the compiler decides (the VM only follows the bytecode):

* **tail calls** (spec 5.4): a call in tail position to the enclosing
  ``let rec`` function itself becomes ``SELF_TAIL_CALL`` (a loop); a call to a
  builtin or to a known non-recursive ``let``-bound function is a direct
  ``CALL_RAW`` + ``RETURN`` (such chains cannot cycle: a non-recursive
  function can only name functions bound before it); every other tail call
  is ``TAIL_CALL`` (a trampoline bounce). A function that can bounce is
  flagged ``may_bounce``; calls to known functions that cannot bounce skip
  the trampoline (``CALL_RAW``);
* **equality**: ``==``/``!=`` where one operand is syntactically (or by the
  checker's binder types) a primitive become ``EQ_PRIM``/``NE_PRIM``;
* **local refs**: a ``let r = ref(e) in ...`` whose ``r`` is only ever read with
  ``!r`` and written with ``r := v`` in its own function (never passed,
  stored, compared or captured) is kept unboxed in its local slot -- nothing
  outside the frame can observe the difference;
* **matches**: the scrutinee goes into a fresh local; arms become
  ``MATCH_ARM``/``ELSE`` chains ending in ``MATCH_FAIL`` unless the last arm
  is a plain variable or ``_``.

Nesting is bounded by the Python stack for expressions (long ``;`` and
``let ... in`` chains are compiled iteratively); a program nested deeper than
that is reported as ``chatml.too_deep`` rather than crashing.
"""

from __future__ import annotations

import sys
from typing import Any

from chatcommon.diagnostics import Diagnostic, DiagnosticError
from chatcommon.sources import Span
from chatml import ast
from chatml.bytecode.code import (
    MAX_PATTERN_DEPTH,
    CodeObject,
    CompiledModule,
    Position,
    source_hash,
)
from chatml.bytecode.opcodes import Op
from chatml.resolve import Binding, Free, FunctionScope, Global, Local, Resolution, syntactic_kind

_BINARY = {
    ast.BinOp.ADD: Op.ADD, ast.BinOp.SUB: Op.SUB, ast.BinOp.MUL: Op.MUL, ast.BinOp.DIV: Op.DIV,
    ast.BinOp.FADD: Op.FADD, ast.BinOp.FSUB: Op.FSUB, ast.BinOp.FMUL: Op.FMUL,
    ast.BinOp.FDIV: Op.FDIV, ast.BinOp.CONCAT: Op.CONCAT, ast.BinOp.EQ: Op.EQ,
    ast.BinOp.NE: Op.NE, ast.BinOp.LT: Op.LT, ast.BinOp.GT: Op.GT, ast.BinOp.LE: Op.LE,
    ast.BinOp.GE: Op.GE, ast.BinOp.FLT: Op.FLT, ast.BinOp.FGT: Op.FGT, ast.BinOp.FLE: Op.FLE,
    ast.BinOp.FGE: Op.FGE,
}


class _Code:
    """A code object under construction."""

    def __init__(self, scope: FunctionScope, parent: int, index: int) -> None:
        self.scope = scope
        self.index = index
        self.parent = parent
        self.instructions: list[tuple[int, int, int]] = []
        self.positions: list[Position] = []
        self.self_loop = False
        self.may_bounce = False

    def freeze(self) -> CodeObject:
        scope = self.scope
        return CodeObject(
            name=scope.name,
            arity=len(scope.param_slots),
            n_locals=scope.n_locals,
            captures=tuple(scope.captures),
            instructions=tuple(self.instructions),
            positions=tuple(self.positions),
            self_loop=self.self_loop,
            may_bounce=self.may_bounce,
            parent=self.parent,
        )


class _Compiler:
    def __init__(self, resolution: Resolution) -> None:
        self.res = resolution
        self.consts: list[object] = []
        self.const_index: dict[tuple[str, str], int] = {}
        self.codes: list[_Code | None] = []
        self.code_of_lambda: dict[int, _Code] = {}
        self.position_cache: dict[tuple[int, int, int], Position] = {}
        self.code: _Code = self.new_code(resolution.main, -1)
        self.unboxed: set[int] = set()
        self.export_slots: dict[str, int] = {}

    def builtin_export(self, node: ast.Expr) -> int | None:
        """The global slot holding ``M.f`` when ``node`` is a field of a builtin module.

        Builtin modules never change, so such a field is bound once, at load time, to its
        own global slot (``String.length`` is then a plain global, called directly).
        """
        if type(node) is not ast.FieldGet or type(node.record) is not ast.Var:
            return None
        binding = self.res.var_binding.get(id(node.record))
        if binding is None or not binding.builtin or binding.builtin_exports is None:
            return None
        label = node.label
        if label not in binding.builtin_exports:
            return None
        qualified = f"{binding.name}.{label}"
        slot = self.export_slots.get(qualified)
        if slot is None:
            self.res.global_names.append(qualified)
            slot = len(self.res.global_names) - 1
            self.res.builtin_slots.append((slot, qualified))
            self.export_slots[qualified] = slot
        return slot

    def find_unboxed_refs(self, program: ast.Program) -> None:
        """Bindings of ``let r = ref(e)`` used only as ``!r`` / ``r := v`` in their own frame."""
        candidates: dict[int, Binding] = {}
        ref_uses: set[int] = set()
        uses: dict[int, list[ast.Var]] = {}
        for node in ast.walk(program):
            match node:
                case ast.LetIn() if type(_strip(node.rhs)) is ast.Ref:
                    candidate = self.res.binders[id(node)]
                    candidates[id(candidate)] = candidate
                case ast.Deref() | ast.SetRef() if type(node.ref) is ast.Var:
                    ref_uses.add(id(node.ref))
                case ast.Var():
                    used = self.res.var_binding.get(id(node))
                    if used is not None:
                        uses.setdefault(id(used), []).append(node)
        for key in candidates:
            if all(id(var) in ref_uses and type(self.res.var_access[id(var)]) is Local
                   for var in uses.get(key, ())):
                self.unboxed.add(key)

    def is_unboxed(self, node: ast.Expr) -> Binding | None:
        if type(node) is not ast.Var:
            return None
        binding = self.res.var_binding.get(id(node))
        return binding if binding is not None and id(binding) in self.unboxed else None

    # ------------------------------------------------------------------ helpers

    def new_code(self, scope: FunctionScope, parent: int) -> _Code:
        code = _Code(scope, parent, len(self.codes))
        self.codes.append(code)
        return code

    def const(self, value: object) -> int:
        key = _const_key(value)
        index = self.const_index.get(key)
        if index is None:
            index = len(self.consts)
            self.consts.append(value)
            self.const_index[key] = index
        return index

    def position(self, span: Span) -> Position:
        key = (id(span.source), span.start, span.end)
        found = self.position_cache.get(key)
        if found is None:
            line, column = span.start_position
            end_line, end_column = span.end_position
            found = (line, column, end_line, end_column)
            self.position_cache[key] = found
        return found

    def emit(self, op: Op, span: Span, a: int = 0, b: int = 0) -> None:
        self.code.instructions.append((int(op), a, b))
        self.code.positions.append(self.position(span))

    def load(self, node: ast.Var) -> None:
        access = self.res.var_access[id(node)]
        if type(access) is Local:
            self.emit(Op.LOAD_LOCAL, node.span, access.slot)
        elif type(access) is Free:
            self.emit(Op.LOAD_FREE, node.span, access.index)
        else:
            assert type(access) is Global
            self.emit(Op.LOAD_GLOBAL, node.span, access.slot)

    # ------------------------------------------------------------------ functions

    def function(self, node: ast.Lambda) -> int:
        scope = self.res.functions[id(node)]
        outer = self.code
        code = self.new_code(scope, outer.index)
        self.code_of_lambda[id(node)] = code
        self.code = code
        try:
            self.expr(node.body, tail=True)
        finally:
            self.code = outer
        self.codes[code.index] = code
        return code.index

    def known_callee(self, fn: ast.Expr) -> Binding | None:
        if type(fn) is not ast.Var:
            return None
        return self.res.var_binding.get(id(fn))

    def callee_may_bounce(self, binding: Binding) -> bool:
        """Whether calling the known ``binding`` can return a tail call."""
        if binding.builtin:
            return False
        node = binding.lambda_node
        if node is None:
            return True
        compiled = self.code_of_lambda.get(id(node))
        if compiled is not None and not binding.recursive:
            return compiled.may_bounce
        return _statically_bounces(node, self.res)

    def call(self, node: ast.App, tail: bool) -> None:
        binding = self.known_callee(node.fn)
        current = self.code.scope.node
        n = len(node.args)
        export = self.builtin_export(node.fn)
        if export is not None:  # a builtin module's function: a direct call
            self.emit(Op.LOAD_GLOBAL, node.fn.span, export)
            for arg in node.args:
                self.expr(arg)
            self.emit(Op.CALL_RAW, node.span, n)
            if tail:
                self.emit(Op.RETURN, node.span)
            return
        if (tail and binding is not None and binding.recursive and current is not None
                and binding.lambda_node is current and n == len(current.params)):
            for arg in node.args:
                self.expr(arg)
            self.emit(Op.SELF_TAIL_CALL, node.span, n)
            self.code.self_loop = True
            return
        self.expr(node.fn)
        for arg in node.args:
            self.expr(arg)
        direct = binding is not None and (binding.builtin or (
            binding.lambda_node is not None and not binding.recursive))
        if tail:
            if direct:
                assert binding is not None
                self.emit(Op.CALL_RAW, node.span, n)
                self.emit(Op.RETURN, node.span)
                if self.callee_may_bounce(binding):
                    self.code.may_bounce = True
            else:
                self.emit(Op.TAIL_CALL, node.span, n)
                self.code.may_bounce = True
            return
        if binding is not None and not self.callee_may_bounce(binding):
            self.emit(Op.CALL_RAW, node.span, n)
        else:
            self.emit(Op.CALL, node.span, n)

    # ------------------------------------------------------------------ expressions

    def expr(self, node: ast.Expr, tail: bool = False) -> None:
        # Right spines of `;` and `let ... in` are walked in a loop (long scripts chain them).
        while True:
            match node:
                case ast.Var():  # the commonest expression first (a fast path of `simple`)
                    self.load(node)
                    if tail:
                        self.emit(Op.RETURN, node.span)
                    return
                case ast.App():
                    self.call(node, tail)
                    return
                case ast.Sequence():
                    self.expr(node.first)
                    self.emit(Op.POP, node.span)
                    node = node.second
                case ast.LetIn():
                    binding = self.res.binder(id(node))
                    if id(binding) in self.unboxed:  # find_unboxed_refs: a `ref(e)` rhs
                        ref = _strip(node.rhs)
                        assert isinstance(ref, ast.Ref)
                        self.expr(ref.value)
                    else:
                        self.expr(node.rhs)
                    self.emit(Op.STORE_LOCAL, node.span, binding.slot)
                    node = node.body
                case ast.LetRec():
                    self.let_rec(node.bindings, node.span, is_global=False)
                    node = node.body
                case ast.Annot():
                    node = node.expr
                case ast.If():  # an `else if` chain with a loop: flat to the reader, any length
                    chain: list[Span] = []
                    while isinstance(node, ast.If):
                        self.expr(node.cond)
                        self.emit(Op.IF, node.span)
                        self.expr(node.then_branch, tail)
                        self.emit(Op.ELSE, node.span)
                        chain.append(node.span)
                        node = node.else_branch
                    self.expr(node, tail)
                    for span in reversed(chain):
                        self.emit(Op.END, span)
                    return
                case ast.Match():
                    self.match(node, tail)
                    return
                case _:
                    self.simple(node)
                    if tail:
                        self.emit(Op.RETURN, node.span)
                    return

    def simple(self, node: ast.Expr) -> None:
        """An expression that is not control flow (``expr`` handles those)."""
        span = node.span
        match node:
            case ast.Var():
                self.load(node)
            case ast.Int() | ast.Float() | ast.Bool() | ast.String():
                self.emit(Op.CONST, span, self.const(node.value))
            case ast.Prim2():
                self.binary(node)
            case ast.FieldGet():
                self.field_get(node)
            case ast.Unit():
                self.emit(Op.CONST, span, self.const(None))
            case ast.Prim1():
                self.expr(node.operand)
                self.emit(Op.NEG if node.op is ast.UnOp.NEG_INT else Op.FNEG, span)
            case ast.Lambda():
                self.emit(Op.MAKE_CLOSURE, span, self.function(node))
            case ast.While():
                self.emit(Op.LOOP, span)
                self.expr(node.cond)
                self.emit(Op.LOOP_TEST, span)
                self.expr(node.body)
                self.emit(Op.POP, span)
                self.emit(Op.END_LOOP, span)
            case ast.Record():
                self.fields(node.fields)
                self.emit(Op.MAKE_RECORD, span, self.const(tuple(f.label for f in node.fields)))
            case ast.RecordExtend():
                self.expr(node.base)
                self.fields(node.fields)
                self.emit(Op.EXTEND, span, self.const(tuple(f.label for f in node.fields)))
            case ast.Variant():
                for arg in node.args:
                    self.expr(arg)
                self.emit(Op.MAKE_VARIANT, span, self.const(node.tag), len(node.args))
            case ast.Array():
                for element in node.elements:
                    self.expr(element)
                self.emit(Op.MAKE_ARRAY, span, len(node.elements))
            case ast.ArrayGet():
                self.expr(node.array)
                self.expr(node.index)
                self.emit(Op.ARRAY_GET, span)
            case ast.ArraySet():
                self.expr(node.array)
                self.expr(node.index)
                self.expr(node.value)
                self.emit(Op.ARRAY_SET, span)
            case ast.Ref():
                self.expr(node.value)
                self.emit(Op.MAKE_REF, span)
            case ast.Deref():
                self.deref(node)
            case ast.SetRef():
                self.set_ref(node)
            case _:
                self.expr(node)  # control flow: App, If, Match, Sequence, LetIn, LetRec, Annot

    def binary(self, node: ast.Prim2) -> None:
        self.expr(node.left)
        self.expr(node.right)
        op = _BINARY[node.op]
        if op in (Op.EQ, Op.NE) and (syntactic_kind(node.left, self.res) or
                                     syntactic_kind(node.right, self.res)):
            op = Op.EQ_PRIM if op is Op.EQ else Op.NE_PRIM
        self.emit(op, node.span)

    def fields(self, fields: tuple[ast.Field, ...]) -> None:
        for field in fields:
            self.expr(field.value)

    def field_get(self, node: ast.FieldGet) -> None:
        export = self.builtin_export(node)
        if export is not None:
            self.emit(Op.LOAD_GLOBAL, node.span, export)
        else:
            self.expr(node.record)
            self.emit(Op.GET_FIELD, node.span, self.const(node.label))

    def deref(self, node: ast.Deref) -> None:
        unboxed = self.is_unboxed(node.ref)
        if unboxed is not None:
            self.emit(Op.LOAD_LOCAL, node.span, unboxed.slot)
        else:
            self.expr(node.ref)
            self.emit(Op.DEREF, node.span)

    def set_ref(self, node: ast.SetRef) -> None:
        unboxed = self.is_unboxed(node.ref)
        if unboxed is not None:
            self.expr(node.value)
            self.emit(Op.STORE_LOCAL, node.span, unboxed.slot)
            self.emit(Op.CONST, node.span, self.const(None))
        else:
            self.expr(node.ref)
            self.expr(node.value)
            self.emit(Op.SET_REF, node.span)

    def let_rec(self, bindings: tuple[ast.RecBinding, ...], span: Span, *, is_global: bool
                ) -> None:
        group: list[tuple[int, int]] = []
        others: list[tuple[ast.Expr, Binding]] = []
        for rec in bindings:
            binding = self.res.binder(id(rec))
            rhs = rec.rhs
            while isinstance(rhs, ast.Annot):
                rhs = rhs.expr
            if isinstance(rhs, ast.Lambda):
                group.append((self.function(rhs), binding.slot))
            else:
                others.append((rec.rhs, binding))
        if group:
            op = Op.MAKE_REC_GLOBAL if is_global else Op.MAKE_REC
            self.emit(op, span, self.const(tuple(group)))
        for rhs, binding in others:  # only reachable without the checker (spec 4.14)
            self.expr(rhs)
            self.emit(Op.STORE_GLOBAL if is_global else Op.STORE_LOCAL, span, binding.slot)

    def match(self, node: ast.Match, tail: bool) -> None:
        slot = self.res.scrutinee_slots[id(node)]
        self.expr(node.scrutinee)
        self.emit(Op.STORE_LOCAL, node.span, slot)
        opened = 0
        for arm in node.arms:
            pattern = arm.pattern
            if type(pattern) in (ast.PWildcard, ast.PVar):
                if type(pattern) is ast.PVar:
                    self.emit(Op.LOAD_LOCAL, pattern.span, slot)
                    self.emit(Op.STORE_LOCAL, pattern.span, self.res.binder(id(pattern)).slot)
                self.expr(arm.body, tail)
                break
            self.emit(Op.MATCH_ARM, pattern.span, self.const((slot, self.pattern(pattern))))
            self.expr(arm.body, tail)
            self.emit(Op.ELSE, pattern.span)
            opened += 1
        else:
            self.emit(Op.MATCH_FAIL, node.span)
        for _ in range(opened):
            self.emit(Op.END, node.span)

    def pattern(self, root: ast.Pattern) -> tuple[Any, ...]:
        """The ``MATCH_ARM`` constant of a pattern, built bottom-up with an explicit stack
        (a pattern of any depth up to :data:`MAX_PATTERN_DEPTH` compiles; deeper ones are
        ``chatml.too_deep`` at the first pattern past the limit)."""
        built: list[tuple[Any, ...]] = []
        work: list[tuple[ast.Pattern, int, bool]] = [(root, 0, False)]
        while work:
            pattern, depth, children_done = work.pop()
            if depth > MAX_PATTERN_DEPTH:
                raise DiagnosticError(Diagnostic.at(
                    pattern.span, "chatml.too_deep",
                    f"pattern nested more than {MAX_PATTERN_DEPTH:,} deep", phase="compile",
                    hint="match the outer constructors here and the inner value in a "
                         "nested match"))
            subs = _sub_patterns(pattern)
            if subs is None:
                built.append(self.leaf_pattern(pattern))
            elif not children_done:
                work.append((pattern, depth, True))
                work.extend((sub, depth + 1, False) for sub in reversed(subs))
            else:
                items = tuple(built[len(built) - len(subs):])
                del built[len(built) - len(subs):]
                if isinstance(pattern, ast.PVariant):
                    built.append(("variant", pattern.tag, items))
                else:
                    assert isinstance(pattern, ast.PRecord)
                    labels = [f.label for f in pattern.fields]
                    built.append(("record", tuple(zip(labels, items, strict=True)),
                                  pattern.is_open))
        return built[0]

    def leaf_pattern(self, pattern: ast.Pattern) -> tuple[Any, ...]:
        match pattern:
            case ast.PVar():
                return ("var", self.res.binder(id(pattern)).slot)
            case ast.PUnit():
                return ("unit",)
            case ast.PInt() | ast.PFloat() | ast.PBool() | ast.PString():
                return ("lit", pattern.value)
        return ("_",)

    # ------------------------------------------------------------------ statements

    def statement(self, stmt: ast.Stmt) -> None:
        match stmt:
            case ast.LetStmt():
                self.expr(stmt.rhs)
                self.emit(Op.STORE_GLOBAL, stmt.span, self.res.binder(id(stmt)).slot)
            case ast.LetRecStmt():
                self.let_rec(stmt.bindings, stmt.span, is_global=True)
            case ast.ExprStmt():
                self.expr(stmt.expr)
                self.emit(Op.POP, stmt.span)
            case ast.ModuleStmt():
                self.module(stmt)
            case ast.OpenStmt():
                target, defined = self.res.opens[id(stmt)]
                for name, binding in defined:
                    self.emit(Op.LOAD_GLOBAL, stmt.span, target.slot)
                    self.emit(Op.GET_FIELD, stmt.span, self.const(name))
                    self.emit(Op.STORE_GLOBAL, stmt.span, binding.slot)

    def module(self, stmt: ast.ModuleStmt) -> None:
        module_binding, exports = self.res.module_exports[id(stmt)]
        span = stmt.span
        self.emit(Op.MODULE_NEW, span, self.const(stmt.name))
        self.emit(Op.STORE_GLOBAL, span, module_binding.slot)
        for inner in stmt.body:
            self.statement(inner)
        self.emit(Op.LOAD_GLOBAL, span, module_binding.slot)
        fill = tuple((name, binding.slot) for name, binding in exports)
        self.emit(Op.MODULE_FILL, span, self.const(fill))

    def program(self, program: ast.Program) -> None:
        for stmt in program.statements:
            self.statement(stmt)
        self.emit(Op.CONST, program.span, self.const(None))
        self.emit(Op.RETURN, program.span)


#: Scalars a constant's key holds as themselves (with their type: ``1``, ``True`` and
#: ``1.0`` are equal in Python but not the same constant); anything else by ``repr``
#: (a float's ``repr`` tells ``0.0`` from ``-0.0``).
_KEYED_AS_THEMSELVES = frozenset({int, str, bool, type(None)})
_TUPLE_MARK = object()


def _const_key(value: object) -> tuple[Any, ...]:
    """What tells constants apart in the pool: each scalar's type and value (or ``repr``),
    and a tuple's shape, flattened in prefix order with an explicit stack (``repr`` of a
    pattern nested ``d`` deep copies its inner text at every level: quadratic in ``d``, and
    recursive). Two entries per item and no tuple per item, so a deep pattern's key
    allocates little for the collector to scan."""
    kind = type(value)
    if not isinstance(value, tuple):
        return (kind, value if kind in _KEYED_AS_THEMSELVES else repr(value))
    flat: list[object] = []
    append = flat.append
    pending: list[object] = [value]
    while pending:
        item = pending.pop()
        kind = type(item)
        if isinstance(item, tuple):
            append(_TUPLE_MARK)
            append(len(item))
            pending.extend(reversed(item))
        else:
            append(kind)
            append(item if kind in _KEYED_AS_THEMSELVES else repr(item))
    return (_TUPLE_MARK, tuple(flat))


def _sub_patterns(pattern: ast.Pattern) -> list[ast.Pattern] | None:
    """The sub-patterns of a constructor pattern (variant or record); ``None`` for a leaf."""
    if isinstance(pattern, ast.PVariant):
        return list(pattern.args)
    if isinstance(pattern, ast.PRecord):
        return [f.pattern for f in pattern.fields]
    return None


def _strip(expr: ast.Expr) -> ast.Expr:
    while type(expr) is ast.Annot:
        expr = expr.expr
    return expr


def _tail_apps(body: ast.Expr) -> list[ast.App]:
    """The applications in tail position of a function body."""
    found: list[ast.App] = []
    stack = [body]
    while stack:
        node = stack.pop()
        match node:
            case ast.App():
                found.append(node)
            case ast.If():
                stack += [node.then_branch, node.else_branch]
            case ast.Match():
                stack += [arm.body for arm in node.arms]
            case ast.LetIn() | ast.LetRec():
                stack.append(node.body)
            case ast.Sequence():
                stack.append(node.second)
            case ast.Annot():
                stack.append(node.expr)
    return found


def _statically_bounces(node: ast.Lambda, res: Resolution) -> bool:
    """Whether a function's tail calls include a trampoline bounce (checked on syntax)."""
    for app in _tail_apps(node.body):
        callee = res.var_binding.get(id(app.fn)) if type(app.fn) is ast.Var else None
        if callee is None:
            return True
        if callee.builtin:
            continue
        if callee.recursive and callee.lambda_node is node and len(app.args) == len(node.params):
            continue
        if callee.lambda_node is not None and not callee.recursive:
            if _statically_bounces(callee.lambda_node, res):
                return True
            continue
        return True
    return False


def compile_program(program: ast.Program, resolution: Resolution, *, source_name: str,
                    source_text: str, surface: str) -> CompiledModule:
    """Compile a resolved program; ``DiagnosticError`` (``chatml.too_deep``) if nested too deeply."""
    compiler = _Compiler(resolution)
    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, 12_000))
    try:
        compiler.find_unboxed_refs(program)
        compiler.program(program)
    except RecursionError:
        span = program.span
        raise DiagnosticError(Diagnostic.at(
            span, "chatml.too_deep", "program is nested too deeply to compile",
            phase="compile", hint="split deeply nested expressions into separate bindings",
        )) from None
    finally:
        sys.setrecursionlimit(old_limit)
    codes = tuple(code.freeze() for code in compiler.codes if code is not None)
    return CompiledModule(
        source_name=source_name,
        source_hash=source_hash(source_text),
        surface=surface,
        consts=tuple(compiler.consts),
        codes=codes,
        global_names=tuple(resolution.global_names),
        builtin_slots=tuple(resolution.builtin_slots),
    )
