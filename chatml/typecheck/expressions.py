"""Typing rules for expressions (spec 4.5), registered with :func:`checker.rule`.

Each rule infers the type of one expression form, in the order the spec
gives (which decides the first error reported), and attaches its own span
to a failed unification. Records, matches, annotations and ``let rec`` have
their own modules; this one holds everything else.
"""

from __future__ import annotations

from chatcommon.diagnostics import Diagnostic
from chatcommon.sources import Span
from chatml import ast
from chatml.typecheck import errors
from chatml.typecheck.checker import Checker, rule
from chatml.typecheck.equality import check_equality
from chatml.typecheck.open_variants import FEW, OpenVariant
from chatml.typecheck.records import join, join_hint, reopen_parameter
from chatml.typecheck.schemes import COPY_AT_USE, Scheme, use_copy
from chatml.typecheck.types import (
    BOOL,
    ERROR,
    FLOAT,
    INT,
    STRING,
    UNIT,
    Namer,
    TArray,
    TFun,
    TRef,
    TTuple,
    TVar,
    TVariant,
    Type,
    resolve,
    show_message_type,
)
from chatml.typecheck.unify import UnifyError, bind_fresh, unify

# --------------------------------------------------------------------------- literals


@rule(ast.Int)
def infer_int(ck: Checker, e: ast.Int) -> Type:
    return INT


@rule(ast.Float)
def infer_float(ck: Checker, e: ast.Float) -> Type:
    return FLOAT


@rule(ast.Bool)
def infer_bool(ck: Checker, e: ast.Bool) -> Type:
    return BOOL


@rule(ast.String)
def infer_string(ck: Checker, e: ast.String) -> Type:
    return STRING


@rule(ast.Unit)
def infer_unit(ck: Checker, e: ast.Unit) -> Type:
    return UNIT


# --------------------------------------------------------------------------- variables


@rule(ast.Var)
def infer_var(ck: Checker, e: ast.Var) -> Type:
    entry = ck.env.values.get(e.name)
    if entry is None:
        ck.report(unknown_variable(ck, e.name, e.span))
        return ERROR
    if type(entry) is Scheme:
        return entry.instantiate(ck.level)
    if type(entry) is TVar and entry.level == COPY_AT_USE:  # a cyclic monomorphic entry
        return use_copy(entry, ck.level)
    return entry


def unknown_variable(ck: Checker, name: str, span: Span) -> Diagnostic:
    """The ``Unknown variable`` diagnostic, with a suggestion when a close name exists."""
    from difflib import get_close_matches

    hint = None
    candidates = [n for n in ck.env.values if not n.startswith("__")]
    close = get_close_matches(name, candidates, n=1, cutoff=0.75)
    if close:
        hint = f"did you mean '{close[0]}'?"
    elif name == "print":
        hint = "print is not available here: shell script surfaces have no output"
    return ck.error(span, errors.UNKNOWN_VARIABLE, f"Unknown variable '{name}'", hint)


# --------------------------------------------------------------------------- operators

_INT_ARITHMETIC = {ast.BinOp.ADD, ast.BinOp.SUB, ast.BinOp.MUL, ast.BinOp.DIV}
_FLOAT_ARITHMETIC = {ast.BinOp.FADD, ast.BinOp.FSUB, ast.BinOp.FMUL, ast.BinOp.FDIV}
_INT_COMPARISON = {ast.BinOp.LT, ast.BinOp.GT, ast.BinOp.LE, ast.BinOp.GE}
_FLOAT_COMPARISON = {ast.BinOp.FLT, ast.BinOp.FGT, ast.BinOp.FLE, ast.BinOp.FGE}
_FLOAT_TWIN = {op.value: op.value + "." for op in (*_INT_ARITHMETIC, *_INT_COMPARISON)}

#: id(operator) -> (operand type, result type); keyed by identity because an
#: enum member's ``__hash__`` is a Python-level call (members are singletons)
_OPERATOR_TYPES: dict[int, tuple[Type, Type]] = {}
for _op in _INT_ARITHMETIC:
    _OPERATOR_TYPES[id(_op)] = (INT, INT)
for _op in _FLOAT_ARITHMETIC:
    _OPERATOR_TYPES[id(_op)] = (FLOAT, FLOAT)
for _op in _INT_COMPARISON:
    _OPERATOR_TYPES[id(_op)] = (INT, BOOL)
for _op in _FLOAT_COMPARISON:
    _OPERATOR_TYPES[id(_op)] = (FLOAT, BOOL)
_OPERATOR_TYPES[id(ast.BinOp.CONCAT)] = (STRING, STRING)


def _operand_hint(op: ast.BinOp, operand: Type, expected: Type) -> str:
    operand = resolve(operand)
    if expected is INT and operand is FLOAT and op.value in _FLOAT_TWIN:
        return f"`{op.value}` works on int; use `{_FLOAT_TWIN[op.value]}` for float"
    if expected is FLOAT and operand is INT:
        return f"`{op.value}` works on float; write an int literal with a point (1.0)"
    if op is ast.BinOp.CONCAT:
        return "`++` joins two strings; convert other values with to_string"
    return f"the operands of `{op.value}` must be {show_message_type(expected)}"


