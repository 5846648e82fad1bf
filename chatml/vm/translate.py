"""Bytecode to Python source: how the VM executes (translated once, at load time).

Each code object becomes one Python ``def`` named ``_c<index>``, nested inside
the function that creates it, so ChatML captures become Python closure cells.
The operand stack is simulated at translation time: every instruction's
result is an *atom* (a literal, a variable or a fresh temporary), so
evaluation order is exactly the bytecode's. Structured blocks become
``if``/``elif``/``else`` and ``while True`` loops; a code object with
``SELF_TAIL_CALL`` runs inside ``while True`` (the tail call reassigns the
parameters and ``continue``s); the members of a ``let rec`` group that
tail-call each other are *merged* (:func:`merge_groups`: each member's
function loops over every member's body, so a tail call to a member sets its
parameters and ``continue``s); any other ``TAIL_CALL`` fills in and returns
the one pending :class:`~chatml.calls.TailCall`
(:data:`chatml.vm.runtime.PENDING_TAIL_CALL`), which ``CALL`` sites and
``apply`` bounce (so the Python stack stays constant); ``CALL_RAW`` is a
plain Python call.

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
the conditions of enclosing branches and loop tests, and loop counters; the
analysis is :mod:`chatml.vm.intervals`, on the operands of the simulated
stack), so ``i := !i + 1`` under ``while !i < n`` or
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
positions. The bytecode is verified first (:mod:`chatml.vm.verify`):
malformed bytecode raises :class:`~chatml.bytecode.serialize.BytecodeFormatError`
before anything is translated, and the translator assumes what the verifier
checked. Memory charges are batched (:mod:`chatml.vm.charges`) and a few
builtins inlined (:mod:`chatml.vm.intrinsics`).

Layout: :class:`_Translator` owns the output and the code objects;
:class:`_Body` translates one code object, one small method per opcode
(:data:`_STEPS`), with the block, closure and pattern helpers beside them.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from chatml.bytecode.code import LOCAL, CompiledModule
from chatml.bytecode.opcodes import Op
from chatml.bytecode.serialize import BytecodeFormatError
from chatml.limits import COST, WORD
from chatml.vm.charges import INT_TEXT, MAX_TEXT, Batch, Text, replay_lines
from chatml.vm.intervals import (
    ANY,
    INT_COMPARE,
    MAX_INT,
    MIN_INT,
    Facts,
    Interval,
    Operand,
    Test,
    Var,
    add,
    clamp,
    combined_reads,
    divide,
    in_range,
    loop_steps,
    mul,
    neg,
    sub,
)
from chatml.vm.intrinsics import HASHTBL_KINDS, Intrinsic, hashtbl_lines
from chatml.vm.table_facts import KEEP, TableFacts
from chatml.vm.verify import Shape, verify

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


_ARITH = {Op.ADD: ("+", add), Op.SUB: ("-", sub), Op.MUL: ("*", mul)}
_FLOAT = {Op.FADD: "+", Op.FSUB: "-", Op.FMUL: "*"}
_COMPARE = {Op.LT: "<", Op.GT: ">", Op.LE: "<=", Op.GE: ">=", Op.FLT: "<", Op.FGT: ">",
            Op.FLE: "<=", Op.FGE: ">=", Op.EQ_PRIM: "==", Op.NE_PRIM: "!="}
_MIN_TEXT = "-4611686018427387904"
_MAX_TEXT = "4611686018427387903"
# The first comparisons of each check are against CPython single-digit ints, which the
# interpreter specialises; only values beyond 2**30 pay for the 63-bit comparisons. A
# two-sided check is one chained comparison (the same instruction count as the conditional
# expression it replaced, under cachegrind; it timed faster in fib, idle, 1.77x -> 1.61x
# CPython in a micro-benchmark of the generated function).
_SMALL_TEXT = "1073741823"
_RANGE = (f"not -{_SMALL_TEXT} <= {{t}} <= {_SMALL_TEXT} "
          f"and ({{t}} > {_MAX_TEXT} or {{t}} < {_MIN_TEXT})")
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

_NONE = Operand("None")
_PATH_TEXT = 60
"""The longest path text a pattern test repeats before it names the value (see
:meth:`_Body.pattern`)."""


@attrs.frozen
class Translation:
    source: str
    line_map: tuple[tuple[int, int], ...]
    """For generated line ``n`` (1-based), ``line_map[n - 1]`` = (code index, instruction index)."""
    constants: dict[str, Any]
    """Namespace entries the source refers to (non-literal constants, shared variants)."""


class _Block:
    __slots__ = ("kind", "depth", "indent", "root", "result", "fell", "has_else",
                 "chain_pending", "bounds", "condition", "stored", "else_line", "end_pc")

    def __init__(self, kind: str, depth: int, indent: int, root: _Block | None = None) -> None:
        self.kind = kind
        self.depth = depth
        self.indent = indent
        self.root = root or self
        self.result: Operand | None = None
        self.fell = False
        self.has_else = False
        self.chain_pending = False
        self.bounds: dict[Var, Interval] = {}
        """The known intervals where the block starts (restored by ``ELSE``)."""
        self.condition: Test | None = None
        """The ``IF`` condition, when an int comparison (its negation holds in ``ELSE``)."""
        self.stored: set[Var] = set()
        """Variables assigned anywhere inside the block (their intervals end with it)."""
        self.else_line = -1
        """The index of the generated ``else:`` line of an ``IF``/``MATCH_ARM`` block."""
        self.end_pc = -1
        """The instruction index of the block's ``END``, once its ``ELSE`` is passed."""


def _stored_globals(module: CompiledModule) -> set[int]:
    """Global slots the top level assigns (a builtin slot among them is not a builtin)."""
    stored: set[int] = set()
    consts = module.consts
    for op, a, _ in module.codes[0].instructions:
        group = consts[a] if op == Op.MAKE_REC_GLOBAL and 0 <= a < len(consts) else None
        if op == Op.STORE_GLOBAL:
            stored.add(a)
        elif isinstance(group, tuple):
            stored.update(item[1] for item in group if isinstance(item, tuple) and len(item) == 2)
    return stored


#: The most members a ``let rec`` group may have to be merged (each member's function holds
#: every member's body, so the generated text grows with the square of the group's size).
MAX_MERGED = 4
#: The most instructions a merged group may hold, all members together.
MAX_MERGED_INSTRUCTIONS = 400


@attrs.frozen
class MergedGroup:
    """A ``let rec`` group whose members tail-call each other without a ``TailCall``:
    each member's Python function loops over all the members' bodies."""

    members: tuple[int, ...]
    """The members' code indexes, in the group's order."""
    targets: dict[str, int]
    """The atom of each member's variable (``g<slot>`` for a global, ``v<parent>_<slot>``
    for a local of the code object making the group) -> the member's code index."""


