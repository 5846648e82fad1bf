"""The integer-range analysis: which int results provably stay in the 63-bit range.

The translator (:mod:`chatml.vm.translate`) asks this module what is known
about the int values of a frame, to leave out range checks that cannot fail.
It works on :class:`Operand` s -- what the simulated stack holds: a tracked
variable (a local of the frame or a temporary, :data:`Var`), an int literal,
an int comparison (:class:`Test`) or any other expression -- never on the
text of generated code.

Every ChatML int is within [:data:`MIN_INT`, :data:`MAX_INT`] (results are
checked, literals and host values are in range), and the operands of
``ADD``/``SUB``/``MUL``/``DIV``/``NEG`` and of ``LT``/``GT``/``LE``/``GE`` are
ints (the bytecode's typing contract). Intervals come from int literals, from
arithmetic on known intervals (:func:`add`, :func:`sub`, :func:`mul`,
:func:`neg`, :func:`divide`), from the condition of the enclosing ``IF``/
``ELSE`` branch or loop test (``i < n`` gives ``i <= max_int - 1``,
:meth:`Facts.learn`), and from loop counters (a variable that a loop only
ever sets to itself plus a non-negative constant keeps its lower bound,
:func:`loop_steps`). Only the frame's own variables are tracked; an
assignment replaces a variable's interval, and the translator drops the
intervals of a block's assignments where the block ends.
"""

from __future__ import annotations

from typing import Any

from chatml.bytecode.code import CodeObject
from chatml.bytecode.opcodes import Op

MIN_INT = -(1 << 62)
MAX_INT = (1 << 62) - 1
Interval = tuple[int, int]
ANY: Interval = (MIN_INT, MAX_INT)
"""The interval of an int nothing is known about (every ChatML int is in range)."""

Var = tuple[int, int]
"""A tracked variable: ``(code index, slot)`` for a local, ``(-1, n)`` for temporary ``n``."""

NEGATED = {Op.LT: Op.GE, Op.GE: Op.LT, Op.GT: Op.LE, Op.LE: Op.GT}
INT_COMPARE = frozenset(NEGATED)


class Test:
    """An int comparison ``left op right`` (the condition of a branch or loop test)."""

    __slots__ = ("op", "left", "right")

    def __init__(self, op: Op, left: Operand, right: Operand) -> None:
        self.op = op
        self.left = left
        self.right = right


class Operand:
    """A value on the translator's simulated stack.

    ``text`` is the Python expression that computes it (``str(operand)``);
    ``var`` the tracked variable it is, ``value`` the int literal it is,
    ``test`` the int comparison it is; ``reads`` the locals it reads (a
    pending read is evaluated before one of them is overwritten);
    ``deferred`` when it is an expression evaluated where it is used (not a
    variable, temporary or literal), and ``interval`` the interval of a
    deferred int expression (its value never changes: its reads are settled
    before they are overwritten).
    """

    __slots__ = ("text", "var", "value", "test", "reads", "deferred", "interval")

    def __init__(self, text: str, *, var: Var | None = None, value: int | None = None,
                 test: Test | None = None, reads: frozenset[Var] = frozenset(),
                 deferred: bool = False, interval: Interval | None = None) -> None:
        self.text = text
        self.var = var
        self.value = value
        self.test = test
        self.reads = reads
        self.deferred = deferred
        self.interval = interval

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Operand({self.text!r})"


def combined_reads(*operands: Operand) -> frozenset[Var]:
    """The locals an expression over ``operands`` reads."""
    reads: frozenset[Var] = frozenset()
    for operand in operands:
        reads |= operand.reads
    return reads


# ---------------------------------------------------------------------- interval arithmetic


def add(left: Interval, right: Interval) -> Interval:
    return left[0] + right[0], left[1] + right[1]


def sub(left: Interval, right: Interval) -> Interval:
    return left[0] - right[1], left[1] - right[0]


def mul(left: Interval, right: Interval) -> Interval:
    products = (left[0] * right[0], left[0] * right[1], left[1] * right[0], left[1] * right[1])
    return min(products), max(products)


def neg(operand: Interval) -> Interval:
    return -operand[1], -operand[0]


def truncated_division(value: int, divisor: int) -> int:
    """``value / divisor`` rounded toward zero (ChatML's ``/``)."""
    quotient = abs(value) // abs(divisor)
    return quotient if (value >= 0) == (divisor > 0) else -quotient


def divide(left: Interval, right: Interval) -> Interval:
    """The quotients of ``left / right`` for a positive divisor interval."""
    (llo, lhi), (rlo, rhi) = left, right
    return (min(truncated_division(llo, rlo), truncated_division(llo, rhi)),
            max(truncated_division(lhi, rlo), truncated_division(lhi, rhi)))


def in_range(interval: Interval) -> bool:
    return interval[0] >= MIN_INT and interval[1] <= MAX_INT


def clamp(interval: Interval) -> Interval:
    """What a range-checked result is known to be afterwards."""
    return max(interval[0], MIN_INT), min(interval[1], MAX_INT)