@rule(ast.Prim2)
def infer_prim2(ck: Checker, e: ast.Prim2) -> Type:
    left = ck.rules[type(e.left)](ck, e.left)
    right = ck.rules[type(e.right)](ck, e.right)
    op = e.op
    types = _OPERATOR_TYPES.get(id(op))
    if types is not None:
        operand, result = types
        for side in (left, right):
            # fast path: the operand has the type already (itself or through a bound variable)
            if side is operand or (type(side) is TVar and side.link is operand):
                continue
            try:
                unify(side, operand)
            except UnifyError as error:
                raise ck.unify_error(e.span, error,
                                     hint=_operand_hint(op, side, operand)) from None
        return result
    try:
        unify(left, right)
    except UnifyError as error:
        raise ck.unify_error(e.span, error, left, right,
                             hint=f"both sides of `{op.value}` must have the same type") from None
    check_equality(ck, left, e.span)
    return BOOL


@rule(ast.Prim1)
def infer_prim1(ck: Checker, e: ast.Prim1) -> Type:
    operand = ck.rules[type(e.operand)](ck, e.operand)
    expected = INT if e.op is ast.UnOp.NEG_INT else FLOAT
    try:
        unify(operand, expected)
    except UnifyError as error:
        hint = ("`-` negates an int; use `-.` for a float" if expected is INT
                else "`-.` negates a float; use `-` for an int")
        raise ck.unify_error(e.span, error, hint=hint) from None
    return expected


# --------------------------------------------------------------------------- functions


@rule(ast.Lambda)
def infer_lambda(ck: Checker, e: ast.Lambda) -> Type:
    ck.level += 1
    level = ck.level
    env = ck.env
    mark = len(env.trail)  # env.mark(), without the call
    params: list[TVar] = []
    spans = e.param_spans
    for index, name in enumerate(e.params):
        var = TVar(level)
        params.append(var)
        env.bind(name, var)
        if index < len(spans):
            ck.binders.append((spans[index], var))
    body = ck.rules[type(e.body)](ck, e.body)
    env.undo(mark)
    for var in params:
        if var.link is not None:
            reopen_parameter(var, level)
    ck.level -= 1
    return TFun(tuple(params), body)


@rule(ast.App)
def infer_app(ck: Checker, e: ast.App) -> Type:
    callee = e.fn
    if type(callee) is ast.Var:  # infer_var inlined for the commonest callee
        function = ck.env.values.get(callee.name)
        if type(function) is Scheme:
            function = function.instantiate(ck.level)
        elif function is None or (type(function) is TVar
                                  and function.level == COPY_AT_USE):
            function = infer_var(ck, callee)  # (reports an unknown variable)
    else:
        function = ck.rules[type(callee)](ck, callee)
    args: list[Type] = []  # (a loop, not a list comprehension: that costs a call)
    for argument in e.args:
        args.append(ck.rules[type(argument)](ck, argument))
    known = resolve(function) if type(function) is TVar and function.link is not None else function
    try:
        if type(known) is TFun and len(known.params) == len(args):
            # Same as unifying with (args -> 'r), without building that type.
            params = known.params
            for index, arg in enumerate(args):  # (not zip(strict=True): cheaper, same length)
                param = params[index]
                if param is not arg:
                    unify(param, arg)
            return known.result
        result = TVar(ck.level)
        unify(function, TFun(tuple(args), result))
    except UnifyError as error:
        raise ck.unify_error(e.span, error, hint=_call_hint(function, tuple(args))) from None
    return result


def _call_hint(function: Type, args: tuple[Type, ...]) -> str:
    resolved = resolve(function)
    namer = Namer()
    if isinstance(resolved, TFun):
        count = len(resolved.params)
        if count != len(args):
            return (f"this function takes {count} argument{'s' if count != 1 else ''} "
                    f"but is given {len(args)}")
        function_text = show_message_type(resolved, namer)
        shown = ", ".join(show_message_type(a, namer) for a in args)
        return f"this function has type {function_text} but is applied to ({shown})"
    return f"this expression has type {show_message_type(resolved, namer)}; it is not a function"


# --------------------------------------------------------------------------- control flow


def _condition(ck: Checker, cond: ast.Expr, span: Span, keyword: str) -> None:
    condition = ck.rules[type(cond)](ck, cond)
    if condition is BOOL:
        return
    try:
        unify(condition, BOOL)
    except UnifyError as error:
        raise ck.unify_error(span, error,
                             hint=f"the condition of `{keyword}` must be a bool") from None