def merge_groups(module: CompiledModule) -> dict[int, MergedGroup]:
    """Code index -> its merged group, for each ``let rec`` group (``MAKE_REC_GLOBAL`` at
    top level, ``MAKE_REC`` in a function) that qualifies: 2 to :data:`MAX_MERGED`
    members without nested functions, each member's variable (a global, or a local of
    the code object making the group) assigned nowhere else, and some member's
    ``TAIL_CALL``. Members may capture: they are defined side by side, so a body
    merged into another member's function sees the same variables."""
    merged: dict[int, MergedGroup] = {}
    for parent in range(len(module.codes)):
        assigned, groups = _assignments(module, parent)
        for is_global, group in groups:
            if any(assigned[(is_global, slot)] != 1 for _, slot in group):
                continue
            if _mergeable(module, group):
                name = "g{}" if is_global else f"v{parent}_{{}}"
                entry = MergedGroup(tuple(member for member, _ in group),
                                    {name.format(slot): member for member, slot in group})
                for member in entry.members:
                    merged[member] = entry
    return merged


Group = tuple[tuple[int, int], ...]
"""A ``let rec`` group's constant: (member code index, variable slot) for each member."""


def _assignments(module: CompiledModule, index: int
                 ) -> tuple[Counter[tuple[bool, int]], list[tuple[bool, Group]]]:
    """How often code ``index`` assigns each variable ((is global, slot): parameters,
    stores, pattern bindings, ``let rec`` groups), and the groups it makes."""
    code, consts = module.codes[index], module.consts
    assigned: Counter[tuple[bool, int]] = Counter((False, slot) for slot in range(code.arity))
    groups: list[tuple[bool, Group]] = []
    for op, a, _ in code.instructions:
        if op == Op.STORE_GLOBAL or op == Op.STORE_LOCAL:
            assigned[(op == Op.STORE_GLOBAL, a)] += 1
        elif op == Op.MATCH_ARM:
            assigned.update((False, slot) for slot in _bound_slots(consts[a]))
        elif op == Op.MAKE_REC_GLOBAL or op == Op.MAKE_REC:
            raw = consts[a]
            assert isinstance(raw, tuple)  # the verifier checked the group's shape
            group = tuple((item[0], item[1]) for item in raw)
            is_global = op == Op.MAKE_REC_GLOBAL
            groups.append((is_global, group))
            assigned.update((is_global, slot) for _, slot in group)
    return assigned, groups


def _bound_slots(arm: Any) -> list[int]:
    """The local slots a ``MATCH_ARM`` constant ``(slot, pattern)`` binds."""
    slots: list[int] = []
    pending = [arm[1]] if isinstance(arm, tuple) and len(arm) == 2 else []
    while pending:
        pattern = pending.pop()
        if not isinstance(pattern, tuple) or not pattern:
            continue
        if pattern[0] == "var" and len(pattern) > 1 and isinstance(pattern[1], int):
            slots.append(pattern[1])
        elif pattern[0] == "variant" and len(pattern) > 2:
            pending.extend(pattern[2])
        elif pattern[0] not in ("_", "unit", "lit") and len(pattern) > 1:
            pending.extend(sub for _, sub in pattern[1])
    return slots


def option_slots(module: CompiledModule, index: int) -> frozenset[int]:
    """The local slots of code ``index`` that may hold an *unwrapped* option (see
    :func:`chatml.vm.intrinsics.hashtbl_get_option`): assigned once, never loaded nor
    captured -- only ``MATCH_ARM`` reads them -- and matched only against `` `Some(p) ``,
    `` `None `` and ``_``. (Whether the one store is a ``Hashtbl.get`` is decided where
    it is translated.)"""
    code = module.codes[index]
    consts: tuple[Any, ...] = module.consts  # a MATCH_ARM's constant: (slot, pattern), verified
    assigned = _assignments(module, index)[0]
    loaded = {a for op, a, _ in code.instructions if op == Op.LOAD_LOCAL}
    for child in module.codes:
        if child.parent == index:
            loaded.update(source for kind, source in child.captures if kind == LOCAL)
    slots = {slot for (is_global, slot), count in assigned.items()
             if not is_global and count == 1 and slot >= code.arity and slot not in loaded}
    for op, a, _ in code.instructions:
        if op == Op.MATCH_ARM:
            arm: tuple[int, Any] = consts[a]
            if arm[0] in slots and not _option_pattern(arm[1]):
                slots.discard(arm[0])
    return frozenset(slots)


def _option_pattern(pattern: Any) -> bool:
    """``pattern`` matches an option by its shape alone: `` `Some(p) ``, `` `None ``, ``_``."""
    kind = pattern[0]
    if kind == "_":
        return True
    if kind != "variant":
        return False
    return (pattern[1], len(pattern[2])) in (("Some", 1), ("None", 0))


def _mergeable(module: CompiledModule, group: Group) -> bool:
    if not 2 <= len(group) <= MAX_MERGED:
        return False
    bodies = [module.codes[member].instructions for member, _ in group]
    if sum(map(len, bodies)) > MAX_MERGED_INSTRUCTIONS:
        return False
    ops = {op for body in bodies for op, _, _ in body}
    return Op.TAIL_CALL in ops and not ops & {Op.MAKE_CLOSURE, Op.MAKE_REC}


