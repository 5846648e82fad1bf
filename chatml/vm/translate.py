"""Bytecode to Python source: how the VM executes (translated once, at load time).

Each code object becomes one Python ``def`` named ``_c<index>``, nested inside
the function that creates it, so ChatML captures become Python closure cells.
The operand stack is simulated at translation time: every instruction's
result is an *atom* (a literal, a variable or a fresh temporary), so
evaluation order is exactly the bytecode's. Structured blocks become
``if``/``elif``/``else`` and ``while True`` loops; a code object with
``SELF_TAIL_CALL`` runs inside ``while True`` (the tail call reassigns the
parameters and ``continue``s); ``TAIL_CALL`` returns a
:class:`~chatml.calls.TailCall` that ``CALL`` sites and ``apply`` bounce
(so the Python stack stays constant); ``CALL_RAW`` is a plain Python call.

Semantics kept here: steps are charged at every function entry / loop
iteration (a ticket popped from the meter: ``try: _tick()`` / ``except
IndexError: _refill()``, see :class:`chatml.limits.Meter`), allocations at
their creation sites (``chatml.limits.COST``), integer results are
range-checked (``integer overflow``), ``/`` truncates, array indexes are
bounds-checked (negative ones explicitly; Python raises ``IndexError`` for
the rest), mutations of arrays and refs are journalled when the run is
transactional.

A range check is left out only where it cannot fail: the translator tracks
the interval of int variables and temporaries (from literals, arithmetic,
the conditions of enclosing branches and loop tests, and loop counters; see
``_Body.interval``), so ``i := !i + 1`` under ``while !i < n`` or
``n - 1`` in the ``else`` of ``if n < 2`` needs no check, and a result that
can leave the range on one side only is checked on that side.
``translate(module, range_analysis=False)`` checks everything (the reference
the analysis is tested against).

A closure created inside a loop (a ``while`` or a self-tail-call loop)
snapshots the loop's variables through a factory function, since each
iteration binds fresh ChatML variables while Python would reuse the cell.

Atoms are deferred reads. Most locals are written once (parameters of a self
loop are reassigned only by the tail call itself); before a slot is written
again (an unboxed local ref), the pending atoms that read it are evaluated
into temporaries, so a later write never changes what was read.

Every generated line maps back to the instruction it came from
(:attr:`Translation.line_map`), which is how runtime errors get ChatML
positions. Malformed bytecode raises
:class:`~chatml.bytecode.serialize.BytecodeFormatError`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import attrs

from chatml.bytecode.code import FREE, LOCAL, CompiledModule
from chatml.bytecode.opcodes import Op
from chatml.bytecode.serialize import BytecodeFormatError
from chatml.limits import COST, WORD
from chatml.vm.charges import INT_TEXT, MAX_TEXT, Batch, Text, replay_lines
from chatml.vm.intrinsics import Intrinsic

#: The deepest indentation CPython's tokenizer accepts (100 levels, 0-based).
MAX_INDENT = 99


class TooDeepToTranslate(Exception):
    """The translation would nest Python blocks deeper than CPython accepts.

    Raised as soon as a line would go past :data:`MAX_INDENT`, so a deeply
    nested program costs linear work to refuse, not a quadratic source text
    that ``compile`` rejects afterwards. ``where`` is the ``(code index, pc)``
    of the instruction being translated.
    """

    def __init__(self, where: tuple[int, int]) -> None:
        super().__init__(f"nested too deeply at code {where[0]}, instruction {where[1]}")
        self.where = where


_ARITH = {Op.ADD: "+", Op.SUB: "-", Op.MUL: "*"}
_FLOAT = {Op.FADD: "+", Op.FSUB: "-", Op.FMUL: "*", Op.FDIV: "/"}
_SMALL = 1 << 62

_COMPARE = {Op.LT: "<", Op.GT: ">", Op.LE: "<=", Op.GE: ">=", Op.FLT: "<", Op.FGT: ">",
            Op.FLE: "<=", Op.FGE: ">=", Op.EQ_PRIM: "==", Op.NE_PRIM: "!="}
_MIN_INT = -(1 << 62)
_MAX_INT = (1 << 62) - 1
_ANY = (_MIN_INT, _MAX_INT)
"""The interval of an int nothing is known about (every ChatML int is in range)."""
_MIN_TEXT = "-4611686018427387904"
_MAX_TEXT = "4611686018427387903"
# The first comparison of each check is against a CPython single-digit int, which the
# interpreter specialises; only values beyond 2**30 pay for the 63-bit comparison (one
# more: a two-sided check picks the side by its first comparison).
_SMALL_TEXT = "1073741823"
_RANGE = (f"({{t}} > {_MAX_TEXT} if {{t}} > {_SMALL_TEXT} "
          f"else {{t}} < -{_SMALL_TEXT} and {{t}} < {_MIN_TEXT})")
_ABOVE = f"{{t}} > {_SMALL_TEXT} and {{t}} > {_MAX_TEXT}"
_BELOW = f"{{t}} < -{_SMALL_TEXT} and {{t}} < {_MIN_TEXT}"
"""Conditions under which the int ``t`` has left the range (on both sides, above, below)."""

_BATCHED = frozenset({
    Op.CONST, Op.LOAD_LOCAL, Op.LOAD_FREE, Op.LOAD_GLOBAL, Op.STORE_LOCAL, Op.POP,
    Op.ADD, Op.SUB, Op.MUL, Op.NEG, Op.FADD, Op.FSUB, Op.FMUL, Op.FNEG, Op.CONCAT,
    Op.LT, Op.GT, Op.LE, Op.GE, Op.FLT, Op.FGT, Op.FLE, Op.FGE, Op.EQ_PRIM, Op.NE_PRIM,
    Op.MAKE_RECORD, Op.MAKE_VARIANT, Op.MAKE_ARRAY, Op.MAKE_REF,
})
"""Instructions that keep a batch of memory charges open (see :mod:`chatml.vm.charges`):
under the bytecode's typing contract they cannot fail (an int result's range check
replays the batch before it raises) and nothing outside the frame sees them. Every
other instruction charges the batch first (``DIV`` and intrinsic calls: unless
they are known to be infallible, see :meth:`_Body.keeps_batch`)."""


def _int_literal(atom: str) -> int | None:
    text = atom[1:] if atom.startswith("-") else atom
    return int(atom) if text.isdigit() else None


def _truncated_division(value: int, divisor: int) -> int:
    """``value / divisor`` rounded toward zero (ChatML's ``/``)."""
    quotient = abs(value) // abs(divisor)
    return quotient if (value >= 0) == (divisor > 0) else -quotient


_PLAIN = re.compile(r"-?\w+")
"""An atom that is a variable, a temporary or an int literal (no nested expression)."""

_NEGATED = {Op.LT: Op.GE, Op.GE: Op.LT, Op.GT: Op.LE, Op.LE: Op.GT}
_INT_COMPARE = frozenset(_NEGATED)


@attrs.frozen
class Translation:
    source: str
    line_map: tuple[tuple[int, int], ...]
    """For generated line ``n`` (1-based), ``line_map[n - 1]`` = (code index, instruction index)."""
    constants: dict[str, Any]
    """Namespace entries the source refers to (non-literal constants, shared variants)."""


class _Block:
    __slots__ = ("kind", "depth", "indent", "root", "result", "fell", "has_else",
                 "chain_pending", "bounds", "condition", "stored")

    def __init__(self, kind: str, depth: int, indent: int, root: _Block | None = None) -> None:
        self.kind = kind
        self.depth = depth
        self.indent = indent
        self.root = root or self
        self.result: str | None = None
        self.fell = False
        self.has_else = False
        self.chain_pending = False
        self.bounds: dict[str, tuple[int, int]] = {}
        """The known intervals where the block starts (restored by ``ELSE``)."""
        self.condition: str | None = None
        """The ``IF`` condition atom (its negation holds in the ``ELSE`` branch)."""
        self.stored: set[str] = set()
        """Variables assigned anywhere inside the block (their intervals end with it)."""


def _fail(message: str) -> BytecodeFormatError:
    return BytecodeFormatError(message)


def _stored_globals(module: CompiledModule) -> set[int]:
    """Global slots the top level assigns (a builtin slot among them is not a builtin)."""
    stored: set[int] = set()
    consts = module.consts
    for op, a, _ in module.codes[0].instructions:
        if op == Op.STORE_GLOBAL:
            stored.add(a)
        elif op == Op.MAKE_REC_GLOBAL and 0 <= a < len(consts) and isinstance(consts[a], tuple):
            stored.update(item[1] for item in consts[a]
                          if isinstance(item, tuple) and len(item) == 2)
    return stored


def _pattern_slots(pattern: Any) -> list[int]:
    """The local slots a ``MATCH_ARM`` constant ``(slot, pattern)`` binds (best effort:
    malformed constants are rejected when the arm itself is translated)."""
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


class _Translator:
    def __init__(self, module: CompiledModule, range_analysis: bool,
                 intrinsics: Mapping[int, Intrinsic], batch_charges: bool = True) -> None:
        self.module = module
        self.range_analysis = range_analysis
        self.batch_charges = batch_charges
        stored = _stored_globals(module)
        self.intrinsics = {f"g{slot}": intrinsic for slot, intrinsic in intrinsics.items()
                           if slot not in stored}
        """Callee atoms (builtin globals never reassigned) -> their inline form."""
        self.lines: list[str] = []
        self.line_map: list[tuple[int, int]] = []
        self.constants: dict[str, Any] = {}
        self.literals: dict[int, str] = {}
        self.globals_stored: set[int] = set()
        self.translated: set[int] = set()

    # ------------------------------------------------------------------ naming

    def local(self, code: int, slot: int) -> str:
        if not 0 <= slot < self.module.codes[code].n_locals:
            raise _fail(f"local slot {slot} out of range in code {code}")
        return f"v{code}_{slot}"

    def free(self, code: int, index: int) -> str:
        seen = 0
        while True:
            captures = self.module.codes[code].captures
            parent = self.module.codes[code].parent
            if not 0 <= index < len(captures) or parent < 0:
                raise _fail(f"capture {index} out of range in code {code}")
            kind, source = captures[index]
            if kind == LOCAL:
                return self.local(parent, source)
            code, index = parent, source
            seen += 1
            if seen > len(self.module.codes):
                raise _fail("capture chain does not end")

    def literal(self, k: int) -> str:
        found = self.literals.get(k)
        if found is not None:
            return found
        if not 0 <= k < len(self.module.consts):
            raise _fail(f"constant {k} out of range")
        value = self.module.consts[k]
        if value is None or isinstance(value, (bool, int, str)) or (
                isinstance(value, float) and math.isfinite(value)):
            text = repr(value)
        else:
            text = f"_k{k}"
            self.constants[text] = value
        self.literals[k] = text
        return text

    # ------------------------------------------------------------------ output

    def emit(self, text: str, indent: int, where: tuple[int, int]) -> None:
        if indent > MAX_INDENT:
            raise TooDeepToTranslate(where)
        self.lines.append("    " * indent + text)
        self.line_map.append(where)

    # ------------------------------------------------------------------ code objects

    def translate(self) -> Translation:
        if self.module.codes[0].arity != 0:
            raise _fail("the top-level code takes no parameters")
        self.code(0, 0, in_loop=False)
        return Translation("\n".join(self.lines) + "\n", tuple(self.line_map), self.constants)

    def code(self, index: int, indent: int, in_loop: bool) -> None:
        if index in self.translated:
            raise _fail(f"code {index} is created twice")
        self.translated.add(index)
        code = self.module.codes[index]
        where = (index, 0)
        params = ", ".join(self.local(index, slot) for slot in range(code.arity))
        self.emit(f"def _c{index}({params}):", indent, where)
        body_indent = indent + 1
        global_line = None
        if index == 0:
            global_line = len(self.lines)
            self.emit("pass", body_indent, where)
        if code.self_loop:
            self.emit("while True:", body_indent, where)
            self.count_step(body_indent + 1, where)
            _Body(self, index, body_indent + 1, True).run()
        else:
            if index != 0:
                self.count_step(body_indent, where)
            _Body(self, index, body_indent, in_loop).run()
        if global_line is not None and self.globals_stored:
            names = ", ".join(f"g{g}" for g in sorted(self.globals_stored))
            self.lines[global_line] = "    " * (indent + 1) + f"global {names}"

    def count_step(self, indent: int, where: tuple[int, int]) -> None:
        """Charge one step: a ticket from the meter (:meth:`chatml.limits.Meter.refill`
        when they have run out, which stops the run when the budget has)."""
        self.emit("try: _tick()", indent, where)
        self.emit("except IndexError: _refill()", indent, where)


class _Body:
    """Translates the instructions of one code object."""

    def __init__(self, tr: _Translator, index: int, indent: int, in_loop: bool) -> None:
        self.tr = tr
        self.index = index
        self.code = tr.module.codes[index]
        self.indent = indent
        self.loop_depth = 1 if in_loop else 0
        self.stack: list[str] = []
        self.blocks: list[_Block] = []
        self.terminated = False
        self.temps = 0
        self.pc = 0
        self.bounds: dict[str, tuple[int, int]] = {}
        """Known intervals of int variables and temporaries at this point (see ``interval``)."""
        self.comparisons: dict[str, tuple[Op, str, str]] = {}
        """Int comparison atoms -> (op, left, right), to learn intervals from conditions."""
        self.own_name = re.compile(rf"(v{index}_|t)\d+")
        self.batch = Batch()
        """Memory charges not yet made (see :mod:`chatml.vm.charges`)."""
        self.texts: dict[str, Text] = {}
        """String literals and temporaries of bounded length (never reassigned)."""
        self.ints: set[str] = set()
        """Temporaries holding int results (never reassigned), whatever their interval."""

    def temp(self) -> str:
        self.temps += 1
        return f"t{self.temps}"

    def emit(self, text: str, indent: int | None = None) -> None:
        self.tr.emit(text, self.indent if indent is None else indent, (self.index, self.pc))

    def pop(self, n: int = 1) -> list[str]:
        if n > len(self.stack) or (self.blocks and len(self.stack) - n < self.blocks[-1].depth):
            raise _fail(f"stack underflow at instruction {self.pc} of code {self.index}")
        if n == 0:
            return []
        taken = self.stack[-n:]
        del self.stack[-n:]
        return taken

    def pop1(self) -> str:
        return self.pop(1)[0]

    def settle(self, name: str) -> None:
        """Before ``name`` is overwritten, evaluate every pending atom that reads it."""
        pattern = re.compile(rf"\b{name}\b")
        for position, atom in enumerate(self.stack):
            if pattern.search(atom):
                t = self.temp()
                self.emit(f"{t} = {atom}")
                self.stack[position] = t

    def charge(self, nbytes: int, per_item: int = 0, items: str = "") -> None:
        """Charge ``nbytes + per_item * items`` bytes (rounded up to words).

        One read and one write of the meter: ``_M.memory = _m = _M.memory - n``
        (the frame-local ``_m`` is only this check's scratch).
        """
        rounded = nbytes + WORD - 1
        if not items:
            self.batch.add_words(rounded // WORD, (self.index, self.pc))
            return
        if per_item % WORD == 0:  # (rounded + per_item * n) // WORD, without the shift
            words = per_item // WORD
            amount = f"{rounded // WORD} + {items if words == 1 else f'{words} * {items}'}"
        else:
            scaled = items if per_item == 1 else f"{per_item} * {items}"
            amount = f"({rounded} + {scaled}) >> 3"
        self.batch.add_expression(amount, (self.index, self.pc))
        self.flush()

    def flush(self) -> None:
        """Make the pending charges: one meter update, and when it takes the budget below
        zero, the charges again one by one (each at its own instruction)."""
        if not self.batch:
            return
        total = self.batch.total(self.tr.constants)
        items = self.batch.take()
        if len(items) == 1:
            for line, where in replay_lines(items):
                self.tr.emit(line, self.indent, where)
            return
        self.emit(f"_M.memory = _m = _M.memory - ({total})")
        self.emit("if _m < 0:")
        self.emit(f"_M.memory = _m + ({total})", self.indent + 1)
        for line, where in replay_lines(items):
            self.tr.emit(line, self.indent + 1, where)

    def fail_if(self, condition: str, failure: str) -> None:
        """``if condition: failure``, making the pending charges first on that path (an
        earlier allocation that runs out of memory fails first, as it would unbatched)."""
        if not self.batch:
            self.emit(f"if {condition}: {failure}")
            return
        self.emit(f"if {condition}:")
        for line, where in replay_lines(self.batch.items):
            self.tr.emit(line, self.indent + 1, where)
        self.emit(failure, self.indent + 1)

    def keeps_batch(self, op: Op, a: int) -> bool:
        """Whether the instruction ``op a`` leaves the pending charges pending."""
        if op in _BATCHED:
            return True
        if op is Op.DIV:
            return len(self.stack) >= 2 and self.interval(self.stack[-1])[0] > 0
        if op is Op.CALL or op is Op.CALL_RAW:
            if len(self.stack) <= a:
                return False
            intrinsic = self.tr.intrinsics.get(self.stack[-a - 1])
            return (intrinsic is not None and intrinsic.arity == a
                    and self.typed_intrinsic(intrinsic, self.stack[-a:]) is not None)
        return False

    def known_int(self, atom: str) -> bool:
        """``atom`` is an int (it has a known interval, or is an int literal)."""
        return self.tr.range_analysis and (atom in self.bounds or atom in self.ints
                                           or _int_literal(atom) is not None)

    def typed_intrinsic(self, intrinsic: Intrinsic, args: list[str]) -> str | None:
        """The form of an intrinsic call whose argument type is known: ``"int_text"``
        (``to_string`` of an int), ``"same_text"`` (``to_string`` of a string),
        ``"text_length"`` (the length of a string); ``None`` otherwise."""
        (value,) = args
        if intrinsic.kind == "to_string":
            if self.known_int(value):
                return "int_text"
            return "same_text" if value in self.texts else None
        if intrinsic.kind == "string_length" and value in self.texts:
            return "text_length"
        return None

    def inline(self, intrinsic: Intrinsic, t: str, fn: str, args: list[str]) -> None:
        """``t = fn(*args)`` for the intrinsic builtin ``fn``, inlined."""
        form = self.typed_intrinsic(intrinsic, args)
        (value,) = args
        if form == "int_text":  # at most INT_TEXT code points: charged with the batch
            self.emit(f"{t} = _str({value})")
            self.texts[t] = Text(0, ((t, INT_TEXT),), INT_TEXT)
            self.batch.add_string(t, self.texts[t], (self.index, self.pc))
        elif form == "same_text":  # the string itself: nothing new, nothing charged
            self.emit(f"{t} = {value}")
            self.texts[t] = self.texts[value]
        elif form == "text_length":
            self.emit(f"{t} = len({value})")
            self.assign(t, (0, self.texts[value].bound))
            self.ints.add(t)
        else:
            for extra, line in intrinsic.inline(t, fn, args):
                self.emit(line, self.indent + extra)
            if intrinsic.kind in ("string_length", "array_length"):
                self.assign(t, (0, _MAX_INT))  # the builtins return lengths (or raise)
                self.ints.add(t)

    # ------------------------------------------------------------------ intervals
    #
    # What is known about the int values of this frame, to leave out range
    # checks that cannot fail. Every ChatML int is within [_MIN_INT, _MAX_INT]
    # (results are checked, literals and host values are in range), and the
    # operands of ADD/SUB/MUL/DIV/NEG and of LT/GT/LE/GE are ints (the bytecode's
    # typing contract). Intervals come from int literals, from arithmetic on
    # known intervals, from the condition of the enclosing IF/ELSE branch or
    # loop test (`i < n` gives i <= max_int - 1), and from loop counters (a
    # variable that a loop only ever sets to itself plus a non-negative constant
    # keeps its lower bound). Only this frame's variables and temporaries are
    # tracked; an assignment replaces a variable's interval, and a block's
    # assignments end their intervals where the block ends.

    def interval(self, atom: str) -> tuple[int, int]:
        """The known interval of the int ``atom``."""
        if not self.tr.range_analysis:
            return _ANY
        known = self.bounds.get(atom)
        if known is not None:
            return known
        literal = _int_literal(atom)
        if literal is not None and _MIN_INT <= literal <= _MAX_INT:
            return literal, literal
        return _ANY

    def assign(self, name: str, interval: tuple[int, int], is_int: bool = False) -> None:
        """``name`` now holds a value of ``interval`` (``_ANY``: nothing known, unless
        ``is_int``: an int, of any value)."""
        if interval == _ANY and not is_int:
            self.bounds.pop(name, None)
        else:
            self.bounds[name] = interval
        for block in self.blocks:
            block.stored.add(name)

    def learn(self, condition: str | None, holds: bool) -> None:
        """Narrow the intervals of the variables of an int comparison known to be ``holds``."""
        comparison = self.comparisons.get(condition) if condition is not None else None
        if comparison is None:
            return
        op, left, right = comparison
        if not holds:
            op = _NEGATED[op]
        (llo, lhi), (rlo, rhi) = self.interval(left), self.interval(right)
        if op is Op.LT:
            narrowed = ((llo, min(lhi, rhi - 1)), (max(rlo, llo + 1), rhi))
        elif op is Op.LE:
            narrowed = ((llo, min(lhi, rhi)), (max(rlo, llo), rhi))
        elif op is Op.GT:
            narrowed = ((max(llo, rlo + 1), lhi), (rlo, min(rhi, lhi - 1)))
        else:  # GE
            narrowed = ((max(llo, rlo), lhi), (rlo, min(rhi, lhi)))
        for atom, (lo, hi) in zip((left, right), narrowed, strict=True):
            if lo <= hi and self.own_name.fullmatch(atom):
                self.bounds[atom] = (lo, hi)

    def loop_stores(self) -> dict[int, list[int | None]]:
        """Local slots assigned in the loop starting at ``self.pc``: slot -> what each
        assignment adds to the slot's own value (``None``: anything else)."""
        instructions = self.code.instructions
        consts = self.tr.module.consts
        stores: dict[int, list[int | None]] = {}
        depth = 0
        for pc in range(self.pc + 1, len(instructions)):
            op, a, _ = instructions[pc]
            if op == Op.LOOP:
                depth += 1
            elif op == Op.END_LOOP:
                if depth == 0:
                    break
                depth -= 1
            elif op == Op.STORE_LOCAL:
                stores.setdefault(a, []).append(self.increment(pc, a))
            elif op == Op.MATCH_ARM and 0 <= a < len(consts):
                for slot in _pattern_slots(consts[a]):
                    stores.setdefault(slot, []).append(None)
        return stores

    def increment(self, pc: int, slot: int) -> int | None:
        """``k`` when the instructions before ``STORE_LOCAL slot`` at ``pc`` compute
        ``slot + k`` or ``slot - (-k)`` for an int constant ``k``."""
        if pc < 3:
            return None
        (first, a, _), (second, b, _), (op, _, _) = self.code.instructions[pc - 3:pc]
        if op not in (Op.ADD, Op.SUB):
            return None
        if first == Op.LOAD_LOCAL and a == slot and second == Op.CONST:
            k = b
        elif first == Op.CONST and second == Op.LOAD_LOCAL and b == slot and op == Op.ADD:
            k = a
        else:
            return None
        consts = self.tr.module.consts
        value = consts[k] if 0 <= k < len(consts) else None
        if type(value) is not int:
            return None
        return value if op == Op.ADD else -value

    def enter_loop(self) -> None:
        """Intervals at the head of the loop starting at ``self.pc`` (true at every iteration)."""
        for slot, steps in self.loop_stores().items():
            name = self.tr.local(self.index, slot)
            lo, hi = self.interval(name)
            if any(step is None or step < 0 for step in steps):
                lo = _MIN_INT
            if any(step is None or step > 0 for step in steps):
                hi = _MAX_INT
            self.assign(name, (lo, hi))

    def check_range(self, t: str, lo: int, hi: int) -> None:
        """Emit the range check of the int result ``t`` known to lie in [lo, hi]."""
        if hi > _MAX_INT and lo < _MIN_INT:
            self.fail_if(_RANGE.format(t=t), "_ovf()")
        elif hi > _MAX_INT:
            self.fail_if(_ABOVE.format(t=t), "_ovf()")
        elif lo < _MIN_INT:
            self.fail_if(_BELOW.format(t=t), "_ovf()")
        self.assign(t, (max(lo, _MIN_INT), min(hi, _MAX_INT)))

    def const_arg(self, k: int) -> Any:
        if not 0 <= k < len(self.tr.module.consts):
            raise _fail(f"constant {k} out of range")
        return self.tr.module.consts[k]

    def labels(self, k: int) -> tuple[str, ...]:
        value = self.const_arg(k)
        if not isinstance(value, tuple) or not all(isinstance(v, str) for v in value):
            raise _fail("bad label tuple")
        return value

    # ------------------------------------------------------------------ driver

    def run(self) -> None:
        instructions = self.code.instructions
        count = len(instructions)
        while self.pc < count:
            op, a, b = instructions[self.pc]
            if self.terminated and op not in (Op.ELSE, Op.END):
                raise _fail(f"unreachable instruction {self.pc} in code {self.index}")
            op = Op(op)
            if self.batch and not self.keeps_batch(op, a):
                self.flush()
            self.step(op, a, b)
            if not self.tr.batch_charges and not self.terminated:
                self.flush()
            self.pc += 1
        if self.blocks or not self.terminated:
            raise _fail(f"code {self.index} does not end with a return")

    def step(self, op: Op, a: int, b: int) -> None:  # noqa: C901 - one case per opcode
        stack = self.stack
        if op is Op.CONST:
            atom = self.tr.literal(a)
            value = self.tr.module.consts[a]
            if type(value) is str and len(value) <= MAX_TEXT:
                self.texts[atom] = Text(len(value), (), len(value))
            stack.append(atom)
        elif op is Op.LOAD_LOCAL:
            stack.append(self.tr.local(self.index, a))
        elif op is Op.LOAD_FREE:
            stack.append(self.tr.free(self.index, a))
        elif op is Op.LOAD_GLOBAL:
            stack.append(f"g{a}")
        elif op is Op.STORE_LOCAL:
            name = self.tr.local(self.index, a)
            value = self.pop1()
            self.settle(name)
            self.emit(f"{name} = {value}")
            self.assign(name, self.interval(value), self.known_int(value))
        elif op is Op.STORE_GLOBAL:
            if self.index != 0:
                raise _fail("STORE_GLOBAL outside the top level")
            self.tr.globals_stored.add(a)
            self.emit(f"g{a} = {self.pop1()}")
        elif op is Op.POP:
            self.pop1()
        elif op in _ARITH or op is Op.NEG or op is Op.DIV:
            self.integer(op)
        elif op in _FLOAT and op is not Op.FDIV:
            # pure and cannot fail: kept as an expression, evaluated where it is used
            left, right = self.pop(2)
            stack.append(f"({left} {_FLOAT[op]} {right})")
        elif op is Op.FDIV:
            left, right = self.pop(2)
            t = self.temp()
            self.emit(f"{t} = {left} / {right}")
            stack.append(t)
        elif op is Op.FNEG:
            stack.append(f"(-{self.pop1()})")
        elif op is Op.CONCAT:
            left, right = self.pop(2)
            t = self.temp()
            self.emit(f"{t} = {left} + {right}")
            known = self.texts.get(left), self.texts.get(right)
            if known[0] and known[1] and known[0].bound + known[1].bound <= MAX_TEXT:
                self.texts[t] = known[0] + known[1]
                self.batch.add_string(t, self.texts[t], (self.index, self.pc))
            else:
                self.charge(COST["string"], 1, f"len({t})")
            stack.append(t)
        elif op in _COMPARE:
            left, right = self.pop(2)
            atom = f"({left} {_COMPARE[op]} {right})"
            if op in _INT_COMPARE:
                self.comparisons[atom] = (op, left, right)
            stack.append(atom)
        elif op is Op.EQ or op is Op.NE:
            left, right = self.pop(2)
            t = self.temp()
            negate = "not " if op is Op.NE else ""
            self.emit(f"{t} = {negate}_eq({left}, {right})")
            stack.append(t)
        elif op is Op.MAKE_RECORD:
            labels = self.labels(a)
            values = self.pop(len(labels))
            t = self.temp()
            items = ", ".join(f"{label!r}: {v}" for label, v in zip(labels, values, strict=True))
            self.emit(f"{t} = {{{items}}}")
            self.charge(COST["record"] + COST["field"] * len(labels))
            stack.append(t)
        elif op is Op.EXTEND:
            labels = self.labels(a)
            values = self.pop(len(labels))
            base = self.pop1()
            t = self.temp()
            items = "".join(f", {label!r}: {v}" for label, v in zip(labels, values, strict=True))
            self.emit(f"{t} = {{**{base}{items}}}")
            self.charge(COST["record"], COST["field"], f"len({t})")
            stack.append(t)
        elif op is Op.GET_FIELD:
            label = self.const_arg(a)
            if not isinstance(label, str):
                raise _fail("GET_FIELD needs a string constant")
            t = self.temp()
            self.emit(f"{t} = {self.pop1()}[{label!r}]")
            stack.append(t)
        elif op is Op.MAKE_VARIANT:
            tag = self.const_arg(a)
            if not isinstance(tag, str):
                raise _fail("MAKE_VARIANT needs a string tag")
            if b == 0:
                name = f"_nv{a}"
                self.tr.constants[name] = ("variant", tag)
                stack.append(name)
            else:
                values = self.pop(b)
                t = self.temp()
                self.emit(f"{t} = _V({tag!r}, ({', '.join(values)},))")
                self.charge(COST["variant"] + COST["slot"] * b)
                stack.append(t)
        elif op is Op.MAKE_ARRAY:
            values = self.pop(a)
            t = self.temp()
            self.emit(f"{t} = [{', '.join(values)}]")
            self.charge(COST["array"] + COST["slot"] * a)
            stack.append(t)
        elif op is Op.ARRAY_GET:
            array, index = self.pop(2)
            t = self.temp()
            if index.isdigit() or self.interval(index)[0] >= 0:
                self.emit(f"{t} = {array}[{index}]")
            else:
                self.emit(f"{t} = {array}[{index}] if {index} >= 0 else _oob()")
            stack.append(t)
        elif op is Op.ARRAY_SET:
            array, index, value = self.pop(3)
            if not index.isdigit() and self.interval(index)[0] < 0:
                self.emit(f"if {index} < 0: _oob()")
            self.emit(f"if _M.journal is not None: _jr({array}, {index})")
            self.emit(f"{array}[{index}] = {value}")
            stack.append("None")
        elif op is Op.MAKE_REF:
            t = self.temp()
            self.emit(f"{t} = _Ref({self.pop1()})")
            self.charge(COST["ref"])
            stack.append(t)
        elif op is Op.DEREF:
            t = self.temp()
            self.emit(f"{t} = {self.pop1()}.value")
            stack.append(t)
        elif op is Op.SET_REF:
            ref, value = self.pop(2)
            self.emit(f"if _M.journal is not None: _jref({ref})")
            self.emit(f"{ref}.value = {value}")
            stack.append("None")
        elif op is Op.MAKE_CLOSURE:
            stack.append(self.closures([(a, None)]))
        elif op is Op.MAKE_REC:
            group = self.group(a)
            self.closures(group)
        elif op is Op.MAKE_REC_GLOBAL:
            if self.index != 0:
                raise _fail("MAKE_REC_GLOBAL outside the top level")
            group = self.group(a)
            for _, slot in group:
                if not 0 <= slot < len(self.tr.module.global_names):
                    raise _fail("global slot out of range")
            self.closures(group, global_targets=True)
        elif op in (Op.CALL, Op.CALL_RAW):
            args = self.pop(a)
            fn = self.pop1()
            t = self.temp()
            intrinsic = self.tr.intrinsics.get(fn)
            if intrinsic is not None and intrinsic.arity == a:
                self.inline(intrinsic, t, fn, args)
                stack.append(t)  # a builtin: it never returns a tail call
                return
            self.emit(f"{t} = {fn}({', '.join(args)})")
            if op is Op.CALL:
                self.emit(f"while type({t}) is _TC: {t} = {t}.fn(*{t}.args)")
            stack.append(t)
        elif op is Op.TAIL_CALL:
            args = self.pop(a)
            fn = self.pop1()
            self.emit(f"return _TC({fn}, ({''.join(arg + ', ' for arg in args)}))")
            self.terminated = True
        elif op is Op.SELF_TAIL_CALL:
            if not self.code.self_loop or a != self.code.arity or any(
                    block.kind == "loop" for block in self.blocks):
                raise _fail("SELF_TAIL_CALL outside a self-looping function")
            args = self.pop(a)
            if args:
                params = ", ".join(self.tr.local(self.index, s) for s in range(a))
                self.emit(f"{params} = {', '.join(args)}")
            self.emit("continue")
            self.terminated = True
        elif op is Op.RETURN:
            self.emit(f"return {self.pop1()}")
            self.terminated = True
        elif op is Op.IF:
            condition = self.pop1()
            self.emit(f"if {condition}:")
            block = _Block("if", len(stack), self.indent)
            block.bounds = dict(self.bounds)
            block.condition = condition
            self.blocks.append(block)
            self.indent += 1
            self.learn(condition, True)
        elif op is Op.MATCH_ARM:
            self.match_arm(a)
        elif op is Op.ELSE:
            self.else_()
        elif op is Op.END:
            self.end()
        elif op is Op.MATCH_FAIL:
            self.emit("_nomatch()")
            self.terminated = True
        elif op is Op.LOOP:
            self.enter_loop()
            block = _Block("loop", len(stack), self.indent)
            block.bounds = dict(self.bounds)
            self.emit("while True:")
            block.indent = self.indent
            self.blocks.append(block)
            self.indent += 1
            self.loop_depth += 1
        elif op is Op.LOOP_TEST:
            if not self.blocks or self.blocks[-1].kind != "loop" or self.blocks[-1].has_else:
                raise _fail("LOOP_TEST outside a loop, or twice in one")
            self.blocks[-1].has_else = True  # a loop block records its (single) test here
            condition = self.pop1()
            self.emit(f"if not {condition}: break")
            self.learn(condition, True)
            self.tr.count_step(self.indent, (self.index, self.pc))
        elif op is Op.END_LOOP:
            if not self.blocks or self.blocks[-1].kind != "loop":
                raise _fail("END_LOOP without LOOP")
            block = self.blocks.pop()
            if len(stack) != block.depth:
                raise _fail("loop body leaves values on the stack")
            if not block.has_else:
                raise _fail("loop without LOOP_TEST (it could never stop or count steps)")
            self.bounds = block.bounds  # the loop head's intervals hold when it exits
            self.leave(block)
            self.indent = block.indent
            self.loop_depth -= 1
            stack.append("None")
        elif op is Op.MODULE_NEW:
            name = self.const_arg(a)
            if not isinstance(name, str):
                raise _fail("MODULE_NEW needs a string name")
            t = self.temp()
            self.emit(f"{t} = _Module({name!r})")
            stack.append(t)
        elif op is Op.MODULE_FILL:
            fill = self.const_arg(a)
            n_globals = len(self.tr.module.global_names)
            if not isinstance(fill, tuple) or not all(
                    isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)
                    and type(item[1]) is int and 0 <= item[1] < n_globals for item in fill):
                raise _fail("bad MODULE_FILL constant")
            module = self.pop1()
            items = ", ".join(f"{name!r}: g{slot}" for name, slot in fill)
            self.emit(f"{module}.update({{{items}}})")
        else:  # pragma: no cover - Op() already rejected unknown opcodes
            raise _fail(f"unexpected opcode {op!r}")

    # ------------------------------------------------------------------ arithmetic

    def integer(self, op: Op) -> None:
        if op is Op.NEG:
            operand = self.pop1()
            lo, hi = self.interval(operand)
            self.arithmetic(f"-{operand}", (operand,), -hi, -lo)
        elif op is Op.DIV:
            left, right = self.pop(2)
            (llo, lhi), (rlo, rhi) = self.interval(left), self.interval(right)
            if rlo > 0:
                # truncation toward zero; |result| <= |left|, so never out of range
                expression = (f"{left} // {right}" if llo >= 0 else
                              f"{left} // {right} if {left} >= 0 else -(-{left} // {right})")
                self.arithmetic(expression, (left, right),
                                min(_truncated_division(llo, rlo), _truncated_division(llo, rhi)),
                                max(_truncated_division(lhi, rlo), _truncated_division(lhi, rhi)))
                return
            t = self.temp()  # may divide by zero: evaluated here, at its own instruction
            self.emit(f"{t} = {left} // {right} if ({left} ^ {right}) >= 0 "
                      f"else -(-{left} // {right})")
            self.ints.add(t)
            if llo == _MIN_INT and rlo <= -1 <= rhi:  # only min_int / -1 leaves the range
                self.fail_if(_RANGE.format(t=t), "_ovf()")
            self.stack.append(t)
        else:
            left, right = self.pop(2)
            (llo, lhi), (rlo, rhi) = self.interval(left), self.interval(right)
            expression = f"{left} {_ARITH[op]} {right}"
            if op is Op.ADD:
                self.arithmetic(expression, (left, right), llo + rlo, lhi + rhi)
            elif op is Op.SUB:
                self.arithmetic(expression, (left, right), llo - rhi, lhi - rlo)
            else:
                products = (llo * rlo, llo * rhi, lhi * rlo, lhi * rhi)
                self.arithmetic(expression, (left, right), min(products), max(products))

    def arithmetic(self, expression: str, operands: tuple[str, ...], lo: int, hi: int) -> None:
        """Push the int ``expression``, whose exact value lies in [lo, hi].

        When it cannot leave the range and its operands are plain variables or
        literals, it stays a (pure, infallible) deferred atom, evaluated where it
        is used; otherwise it goes into a temporary and is range-checked on the
        side(s) it may leave.
        """
        if lo >= _MIN_INT and hi <= _MAX_INT and all(_PLAIN.fullmatch(o) for o in operands):
            atom = f"({expression})"
            self.assign(atom, (lo, hi), True)
        else:
            atom = self.temp()
            self.emit(f"{atom} = {expression}")
            self.check_range(atom, lo, hi)
            self.ints.add(atom)
        self.stack.append(atom)

    # ------------------------------------------------------------------ closures

    def group(self, k: int) -> list[tuple[int, int | None]]:
        value = self.const_arg(k)
        if not isinstance(value, tuple) or not value:
            raise _fail("bad closure group")
        group = []
        for item in value:
            if (not isinstance(item, tuple) or len(item) != 2
                    or not all(isinstance(x, int) and not isinstance(x, bool) for x in item)):
                raise _fail("bad closure group entry")
            group.append((item[0], item[1]))
        return group

    def closures(self, group: list[tuple[int, int | None]], global_targets: bool = False) -> str:
        """Define the closures of ``group`` (code index, target slot or None)."""
        codes = self.tr.module.codes
        for code_index, _ in group:
            if not 0 < code_index < len(codes) or codes[code_index].parent != self.index:
                raise _fail(f"code {code_index} is not a child of code {self.index}")
        targets = []
        for code_index, slot in group:
            if slot is None:
                targets.append(f"_c{code_index}")
            elif global_targets:
                targets.append(f"g{slot}")
                self.tr.globals_stored.add(slot)
            else:
                targets.append(self.tr.local(self.index, slot))
        group_slots = {slot for _, slot in group if slot is not None and not global_targets}
        snapshot: list[str] = []
        if self.loop_depth:
            for code_index, _ in group:
                for kind, source in codes[code_index].captures:
                    if kind == LOCAL and source not in group_slots:
                        name = self.tr.local(self.index, source)
                        if name not in snapshot:
                            snapshot.append(name)
                    elif kind not in (LOCAL, FREE):
                        raise _fail("bad capture kind")
        indent = self.indent
        if snapshot or (self.loop_depth and group_slots):
            factory = f"_mk{group[0][0]}"
            self.emit(f"def {factory}({', '.join(snapshot)}):")
            indent += 1
        else:
            factory = None
        for code_index, _ in group:
            self.tr.code(code_index, indent, self.loop_depth > 0)
        saved_pc_indent = self.indent
        self.indent = indent
        for (code_index, _), target in zip(group, targets, strict=True):
            if target != f"_c{code_index}":
                self.emit(f"{target} = _c{code_index}")
            self.charge(COST["closure"])
        self.flush()  # where the closures are made (inside the factory, if any)
        self.indent = saved_pc_indent
        if factory is not None:
            self.emit(f"return ({''.join(t + ', ' for t in targets)})", indent)
            unpack = "".join(t + ", " for t in targets)
            if global_targets or group[0][1] is not None:
                self.emit(f"{unpack}= {factory}({', '.join(snapshot)})")
                return ""
            t = self.temp()
            self.emit(f"{t}, = {factory}({', '.join(snapshot)})")
            return t
        if global_targets or group[0][1] is not None:
            return ""
        t = self.temp()
        self.emit(f"{t} = _c{group[0][0]}")
        return t

    # ------------------------------------------------------------------ blocks

    def match_arm(self, k: int) -> None:
        value = self.const_arg(k)
        if not isinstance(value, tuple) or len(value) != 2 or not isinstance(value[0], int):
            raise _fail("bad MATCH_ARM constant")
        subject = self.tr.local(self.index, value[0])
        conditions: list[str] = []
        bindings: list[str] = []
        self.pattern(subject, value[1], conditions, bindings, 0)
        test = " and ".join(conditions) or "True"
        parent = self.blocks[-1] if self.blocks else None
        if parent is not None and parent.chain_pending:
            parent.chain_pending = False
            self.emit(f"elif {test}:", parent.indent)
            block = _Block("arm", len(self.stack), parent.indent, parent.root)
        else:
            self.emit(f"if {test}:")
            block = _Block("arm", len(self.stack), self.indent)
        block.bounds = dict(self.bounds)
        self.blocks.append(block)
        self.indent = block.indent + 1
        for binding in bindings:
            self.emit(binding)
            self.assign(binding.split(" = ", 1)[0], _ANY)

    def pattern(self, path: str, pattern: Any, conditions: list[str], bindings: list[str],
                depth: int) -> None:
        if depth > 200 or not isinstance(pattern, tuple) or not pattern:
            raise _fail("bad pattern")
        kind = pattern[0]
        if kind == "_" and len(pattern) == 1:
            return
        if kind == "var" and len(pattern) == 2 and isinstance(pattern[1], int):
            bindings.append(f"{self.tr.local(self.index, pattern[1])} = {path}")
        elif kind == "unit" and len(pattern) == 1:
            conditions.append(f"{path} is None")
        elif kind == "lit" and len(pattern) == 2:
            value = pattern[1]
            if isinstance(value, bool):
                conditions.append(f"{path} is {value}")
            elif isinstance(value, (int, str)) or (isinstance(value, float)
                                                    and math.isfinite(value)):
                conditions.append(f"{path} == {value!r}")
            elif isinstance(value, float):
                name = f"_lit{len(self.tr.constants)}"
                self.tr.constants[name] = value
                conditions.append(f"{path} == {name}")
            else:
                raise _fail("bad literal pattern")
        elif kind == "variant" and len(pattern) == 3 and isinstance(pattern[1], str) \
                and isinstance(pattern[2], tuple):
            args = pattern[2]
            conditions.append(f"{path}.tag == {pattern[1]!r}")
            conditions.append(f"len({path}.args) == {len(args)}" if args else f"not {path}.args")
            for i, sub in enumerate(args):
                self.pattern(f"{path}.args[{i}]", sub, conditions, bindings, depth + 1)
        elif kind == "record" and len(pattern) == 3 and isinstance(pattern[1], tuple):
            fields = pattern[1]
            conditions.append(f"type({path}) is _dict")
            for field in fields:
                if not isinstance(field, tuple) or len(field) != 2 or not isinstance(field[0], str):
                    raise _fail("bad record pattern")
                conditions.append(f"{field[0]!r} in {path}")
            if not pattern[2]:
                conditions.append(f"len({path}) == {len(fields)}")
            for label, sub in fields:
                self.pattern(f"{path}[{label!r}]", sub, conditions, bindings, depth + 1)
        else:
            raise _fail(f"bad pattern {kind!r}")

    def leave(self, block: _Block) -> None:
        """``block`` (popped) has ended: its assignments are assignments of the enclosing one."""
        if self.blocks:
            self.blocks[-1].stored |= block.stored

    def close_branch(self, block: _Block) -> None:
        if self.terminated:
            if len(self.stack) != block.depth:
                raise _fail("a returning branch leaves values on the stack")
            return
        value = self.pop1()
        if len(self.stack) != block.depth:
            raise _fail("branches leave different stack depths")
        root = block.root
        if root.result is None:
            root.result = self.temp()
        if value != root.result:
            self.emit(f"{root.result} = {value}")
        block.fell = True
        root.fell = True

    def else_(self) -> None:
        if not self.blocks or self.blocks[-1].kind == "loop" or self.blocks[-1].has_else:
            raise _fail("ELSE without IF")
        block = self.blocks[-1]
        self.close_branch(block)
        block.has_else = True
        self.terminated = False
        self.bounds = dict(block.bounds)  # the branch not taken: as before the block
        if block.kind == "if":
            self.learn(block.condition, False)
        following = self.code.instructions[self.pc + 1][0] if self.pc + 1 < len(
            self.code.instructions) else None
        if following == Op.MATCH_ARM:
            block.chain_pending = True
            self.indent = block.indent
        else:
            self.emit("else:", block.indent)
            self.indent = block.indent + 1

    def end(self) -> None:
        if not self.blocks or self.blocks[-1].kind == "loop":
            raise _fail("END without IF")
        block = self.blocks.pop()
        if not block.has_else:
            raise _fail("IF block without ELSE")
        self.close_branch(block)
        self.indent = block.indent
        self.bounds = {name: known for name, known in block.bounds.items()
                       if name not in block.stored}
        self.leave(block)
        if block.fell:
            self.terminated = False
            assert block.root.result is not None
            self.stack.append(block.root.result)
        else:
            self.terminated = True


def translate(module: CompiledModule, *, range_analysis: bool = True,
              intrinsics: Mapping[int, Intrinsic] | None = None,
              batch_charges: bool = True) -> Translation:
    """The Python source of ``module`` (raises ``BytecodeFormatError`` on malformed bytecode).

    ``range_analysis=False`` range-checks every integer result and array index
    (the reference the analysis is tested against); the two translations
    behave identically. ``intrinsics`` (global slot -> inline form, see
    :mod:`chatml.vm.intrinsics`) inlines calls of those builtins.
    ``batch_charges=False`` makes every memory charge where its allocation is
    (the reference :mod:`chatml.vm.charges` is tested against).
    """
    if not module.codes:
        raise _fail("no code objects")
    translator = _Translator(module, range_analysis, intrinsics or {}, batch_charges)
    try:
        translation = translator.translate()
    except (TypeError, ValueError, IndexError, KeyError) as error:
        raise _fail(f"malformed bytecode ({type(error).__name__}: {error})") from None
    # A RecursionError propagates: deep nesting is not malformed (see chatml.depth).
    missing = set(range(len(module.codes))) - translator.translated
    if missing:
        raise _fail(f"code objects never created: {sorted(missing)[:5]}")
    return translation