@rule(ast.If)
def infer_if(ck: Checker, e: ast.If) -> Type:
    # An `else if` chain is walked with a loop (it is flat to the reader, however long):
    # conditions and `then` branches in order, the last `else`, then the joins from the
    # innermost `if` outwards -- the order in which recursion would do them.
    chain: list[tuple[ast.If, Type]] = []
    node: ast.Expr = e
    while type(node) is ast.If:
        _condition(ck, node.cond, node.span, "if")
        chain.append((node, ck.rules[type(node.then_branch)](ck, node.then_branch)))
        node = node.else_branch
    result = ck.rules[type(node)](ck, node)
    for link, then_type in reversed(chain):
        try:
            result = join(then_type, result)
        except UnifyError as error:
            raise ck.unify_error(link.span, error, hint=join_hint(
                error, [link.then_branch, link.else_branch],
                "both branches of `if` must have the same type")) from None
    return result


@rule(ast.While)
def infer_while(ck: Checker, e: ast.While) -> Type:
    _condition(ck, e.cond, e.span, "while")
    ck.rules[type(e.body)](ck, e.body)
    return UNIT


@rule(ast.Sequence)
def infer_sequence(ck: Checker, e: ast.Sequence) -> Type:
    current: ast.Expr = e
    while type(current) is ast.Sequence:
        ck.rules[type(current.first)](ck, current.first)
        current = current.second
    return ck.rules[type(current)](ck, current)


# --------------------------------------------------------------------------- variants, arrays, refs


@rule(ast.Variant)
def infer_variant(ck: Checker, e: ast.Variant) -> Type:
    from chatml.typecheck.types import Row

    payload = TTuple(tuple([ck.rules[type(a)](ck, a) for a in e.args]))
    return TVariant(Row({e.tag: payload}, TVar(ck.level)))


@rule(ast.Array)
def infer_array(ck: Checker, e: ast.Array) -> Type:
    elements = e.elements
    if len(elements) == 1:
        # one element: its type is the element type, with no unification (a fresh variable
        # bound to it would need an occurs check walking the whole type: quadratic for
        # arrays nested thousands deep)
        item = elements[0]
        return TArray(ck.rules[type(item)](ck, item))
    element = TVar(ck.level)
    open_variant = OpenVariant() if len(elements) > FEW else None
    for item in elements:
        item_type = ck.rules[type(item)](ck, item)
        if element.link is item_type:  # fast path: the elements so far had this very type
            continue
        if element.link is None:  # the first element: ``element`` is in nothing yet
            bind_fresh(element, item_type)
            continue
        try:
            if open_variant is not None and type(item) is ast.Variant and \
                    open_variant.current(element):
                # a tag literal's fresh one-tag row extends the elements' row in O(1)
                payload = item_type.row.fields[item.tag]  # type: ignore[attr-defined]  # item_type is a TVariant here
                open_variant.add(item.tag, payload, ck.level)
                continue
            unify(item_type, element)
        except UnifyError as error:
            raise ck.unify_error(e.span, error,
                                 hint="all elements of an array must have the same type") from None
    return TArray(element)


def _index(ck: Checker, index: ast.Expr, span: Span) -> None:
    index_type = ck.rules[type(index)](ck, index)
    try:
        unify(index_type, INT)
    except UnifyError as error:
        raise ck.unify_error(span, error, hint="array indexes are ints") from None


@rule(ast.ArrayGet)
def infer_array_get(ck: Checker, e: ast.ArrayGet) -> Type:
    _index(ck, e.index, e.span)
    element = TVar(ck.level)
    array = ck.rules[type(e.array)](ck, e.array)
    try:
        unify(array, TArray(element))
    except UnifyError as error:
        raise ck.unify_error(e.span, error, hint="only arrays can be indexed") from None
    return element


@rule(ast.ArraySet)
def infer_array_set(ck: Checker, e: ast.ArraySet) -> Type:
    _index(ck, e.index, e.span)
    value = ck.rules[type(e.value)](ck, e.value)
    array = ck.rules[type(e.array)](ck, e.array)
    try:
        unify(array, TArray(value))
    except UnifyError as error:
        raise ck.unify_error(e.span, error, array, TArray(value)) from None
    return UNIT


@rule(ast.Ref)
def infer_ref(ck: Checker, e: ast.Ref) -> Type:
    return TRef(ck.rules[type(e.value)](ck, e.value))


@rule(ast.Deref)
def infer_deref(ck: Checker, e: ast.Deref) -> Type:
    content = TVar(ck.level)
    target = ck.rules[type(e.ref)](ck, e.ref)
    try:
        unify(TRef(content), target)
    except UnifyError as error:
        raise ck.unify_error(e.span, error, hint="`!` reads a ref") from None
    return content


@rule(ast.SetRef)
def infer_set_ref(ck: Checker, e: ast.SetRef) -> Type:
    target = ck.rules[type(e.ref)](ck, e.ref)
    value = ck.rules[type(e.value)](ck, e.value)
    try:
        unify(TRef(TVar(ck.level)), target)
        unify(target, TRef(value))
    except UnifyError as error:
        raise ck.unify_error(e.span, error, target, TRef(value)) from None
    return UNIT