class _Translator:
    """The generated source of a whole (verified) module: lines, line map, constants."""

    def __init__(self, module: CompiledModule, range_analysis: bool,
                 intrinsics: Mapping[int, Intrinsic], batch_charges: bool = True,
                 shapes: tuple[Shape, ...] = ()) -> None:
        self.module = module
        self.shapes = shapes
        """Each code object's block structure (from the verifier; empty: no ``elif`` chains)."""
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
        self.merged = merge_groups(module)
        """Code index -> its merged group (see :func:`merge_groups`)."""

    # ------------------------------------------------------------------ naming

    @staticmethod
    def local(code: int, slot: int) -> str:
        return f"v{code}_{slot}"

    def local_operand(self, code: int, slot: int) -> Operand:
        return Operand(f"v{code}_{slot}", var=(code, slot), reads=frozenset({(code, slot)}))

    def free(self, code: int, index: int) -> Operand:
        """The variable capture ``index`` of ``code`` denotes (a local of an ancestor)."""
        codes = self.module.codes
        while True:
            kind, source = codes[code].captures[index]
            if kind == LOCAL:
                return self.local_operand(codes[code].parent, source)
            code, index = codes[code].parent, source

    def literal(self, k: int) -> str:
        found = self.literals.get(k)
        if found is not None:
            return found
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
        self.code(0, 0, in_loop=False)
        return Translation("\n".join(self.lines) + "\n", tuple(self.line_map), self.constants)

    def code(self, index: int, indent: int, in_loop: bool) -> None:
        code = self.module.codes[index]
        where = (index, 0)
        params = ", ".join(self.local(index, slot) for slot in range(code.arity))
        self.emit(f"def _c{index}({params}):", indent, where)
        body_indent = indent + 1
        global_line = None
        if index == 0:
            global_line = len(self.lines)
            self.emit("pass", body_indent, where)
        group = self.merged.get(index)
        if group is not None and self.try_merged(index, group, body_indent):
            pass
        elif code.self_loop:
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

    def try_merged(self, index: int, group: MergedGroup, indent: int) -> bool:
        """Emit the merged body of ``_c<index>``; when that nests too deeply for Python (a
        merged body is two blocks deeper), take it back and stop merging the group."""
        mark = len(self.lines)
        try:
            self.merged_bodies(index, group, indent)
        except TooDeepToTranslate:
            del self.lines[mark:], self.line_map[mark:]
            for member in group.members:
                self.merged.pop(member, None)
            return False
        return True

    def merged_bodies(self, index: int, group: MergedGroup, indent: int) -> None:
        """The body of ``_c<index>``, a member of a merged group: a loop over every member's
        body, its own first, chosen by ``_w`` (a tail call to a member sets the member's
        parameters and ``_w``, and ``continue``s). Each body charges its own entry step."""
        where = (index, 0)
        order = [index] + [member for member in group.members if member != index]
        self.emit(f"_w = {index}", indent, where)
        self.emit("while True:", indent, where)
        for position, member in enumerate(order):
            member_where = (member, 0)
            if position == 0:
                self.emit(f"if _w == {member}:", indent + 1, where)
            elif position < len(order) - 1:
                self.emit(f"elif _w == {member}:", indent + 1, member_where)
            else:
                self.emit("else:", indent + 1, member_where)
            self.count_step(indent + 2, member_where)
            _Body(self, member, indent + 2, True).run()

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
        # Any: each instruction knows the shape of the constants it reads
        self.consts: tuple[Any, ...] = tr.module.consts
        self.indent = indent
        self.loop_depth = 1 if in_loop else 0
        self.stack: list[Operand] = []
        self.blocks: list[_Block] = []
        self.terminated = False
        self.temps = 0
        self.pc = 0
        self.facts = Facts(tr.range_analysis, index)
        """Known intervals of int variables and temporaries at this point."""
        self.batch = Batch()
        """Memory charges not yet made (see :mod:`chatml.vm.charges`)."""
        self.texts: dict[str, Text] = {}
        """String literals and temporaries of bounded length (never reassigned), by atom."""
        self.ints: set[Var] = set()
        """Temporaries holding int results (never reassigned), whatever their interval."""
        self.option_slots = option_slots(tr.module, index)
        """Slots that may hold an unwrapped option (see :func:`option_slots`)."""
        self.unwrapped: set[int] = set()
        """Slots that do: the value a ``Hashtbl.get`` found, or ``_ABSENT``."""
        self.tables = TableFacts()
        """What inline ``Hashtbl`` operations know here (see :mod:`chatml.vm.table_facts`)."""
        self.inlined = False
        """The instruction being translated is an inlined call."""
        self.call_lines: dict[str, tuple[int, str]] = {}
        """Temporaries holding a plain call's result -> (its line, the call's text); see
        :meth:`fuse`."""

    # ------------------------------------------------------------------ driver

    def run(self) -> None:
        instructions = self.code.instructions
        count = len(instructions)
        while self.pc < count:
            op, a, b = instructions[self.pc]
            op = Op(op)
            if self.batch and not self.keeps_batch(op, a):
                self.flush()
            top, self.inlined = self.blocks[-1] if self.blocks else None, False
            _STEPS[op](self, a, b)
            self.track_tables(op, a, top)
            if not self.tr.batch_charges and not self.terminated:
                self.flush()
            self.pc += 1

    # ------------------------------------------------------------------ stack and output

    def temp(self) -> Operand:
        self.temps += 1
        return Operand(f"t{self.temps}", var=(-1, self.temps))

    def emit(self, text: str, indent: int | None = None) -> None:
        self.tr.emit(text, self.indent if indent is None else indent, (self.index, self.pc))

    def pop(self, n: int = 1) -> list[Operand]:
        if n == 0:
            return []
        taken = self.stack[-n:]
        del self.stack[-n:]
        return taken

    def pop1(self) -> Operand:
        return self.stack.pop()

    def push_temp(self, expression: str) -> Operand:
        """``t = expression`` into a fresh temporary, pushed."""
        t = self.temp()
        self.emit(f"{t} = {expression}")
        self.stack.append(t)
        return t

    def settle(self, var: Var) -> None:
        """Before ``var`` is overwritten, evaluate every pending operand that reads it."""
        for position, operand in enumerate(self.stack):
            if var in operand.reads:
                t = self.temp()
                self.emit(f"{t} = {operand}")
                self.stack[position] = t

    # ------------------------------------------------------------------ memory charges

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
            return len(self.stack) >= 2 and self.facts.of(self.stack[-1])[0] > 0
        if op is Op.CALL or op is Op.CALL_RAW:
            if len(self.stack) <= a:
                return False
            intrinsic = self.tr.intrinsics.get(self.stack[-a - 1].text)
            return (intrinsic is not None and intrinsic.arity == a
                    and self.typed_intrinsic(intrinsic, self.stack[-a:]) is not None)
        return False

    # ------------------------------------------------------------------ intrinsics

    def known_int(self, operand: Operand) -> bool:
        """``operand`` is an int (it has a known interval, or is an int literal)."""
        return self.tr.range_analysis and (self.facts.is_known(operand) or operand.value is not None
                                           or operand.var in self.ints)

    def typed_intrinsic(self, intrinsic: Intrinsic, args: list[Operand]) -> str | None:
        """The form of an intrinsic call whose argument type is known: ``"int_text"``
        (``to_string`` of an int), ``"same_text"`` (``to_string`` of a string),
        ``"text_length"`` (the length of a string); ``None`` otherwise."""
        if len(args) != 1:
            return None
        (value,) = args
        if intrinsic.kind == "to_string":
            if self.known_int(value):
                return "int_text"
            return "same_text" if value.text in self.texts else None
        if intrinsic.kind == "string_length" and value.text in self.texts:
            return "text_length"
        return None

    def unwrapped_target(self, intrinsic: Intrinsic) -> int | None:
        """The slot a ``Hashtbl.get`` being translated is stored into, when only a ``match``
        on its shape reads that slot (the result can then stay unwrapped)."""
        if intrinsic.kind != "hashtbl_get":
            return None
        instructions = self.code.instructions
        if self.pc + 1 >= len(instructions):
            return None
        op, slot, _ = instructions[self.pc + 1]
        return slot if op == Op.STORE_LOCAL and slot in self.option_slots else None

    def track_tables(self, op: Op, a: int, top: _Block | None) -> None:
        """Keep :attr:`tables` right after the instruction ``op a`` (``top``: the innermost
        block before it)."""
        tables = self.tables
        if op is Op.IF or op is Op.MATCH_ARM:
            tables.began(self.blocks[-1])
        elif op is Op.ELSE:
            tables.branch(self.blocks[-1])
        elif op is Op.END:
            tables.ended(top)
        elif op is Op.STORE_LOCAL:
            tables.stored((self.index, a))
        elif op not in KEEP and not self.inlined:
            tables.forget()

    def inline_table(self, kind: str, t: Operand, fn: Operand, args: list[Operand]) -> None:
        """``t = fn(*args)`` for the ``Hashtbl`` operation ``kind``, inlined."""
        table, key = args[0], args[1]
        access = self.tables.access(kind, table, key, key.text in self.texts)
        for extra, line in hashtbl_lines(kind, t.text, fn.text, [arg.text for arg in args],
                                         access):
            self.emit(line, self.indent + extra)

    def inline(self, intrinsic: Intrinsic, t: Operand, fn: Operand, args: list[Operand]) -> None:
        """``t = fn(*args)`` for the intrinsic builtin ``fn``, inlined."""
        form = self.typed_intrinsic(intrinsic, args)
        value = args[0]
        target = self.unwrapped_target(intrinsic)
        # runs no other code (tables: see inline_table), unless it may call to_string on
        # any value -- which renders a ref, reading (and spilling) a table
        self.inlined = form is not None or intrinsic.kind != "to_string"
        if target is not None:
            self.inline_table("hashtbl_get_option", t, fn, args)
            self.unwrapped.add(target)
        elif intrinsic.kind in HASHTBL_KINDS:
            self.inline_table(intrinsic.kind, t, fn, args)
        elif form == "int_text":  # at most INT_TEXT code points: charged with the batch
            self.emit(f"{t} = _str({value})")
            self.texts[t.text] = Text(0, ((t.text, INT_TEXT),), INT_TEXT)
            self.batch.add_string(t.text, self.texts[t.text], (self.index, self.pc))
        elif form == "same_text":  # the string itself: nothing new, nothing charged
            self.emit(f"{t} = {value}")
            self.texts[t.text] = self.texts[value.text]
        elif form == "text_length":
            self.emit(f"{t} = len({value})")
            self.int_result(t, (0, self.texts[value.text].bound))
        else:
            for extra, line in intrinsic.inline(t.text, fn.text, [arg.text for arg in args]):
                self.emit(line, self.indent + extra)
            if intrinsic.kind in ("string_length", "array_length"):
                self.int_result(t, (0, MAX_INT))  # the builtins return lengths (or raise)

    # ------------------------------------------------------------------ intervals

    def assign(self, var: Var, interval: Interval, is_int: bool = False) -> None:
        """``var`` now holds a value of ``interval`` (see :meth:`Facts.set`); the enclosing
        blocks forget it where they end."""
        self.facts.set(var, interval, is_int)
        for block in self.blocks:
            block.stored.add(var)

    def int_result(self, t: Operand, interval: Interval) -> None:
        assert t.var is not None
        self.assign(t.var, interval)
        self.ints.add(t.var)

    def check_range(self, t: Operand, lo: int, hi: int) -> None:
        """Emit the range check of the int result ``t`` known to lie in [lo, hi]."""
        if hi > MAX_INT and lo < MIN_INT:
            self.fail_if(_RANGE.format(t=t), "_ovf()")
        elif hi > MAX_INT:
            self.fail_if(_ABOVE.format(t=t), "_ovf()")
        elif lo < MIN_INT:
            self.fail_if(_BELOW.format(t=t), "_ovf()")
        assert t.var is not None
        self.assign(t.var, clamp((lo, hi)))

    def arithmetic(self, expression: str, operands: tuple[Operand, ...],
                   interval: Interval, fused: tuple[Operand, str, Operand] | None = None
                   ) -> None:
        """Push the int ``expression``, whose exact value lies in ``interval``.

        When it cannot leave the range and its operands are variables or literals,
        it stays a (pure, infallible) deferred operand, evaluated where it is used;
        otherwise it goes into a temporary (computing the calls it operates on in
        place when it can: ``fused`` is ``(left, symbol, right)``, see :meth:`fuse`)
        and is range-checked on the side(s) it may leave.
        """
        if in_range(interval) and not any(o.deferred for o in operands):
            self.stack.append(Operand(f"({expression})", reads=combined_reads(*operands),
                                      deferred=True, interval=interval))
            return
        atom = self.temp()
        if fused is None or not self.fuse(atom, fused):
            self.emit(f"{atom} = {expression}")
        self.check_range(atom, *interval)
        assert atom.var is not None
        self.ints.add(atom.var)
        self.stack.append(atom)

    def call_line(self, operand: Operand) -> int | None:
        """The line of the plain call whose result ``operand`` is, while it is still there."""
        found = self.call_lines.get(operand.text)
        if found is None or found[0] >= len(self.tr.lines):
            return None
        line, call = found
        return line if self.tr.lines[line].endswith(f"{operand} = {call}") else None

    def fuse(self, atom: Operand, fused: tuple[Operand, str, Operand]) -> bool:
        """``atom = left symbol right`` with the plain calls whose results ``left`` and
        ``right`` are computed in place, when that keeps the evaluation order: the calls are
        the last lines emitted (``left``'s, then ``right``'s), and what else the expression
        reads is a literal before them or anything after them. Each call stays on its own
        line (the operator begins the second), so a failure inside either still maps to
        its ``CALL`` instruction; the temporaries they had are gone (3.11 spends a store and
        a load on each: fib(21) takes 30.8 M instructions fused, 32.6 M not, under
        cachegrind). Returns False (nothing done) when the shape does not allow it."""
        left, symbol, right = fused
        last = len(self.tr.lines) - 1
        left_line, right_line = self.call_line(left), self.call_line(right)
        if left_line != last and right_line != last:
            return False
        if left.text == right.text or any(_mentions(o.text, name) for o in self.stack
                                          for name in (left.text, right.text)):
            return False  # (defensive: without a DUP instruction a result is read once)
        lines = self.tr.lines
        line = lines[last]
        lead = line[:len(line) - len(line.lstrip())]
        if left_line == last - 1 and right_line == last:
            lines[left_line] = f"{lead}{atom} = ({self.call_lines[left.text][1]}"
            lines[right_line] = f"{lead}    {symbol} {self.call_lines[right.text][1]})"
            return True
        if left_line == last and right_line is None:
            lines[last] = f"{lead}{atom} = {self.call_lines[left.text][1]} {symbol} {right}"
            return True
        if right_line == last and left_line is None and left.value is not None:
            lines[last] = f"{lead}{atom} = {left} {symbol} {self.call_lines[right.text][1]}"
            return True
        return False

    def enter_loop(self) -> None:
        """Intervals at the head of the loop starting at ``self.pc`` (true at every iteration)."""
        for slot, steps in loop_steps(self.code, self.consts, self.pc).items():
            var = (self.index, slot)
            self.assign(var, self.facts.loop_head(var, steps))

    # ------------------------------------------------------------------ closures

    def closures(self, group: list[tuple[int, int | None]],
                 global_targets: bool = False) -> Operand | None:
        """Define the closures of ``group`` (code index, target slot or None); the new
        closure when it has no target."""
        targets = [self.closure_target(code_index, slot, global_targets)
                   for code_index, slot in group]
        group_slots = {slot for _, slot in group if slot is not None and not global_targets}
        snapshot = self.loop_snapshot(group, group_slots)
        indent = self.indent
        factory = None
        if snapshot or (self.loop_depth and group_slots):
            factory = f"_mk{group[0][0]}"
            self.emit(f"def {factory}({', '.join(snapshot)}):")
            indent += 1
        for code_index, _ in group:
            self.tr.code(code_index, indent, self.loop_depth > 0)
        saved_indent, self.indent = self.indent, indent
        for (code_index, _), target in zip(group, targets, strict=True):
            if target != f"_c{code_index}":
                self.emit(f"{target} = _c{code_index}")
            self.charge(COST["closure"])
        self.flush()  # where the closures are made (inside the factory, if any)
        self.indent = saved_indent
        named = global_targets or group[0][1] is not None
        if factory is None:
            return None if named else self.push_temp(f"_c{group[0][0]}")
        unpack = "".join(t + ", " for t in targets)
        self.emit(f"return ({unpack})", indent)
        if named:
            self.emit(f"{unpack}= {factory}({', '.join(snapshot)})")
            return None
        t = self.temp()
        self.emit(f"{t}, = {factory}({', '.join(snapshot)})")
        self.stack.append(t)
        return t

    def closure_target(self, code_index: int, slot: int | None, global_target: bool) -> str:
        if slot is None:
            return f"_c{code_index}"
        if global_target:
            self.tr.globals_stored.add(slot)
            return f"g{slot}"
        return self.tr.local(self.index, slot)

    def loop_snapshot(self, group: list[tuple[int, int | None]], group_slots: set[int]
                      ) -> list[str]:
        """Inside a loop: the locals the group's closures capture (passed to a factory, so
        each iteration's closures see that iteration's values)."""
        snapshot: list[str] = []
        if not self.loop_depth:
            return snapshot
        for code_index, _ in group:
            for kind, source in self.tr.module.codes[code_index].captures:
                if kind == LOCAL and source not in group_slots:
                    name = self.tr.local(self.index, source)
                    if name not in snapshot:
                        snapshot.append(name)
        return snapshot

    def group(self, k: int) -> list[tuple[int, int | None]]:
        return [(item[0], item[1]) for item in self.consts[k]]

    # ------------------------------------------------------------------ blocks

    def open_block(self, kind: str, indent: int, root: _Block | None = None) -> _Block:
        block = _Block(kind, len(self.stack), indent, root)
        block.bounds = dict(self.facts.known)
        self.blocks.append(block)
        self.indent = indent + 1
        return block

    def leave(self, block: _Block) -> None:
        """``block`` (popped) has ended: its assignments are assignments of the enclosing one."""
        if self.blocks:
            self.blocks[-1].stored |= block.stored

    def close_branch(self, block: _Block) -> None:
        if self.terminated:
            return
        value = self.pop1()
        root = block.root
        if root.result is None:
            root.result = self.temp()
        if value.text != root.result.text:
            self.emit(f"{root.result} = {value}")
        block.fell = True
        root.fell = True

    def match_arm(self, k: int) -> None:
        slot: int
        pattern: tuple[Any, ...]
        slot, pattern = self.consts[k]  # verified: (slot, pattern)
        conditions: list[str] = []
        bindings: list[tuple[Var, str]] = []
        path = self.tr.local(self.index, slot)
        if slot in self.unwrapped:
            self.option_pattern(path, pattern, conditions, bindings)
        else:
            self.pattern(path, pattern, conditions, bindings)
        test = " and ".join(conditions) or "True"
        parent = self.blocks[-1] if self.blocks else None
        if parent is not None and parent.chain_pending:
            parent.chain_pending = False
            self.emit(f"elif {test}:", parent.indent)
            self.open_block("arm", parent.indent, parent.root)
        else:
            self.emit(f"if {test}:")
            self.open_block("arm", self.indent)
        for var, path in bindings:
            self.emit(f"{self.tr.local(*var)} = {path}")
            self.assign(var, ANY)

    def pattern(self, path: str, pattern: Any, conditions: list[str],
                bindings: list[tuple[Var, str]]) -> None:
        """The tests of ``pattern`` on the value at ``path`` (one flat ``and`` chain, depth
        first, left to right) and its bindings, walked with an explicit stack. A constructor
        whose path text grows past :data:`_PATH_TEXT` is named by its first test
        (``(q7 := path).tag == ...``), so a pattern of any depth makes linear text."""
        pending: list[tuple[str, Any]] = [(path, pattern)]
        while pending:
            path, pattern = pending.pop()
            kind = pattern[0]
            if kind == "var":
                bindings.append(((self.index, pattern[1]), path))
            elif kind == "unit":
                conditions.append(f"{path} is None")
            elif kind == "lit":
                conditions.append(self.literal_test(path, pattern[1]))
            elif kind in ("variant", "record"):
                first = path
                if len(path) > _PATH_TEXT:
                    self.temps += 1
                    path = f"q{self.temps}"
                    first = f"({path} := {first})"
                pending.extend(reversed(self.constructor_tests(first, path, pattern, conditions)))

    @staticmethod
    def constructor_tests(first: str, path: str, pattern: Any,
                          conditions: list[str]) -> list[tuple[str, Any]]:
        """The tests of a variant or record pattern's own shape (``first`` is how the first
        one reads the value, ``path`` how the others do); its sub-patterns and their paths."""
        if pattern[0] == "variant":
            args = pattern[2]
            conditions.append(f"{first}.tag == {pattern[1]!r}")
            conditions.append(f"len({path}.args) == {len(args)}" if args else f"not {path}.args")
            return [(f"{path}.args[{i}]", sub) for i, sub in enumerate(args)]
        fields = pattern[1]
        conditions.append(f"type({first}) is _dict")
        conditions.extend(f"{label!r} in {path}" for label, _ in fields)
        if not pattern[2]:
            conditions.append(f"len({path}) == {len(fields)}")
        return [(f"{path}[{label!r}]", sub) for label, sub in fields]

    def option_pattern(self, path: str, pattern: Any, conditions: list[str],
                       bindings: list[tuple[Var, str]]) -> None:
        """:meth:`pattern` for an unwrapped option at ``path`` (the value, or ``_ABSENT``):
        `` `Some(p) `` is ``p`` on the value itself (see :func:`option_slots`)."""
        if pattern[0] == "variant" and pattern[1] == "Some":
            conditions.append(f"{path} is not _ABSENT")
            self.pattern(path, pattern[2][0], conditions, bindings)
        elif pattern[0] == "variant":
            conditions.append(f"{path} is _ABSENT")

    def literal_test(self, path: str, value: Any) -> str:
        if isinstance(value, bool):
            return f"{path} is {value}"
        if isinstance(value, (int, str)) or math.isfinite(value):
            return f"{path} == {value!r}"
        name = f"_lit{len(self.tr.constants)}"
        self.tr.constants[name] = value
        return f"{path} == {name}"

    # ------------------------------------------------------------------ one method per opcode

    def op_const(self, a: int, b: int) -> None:
        atom = self.tr.literal(a)
        value = self.consts[a]
        if type(value) is str and len(value) <= MAX_TEXT:
            self.texts[atom] = Text(len(value), (), len(value))
        self.stack.append(Operand(atom, value=value if type(value) is int else None))

    def op_load_local(self, a: int, b: int) -> None:
        self.stack.append(self.tr.local_operand(self.index, a))

    def op_load_free(self, a: int, b: int) -> None:
        self.stack.append(self.tr.free(self.index, a))

    def op_load_global(self, a: int, b: int) -> None:
        self.stack.append(Operand(f"g{a}"))

    def op_store_local(self, a: int, b: int) -> None:
        var = (self.index, a)
        value = self.pop1()
        self.settle(var)
        self.emit(f"{self.tr.local(*var)} = {value}")
        self.assign(var, self.facts.of(value), self.known_int(value))

    def op_store_global(self, a: int, b: int) -> None:
        self.tr.globals_stored.add(a)
        self.emit(f"g{a} = {self.pop1()}")

    def op_pop(self, a: int, b: int) -> None:
        self.pop1()

    def op_neg(self, a: int, b: int) -> None:
        operand = self.pop1()
        self.arithmetic(f"-{operand}", (operand,), neg(self.facts.of(operand)))

    def op_div(self, a: int, b: int) -> None:
        left, right = self.pop(2)
        known_left, known_right = self.facts.of(left), self.facts.of(right)
        if known_right[0] > 0:
            # truncation toward zero; |result| <= |left|, so never out of range
            expression = (f"{left} // {right}" if known_left[0] >= 0 else
                          f"{left} // {right} if {left} >= 0 else -(-{left} // {right})")
            self.arithmetic(expression, (left, right), divide(known_left, known_right))
            return
        t = self.temp()  # may divide by zero: evaluated here, at its own instruction
        self.emit(f"{t} = {left} // {right} if ({left} ^ {right}) >= 0 "
                  f"else -(-{left} // {right})")
        assert t.var is not None
        self.ints.add(t.var)
        if known_left[0] == MIN_INT and known_right[0] <= -1 <= known_right[1]:
            self.fail_if(_RANGE.format(t=t), "_ovf()")  # only min_int / -1 leaves the range
        self.stack.append(t)

    def op_fdiv(self, a: int, b: int) -> None:
        left, right = self.pop(2)
        self.push_temp(f"{left} / {right}")

    def op_fneg(self, a: int, b: int) -> None:
        operand = self.pop1()
        self.stack.append(Operand(f"(-{operand})", reads=operand.reads, deferred=True))

    def op_concat(self, a: int, b: int) -> None:
        left, right = self.pop(2)
        t = self.push_temp(f"{left} + {right}")
        known = self.texts.get(left.text), self.texts.get(right.text)
        if known[0] and known[1] and known[0].bound + known[1].bound <= MAX_TEXT:
            self.texts[t.text] = known[0] + known[1]
            self.batch.add_string(t.text, self.texts[t.text], (self.index, self.pc))
        else:
            self.charge(COST["string"], 1, f"len({t})")

    def op_make_record(self, a: int, b: int) -> None:
        labels: tuple[str, ...] = self.consts[a]
        values = self.pop(len(labels))
        items = ", ".join(f"{label!r}: {v}" for label, v in zip(labels, values, strict=True))
        self.push_temp(f"{{{items}}}")
        self.charge(COST["record"] + COST["field"] * len(labels))

    def op_extend(self, a: int, b: int) -> None:
        labels: tuple[str, ...] = self.consts[a]
        values = self.pop(len(labels))
        base = self.pop1()
        items = "".join(f", {label!r}: {v}" for label, v in zip(labels, values, strict=True))
        t = self.push_temp(f"{{**{base}{items}}}")
        self.charge(COST["record"], COST["field"], f"len({t})")

    def op_get_field(self, a: int, b: int) -> None:
        self.push_temp(f"{self.pop1()}[{self.consts[a]!r}]")

    def op_make_variant(self, a: int, b: int) -> None:
        tag = self.consts[a]
        if b == 0:
            name = f"_nv{a}"
            self.tr.constants[name] = ("variant", tag)
            self.stack.append(Operand(name))
            return
        values = self.pop(b)
        # _V(tag, args) without a call of Variant.__init__ (a Python call from C: slow)
        t = self.temp()
        self.emit(f"{t} = _new(_V)")
        self.emit(f"{t}.tag = {tag!r}")
        self.emit(f"{t}.args = ({', '.join(map(str, values))},)")
        self.stack.append(t)
        self.charge(COST["variant"] + COST["slot"] * b)

    def op_make_array(self, a: int, b: int) -> None:
        values = self.pop(a)
        self.push_temp(f"[{', '.join(map(str, values))}]")
        self.charge(COST["array"] + COST["slot"] * a)

    def non_negative(self, index: Operand) -> bool:
        return (index.value is not None and index.value >= 0) or self.facts.of(index)[0] >= 0

    def op_array_get(self, a: int, b: int) -> None:
        array, index = self.pop(2)
        if self.non_negative(index):
            self.push_temp(f"{array}[{index}]")
        else:
            self.push_temp(f"{array}[{index}] if {index} >= 0 else _oob()")

    def op_array_set(self, a: int, b: int) -> None:
        array, index, value = self.pop(3)
        if not self.non_negative(index):
            self.emit(f"if {index} < 0: _oob()")
        self.emit(f"if _M.journal is not None: _jr({array}, {index})")
        self.emit(f"{array}[{index}] = {value}")
        self.stack.append(_NONE)

    def op_make_ref(self, a: int, b: int) -> None:
        self.push_temp(f"_Ref({self.pop1()})")
        self.charge(COST["ref"])

    def op_deref(self, a: int, b: int) -> None:
        self.push_temp(f"{self.pop1()}.value")

    def op_set_ref(self, a: int, b: int) -> None:
        ref, value = self.pop(2)
        self.emit(f"if _M.journal is not None: _jref({ref})")
        self.emit(f"{ref}.value = {value}")
        self.stack.append(_NONE)

    def op_make_closure(self, a: int, b: int) -> None:
        self.closures([(a, None)])

    def op_make_rec(self, a: int, b: int) -> None:
        self.closures(self.group(a))

    def op_make_rec_global(self, a: int, b: int) -> None:
        self.closures(self.group(a), global_targets=True)

    def op_tail_call(self, a: int, b: int) -> None:
        args = self.pop(a)
        fn = self.pop1()
        group = self.tr.merged.get(self.index)
        target = None if group is None else group.targets.get(fn.text)
        if target is not None and self.tr.module.codes[target].arity == a:
            if args:
                params = ", ".join(self.tr.local(target, s) for s in range(a))
                self.emit(f"{params} = {', '.join(map(str, args))}")
            self.emit(f"_w = {target}")
            self.emit("continue")
            self.terminated = True
            return
        self.emit(f"_P.fn, _P.args = {fn}, ({''.join(f'{arg}, ' for arg in args)})")
        self.emit("return _P")
        self.terminated = True

    def op_self_tail_call(self, a: int, b: int) -> None:
        args = self.pop(a)
        if args:
            params = ", ".join(self.tr.local(self.index, s) for s in range(a))
            self.emit(f"{params} = {', '.join(map(str, args))}")
        self.emit("continue")
        self.terminated = True

    def op_return(self, a: int, b: int) -> None:
        self.emit(f"return {self.pop1()}")
        self.terminated = True

    def op_if(self, a: int, b: int) -> None:
        condition = self.pop1()
        parent, pure = self.chained_parent()
        if parent is not None and pure:  # `else if c`, `c` pure: `elif c:`, at the chain's indent
            lines = self.tr.lines
            lines[parent.else_line] = "    " * parent.indent + f"elif {condition}:"
            self.tr.line_map[parent.else_line] = (self.index, self.pc)
            block = self.open_block("if", parent.indent, parent.root)
        else:  # a link whose condition emitted lines is a nested `if`, gated at its ELSE
            self.emit(f"if {condition}:")
            block = self.open_block("if", self.indent, parent.root if parent else None)
        block.condition = condition.test
        self.facts.learn(condition.test, True)

    def chained_parent(self) -> tuple[_Block | None, bool]:
        """The block this ``IF`` continues as a link of an ``else if`` chain (the ``IF`` is
        all of that block's else branch: its ``END`` comes right before the parent's), and
        whether its condition was pure (no line emitted since the parent's ``else:``, which
        ``elif`` can then replace)."""
        parent = self.blocks[-1] if self.blocks else None
        shape = self.tr.shapes[self.index] if self.tr.shapes else None
        if parent is None or shape is None or parent.end_pc < 0 \
                or len(self.stack) != parent.depth:
            return None, False
        end = shape.end_of.get(shape.else_of.get(self.pc, -1), -1)
        if end < 0 or end + 1 != parent.end_pc:
            return None, False
        return parent, parent.else_line == len(self.tr.lines) - 1 and not self.batch

    def op_match_arm(self, a: int, b: int) -> None:
        self.match_arm(a)

    def op_else(self, a: int, b: int) -> None:
        block = self.blocks[-1]
        self.close_branch(block)
        block.has_else = True
        self.terminated = False
        self.facts.known = dict(block.bounds)  # the branch not taken: as before the block
        if block.kind == "if":
            self.facts.learn(block.condition, False)
        instructions = self.code.instructions
        following = instructions[self.pc + 1][0] if self.pc + 1 < len(instructions) else None
        if following == Op.MATCH_ARM:
            block.chain_pending = True
            self.indent = block.indent
        else:
            self.emit("else:", block.indent)
            self.indent = block.indent + 1
            block.else_line = len(self.tr.lines) - 1
            shape = self.tr.shapes[self.index] if self.tr.shapes else None
            block.end_pc = shape.end_of.get(self.pc, -1) if shape is not None else -1
            if block.root is not block and block.indent > block.root.indent:
                self.gate(block)

    def gate(self, block: _Block) -> None:
        """Continue the else branch of a nested link of an ``else if`` chain back at the
        chain's indent: ``r = _GO`` here, then ``if r is _GO:`` (``r``, the chain's result,
        holds a value on every other path that gets there), so the chain never nests."""
        root = block.root
        if root.result is None:
            root.result = self.temp()
        self.emit(f"{root.result} = _GO")
        self.emit(f"if {root.result} is _GO:", root.indent)
        self.indent = root.indent + 1

    def op_end(self, a: int, b: int) -> None:
        block = self.blocks.pop()
        self.close_branch(block)
        self.indent = block.indent
        self.facts.known = {var: known for var, known in block.bounds.items()
                            if var not in block.stored}
        self.leave(block)
        self.terminated = not block.fell
        if block.fell:
            assert block.root.result is not None
            self.stack.append(block.root.result)

    def op_match_fail(self, a: int, b: int) -> None:
        self.emit("_nomatch()")
        self.terminated = True

    def op_loop(self, a: int, b: int) -> None:
        self.enter_loop()
        self.emit("while True:")
        self.open_block("loop", self.indent)
        self.loop_depth += 1

    def op_loop_test(self, a: int, b: int) -> None:
        self.blocks[-1].has_else = True  # a loop block records its (single) test here
        condition = self.pop1()
        self.emit(f"if not {condition}: break")
        self.facts.learn(condition.test, True)
        self.tr.count_step(self.indent, (self.index, self.pc))

    def op_end_loop(self, a: int, b: int) -> None:
        block = self.blocks.pop()
        self.facts.known = block.bounds  # the loop head's intervals hold when it exits
        self.leave(block)
        self.indent = block.indent
        self.loop_depth -= 1
        self.stack.append(_NONE)

    def op_module_new(self, a: int, b: int) -> None:
        self.push_temp(f"_Module({self.consts[a]!r})")

    def op_module_fill(self, a: int, b: int) -> None:
        module = self.pop1()
        fill: tuple[tuple[str, int], ...] = self.consts[a]
        items = ", ".join(f"{name!r}: g{slot}" for name, slot in fill)
        self.emit(f"{module}.update({{{items}}})")