def narrow(op: Op, left: Interval, right: Interval) -> tuple[Interval, Interval]:
    """The intervals of ``left`` and ``right`` where ``left op right`` holds."""
    (llo, lhi), (rlo, rhi) = left, right
    if op is Op.LT:
        return (llo, min(lhi, rhi - 1)), (max(rlo, llo + 1), rhi)
    if op is Op.LE:
        return (llo, min(lhi, rhi)), (max(rlo, llo), rhi)
    if op is Op.GT:
        return (max(llo, rlo + 1), lhi), (rlo, min(rhi, lhi - 1))
    return (max(llo, rlo), lhi), (rlo, min(rhi, lhi))  # GE


# ---------------------------------------------------------------------- what a frame knows


class Facts:
    """The known intervals of a frame's int variables at the current point."""

    __slots__ = ("enabled", "frame", "known")

    def __init__(self, enabled: bool, frame: int) -> None:
        self.enabled = enabled
        """False: nothing is ever known (every result is checked; the reference mode)."""
        self.frame = frame
        self.known: dict[Var, Interval] = {}

    def of(self, operand: Operand) -> Interval:
        """The known interval of the int ``operand``."""
        if not self.enabled:
            return ANY
        if operand.interval is not None:
            return operand.interval
        if operand.var is not None:
            known = self.known.get(operand.var)
            if known is not None:
                return known
        value = operand.value
        if value is not None and MIN_INT <= value <= MAX_INT:
            return value, value
        return ANY

    def is_known(self, operand: Operand) -> bool:
        """An int with a known interval (a tracked variable or a deferred int expression)."""
        return operand.interval is not None or (operand.var is not None
                                                 and operand.var in self.known)

    def set(self, var: Var, interval: Interval, is_int: bool = False) -> None:
        """``var`` now holds a value of ``interval`` (``ANY``: nothing known, unless
        ``is_int``: an int, of any value)."""
        if interval == ANY and not is_int:
            self.known.pop(var, None)
        else:
            self.known[var] = interval

    def own(self, var: Var | None) -> bool:
        """A variable of this frame (a local of its code object or a temporary)."""
        return var is not None and var[0] in (self.frame, -1)

    def learn(self, test: Test | None, holds: bool) -> None:
        """Narrow the intervals of the variables of an int comparison known to be ``holds``."""
        if test is None:
            return
        op = test.op if holds else NEGATED[test.op]
        narrowed = narrow(op, self.of(test.left), self.of(test.right))
        for operand, (lo, hi) in zip((test.left, test.right), narrowed, strict=True):
            if lo <= hi and self.own(operand.var):
                assert operand.var is not None
                self.known[operand.var] = (lo, hi)

    def loop_head(self, var: Var, steps: list[int | None]) -> Interval:
        """The interval of ``var`` true at every iteration of a loop whose assignments of
        it add ``steps`` to its own value (``None``: anything else)."""
        lo, hi = self.known.get(var, ANY) if self.enabled else ANY
        if any(step is None or step < 0 for step in steps):
            lo = MIN_INT
        if any(step is None or step > 0 for step in steps):
            hi = MAX_INT
        return lo, hi


# ---------------------------------------------------------------------- loop counters


def pattern_slots(pattern: Any) -> list[int]:
    """The local slots a ``MATCH_ARM`` pattern binds."""
    slots: list[int] = []
    pending = [pattern]
    while pending:
        item = pending.pop()
        if isinstance(item, tuple):
            if len(item) == 2 and item[0] == "var" and isinstance(item[1], int):
                slots.append(item[1])
            else:
                pending.extend(item)
    return slots


def loop_steps(code: CodeObject, consts: tuple[object, ...], start: int
               ) -> dict[int, list[int | None]]:
    """Local slots assigned in the loop whose ``LOOP`` is at ``start``: slot -> what each
    assignment adds to the slot's own value (``None``: anything else)."""
    instructions = code.instructions
    stores: dict[int, list[int | None]] = {}
    depth = 0
    for pc in range(start + 1, len(instructions)):
        op, a, _ = instructions[pc]
        if op == Op.LOOP:
            depth += 1
        elif op == Op.END_LOOP:
            if depth == 0:
                break
            depth -= 1
        elif op == Op.STORE_LOCAL:
            stores.setdefault(a, []).append(_increment(code, consts, pc, a))
        elif op == Op.MATCH_ARM and 0 <= a < len(consts):
            for slot in pattern_slots(consts[a]):
                stores.setdefault(slot, []).append(None)
    return stores


def _increment(code: CodeObject, consts: tuple[object, ...], pc: int, slot: int) -> int | None:
    """``k`` when the instructions before ``STORE_LOCAL slot`` at ``pc`` compute
    ``slot + k`` or ``slot - (-k)`` for an int constant ``k``."""
    if pc < 3:
        return None
    (first, a, _), (second, b, _), (op, _, _) = code.instructions[pc - 3:pc]
    if op not in (Op.ADD, Op.SUB):
        return None
    if first == Op.LOAD_LOCAL and a == slot and second == Op.CONST:
        k = b
    elif first == Op.CONST and second == Op.LOAD_LOCAL and b == slot and op == Op.ADD:
        k = a
    else:
        return None
    value = consts[k] if 0 <= k < len(consts) else None
    if type(value) is not int:
        return None
    return value if op == Op.ADD else -value