def _arith_step(op: Op) -> Callable[[_Body, int, int], None]:
    symbol, interval_of = _ARITH[op]

    def step(body: _Body, a: int, b: int) -> None:
        left, right = body.pop(2)
        body.arithmetic(f"{left} {symbol} {right}", (left, right),
                        interval_of(body.facts.of(left), body.facts.of(right)),
                        (left, symbol, right))

    return step


def _float_step(op: Op) -> Callable[[_Body, int, int], None]:
    symbol = _FLOAT[op]

    def step(body: _Body, a: int, b: int) -> None:
        # pure and cannot fail: kept as an expression, evaluated where it is used
        left, right = body.pop(2)
        body.stack.append(Operand(f"({left} {symbol} {right})",
                                  reads=combined_reads(left, right), deferred=True))

    return step


def _compare_step(op: Op) -> Callable[[_Body, int, int], None]:
    symbol = _COMPARE[op]

    def step(body: _Body, a: int, b: int) -> None:
        left, right = body.pop(2)
        test = Test(op, left, right) if op in INT_COMPARE else None
        body.stack.append(Operand(f"({left} {symbol} {right})", test=test,
                                  reads=combined_reads(left, right), deferred=True))

    return step


def _equal_step(negate: str) -> Callable[[_Body, int, int], None]:
    def step(body: _Body, a: int, b: int) -> None:
        left, right = body.pop(2)
        body.push_temp(f"{negate}_eq({left}, {right})")

    return step


def _call_step(trampoline: bool) -> Callable[[_Body, int, int], None]:
    def step(body: _Body, a: int, b: int) -> None:
        args = body.pop(a)
        fn = body.pop1()
        t = body.temp()
        intrinsic = body.tr.intrinsics.get(fn.text)
        if intrinsic is not None and intrinsic.arity == a:
            body.inline(intrinsic, t, fn, args)
        else:
            call = f"{fn}({', '.join(map(str, args))})"
            body.emit(f"{t} = {call}")
            if trampoline:
                body.emit(f"while type({t}) is _TC: {t} = {t}.fn(*{t}.args)")
            else:
                body.call_lines[t.text] = (len(body.tr.lines) - 1, call)
        body.stack.append(t)  # (a builtin never returns a tail call)

    return step


def _mentions(text: str, name: str) -> bool:
    """Whether the generated expression ``text`` reads the temporary ``name``."""
    return re.search(rf"\b{name}\b", text) is not None


Step = Callable[[_Body, int, int], None]
_STEPS: dict[Op, Step] = {
    Op.CONST: _Body.op_const, Op.LOAD_LOCAL: _Body.op_load_local,
    Op.LOAD_FREE: _Body.op_load_free, Op.LOAD_GLOBAL: _Body.op_load_global,
    Op.STORE_LOCAL: _Body.op_store_local, Op.STORE_GLOBAL: _Body.op_store_global,
    Op.POP: _Body.op_pop, Op.NEG: _Body.op_neg, Op.DIV: _Body.op_div,
    Op.FDIV: _Body.op_fdiv, Op.FNEG: _Body.op_fneg, Op.CONCAT: _Body.op_concat,
    Op.EQ: _equal_step(""), Op.NE: _equal_step("not "),
    Op.MAKE_RECORD: _Body.op_make_record, Op.EXTEND: _Body.op_extend,
    Op.GET_FIELD: _Body.op_get_field, Op.MAKE_VARIANT: _Body.op_make_variant,
    Op.MAKE_ARRAY: _Body.op_make_array, Op.ARRAY_GET: _Body.op_array_get,
    Op.ARRAY_SET: _Body.op_array_set, Op.MAKE_REF: _Body.op_make_ref,
    Op.DEREF: _Body.op_deref, Op.SET_REF: _Body.op_set_ref,
    Op.MAKE_CLOSURE: _Body.op_make_closure, Op.MAKE_REC: _Body.op_make_rec,
    Op.MAKE_REC_GLOBAL: _Body.op_make_rec_global,
    Op.CALL: _call_step(True), Op.CALL_RAW: _call_step(False),
    Op.TAIL_CALL: _Body.op_tail_call, Op.SELF_TAIL_CALL: _Body.op_self_tail_call,
    Op.RETURN: _Body.op_return, Op.IF: _Body.op_if, Op.MATCH_ARM: _Body.op_match_arm,
    Op.ELSE: _Body.op_else, Op.END: _Body.op_end, Op.MATCH_FAIL: _Body.op_match_fail,
    Op.LOOP: _Body.op_loop, Op.LOOP_TEST: _Body.op_loop_test, Op.END_LOOP: _Body.op_end_loop,
    Op.MODULE_NEW: _Body.op_module_new, Op.MODULE_FILL: _Body.op_module_fill,
}
_STEPS.update({op: _arith_step(op) for op in _ARITH})
_STEPS.update({op: _float_step(op) for op in _FLOAT})
_STEPS.update({op: _compare_step(op) for op in _COMPARE})
assert set(_STEPS) == set(Op), "every opcode has its translation"
"""How each opcode is translated (a method of :class:`_Body`, or a function per family)."""


def translate(module: CompiledModule, *, range_analysis: bool = True,
              intrinsics: Mapping[int, Intrinsic] | None = None,
              batch_charges: bool = True) -> Translation:
    """The Python source of ``module`` (raises ``BytecodeFormatError`` on malformed bytecode).

    The module is verified first (:func:`chatml.vm.verify.verify`).
    ``range_analysis=False`` range-checks every integer result and array index
    (the reference the analysis is tested against); the two translations
    behave identically. ``intrinsics`` (global slot -> inline form, see
    :mod:`chatml.vm.intrinsics`) inlines calls of those builtins.
    ``batch_charges=False`` makes every memory charge where its allocation is
    (the reference :mod:`chatml.vm.charges` is tested against).
    """
    shapes = verify(module)
    translator = _Translator(module, range_analysis, intrinsics or {}, batch_charges, shapes)
    try:
        return translator.translate()
    except (TypeError, ValueError, IndexError, KeyError) as error:  # defensive: verified
        raise BytecodeFormatError(
            f"malformed bytecode ({type(error).__name__}: {error})") from None
    # A RecursionError propagates: deep nesting is not malformed (see chatml.depth).
