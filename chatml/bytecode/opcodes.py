"""The ChatML instruction set.

A stack machine with *structured* control flow (as in WebAssembly): blocks
open with ``IF``/``MATCH_ARM``/``LOOP`` and close with ``END``/``END_LOOP``,
so every code object translates directly into structured host code. Each
instruction is ``(opcode, a, b)``; unused operands are 0.

Operands: ``k`` is an index into the module's constant pool, ``s`` a local
slot of the current frame, ``i`` a capture index of the current closure,
``g`` a global slot, ``c`` a code-object index, ``n`` a count.

=================  ========  ======================================================
opcode             operands  effect
=================  ========  ======================================================
CONST              k         push ``consts[k]``
LOAD_LOCAL         s         push local ``s``
STORE_LOCAL        s         pop into local ``s``
LOAD_FREE          i         push captured variable ``i``
LOAD_GLOBAL        g         push global ``g``
STORE_GLOBAL       g         pop into global ``g``
POP                          discard the top
NEG / FNEG                   integer (overflow-checked) / float negation
ADD SUB MUL DIV              integer arithmetic; ``DIV`` truncates toward zero;
                             leaving the 63-bit range is ``integer overflow``
FADD FSUB FMUL FDIV          float arithmetic (``FDIV`` by +-0.0 is an error)
CONCAT                       string concatenation
EQ / NE                      structural equality (spec 5.6)
EQ_PRIM / NE_PRIM            equality of two scalars of the same primitive type
LT GT LE GE                  int comparisons
FLT FGT FLE FGE              float comparisons
MAKE_RECORD        k         pop ``len(consts[k])`` values; record with labels
                             ``consts[k]`` (source order)
EXTEND             k         pop base and ``len(consts[k])`` values; copy-update
GET_FIELD          k         pop record/module; push field ``consts[k]``
MAKE_VARIANT       k n       pop ``n`` values; variant tagged ``consts[k]``
MAKE_ARRAY         n         pop ``n`` values; new array
ARRAY_GET                    pop array, index; push element (bounds-checked)
ARRAY_SET                    pop array, index, value; store; push unit
MAKE_REF / DEREF / SET_REF   ref cells (``SET_REF`` pushes unit)
MAKE_CLOSURE       c         push a closure of code ``c`` (captures per code ``c``)
MAKE_REC           k         ``consts[k]`` = ((c, s), ...): create the closures of a
                             ``let rec`` group together and store each in local ``s``
MAKE_REC_GLOBAL    k         as ``MAKE_REC`` but ``((c, g), ...)`` into globals
CALL               n         pop function and ``n`` arguments; call; run the
                             trampoline until the result is a value
CALL_RAW           n         call without the trampoline: the callee is known never
                             to return a tail call, or the result is returned at once
TAIL_CALL          n         return a tail call of the function and arguments
SELF_TAIL_CALL     n         pop ``n`` arguments into the parameters; restart
RETURN                       return the top
IF                           pop a bool; run the block up to ``ELSE``/``END`` if true
MATCH_ARM          k         test local scrutinee against pattern ``consts[k]``
                             (``(slot, pattern)``); on success bind its variables and
                             run the block
ELSE                         start the alternative block
END                          close an ``IF``/``MATCH_ARM`` block; a block whose
                             branches fall through leaves one value
MATCH_FAIL                   runtime error ``Non-exhaustive pattern match``
LOOP                         start a ``while`` loop (condition code follows)
LOOP_TEST                    pop a bool; leave the loop when false (counts a step)
END_LOOP                     jump back to ``LOOP``; after the loop push unit
MODULE_NEW         k         push an empty module named ``consts[k]``
MODULE_FILL        k         pop a module; copy ``consts[k]`` = ((name, g), ...)
                             globals into it
=================  ========  ======================================================

Patterns (``MATCH_ARM`` constants) are tuples: ``("_",)``, ``("var", s)``,
``("unit",)``, ``("lit", value)``, ``("variant", tag, (p, ...))``,
``("record", ((label, p), ...), is_open)``.
"""

from __future__ import annotations

import enum


class Op(enum.IntEnum):
    CONST = 1
    LOAD_LOCAL = 2
    STORE_LOCAL = 3
    LOAD_FREE = 4
    LOAD_GLOBAL = 5
    STORE_GLOBAL = 6
    POP = 7
    NEG = 10
    FNEG = 11
    ADD = 12
    SUB = 13
    MUL = 14
    DIV = 15
    FADD = 16
    FSUB = 17
    FMUL = 18
    FDIV = 19
    CONCAT = 20
    EQ = 21
    NE = 22
    EQ_PRIM = 23
    NE_PRIM = 24
    LT = 25
    GT = 26
    LE = 27
    GE = 28
    FLT = 29
    FGT = 30
    FLE = 31
    FGE = 32
    MAKE_RECORD = 40
    EXTEND = 41
    GET_FIELD = 42
    MAKE_VARIANT = 43
    MAKE_ARRAY = 44
    ARRAY_GET = 45
    ARRAY_SET = 46
    MAKE_REF = 47
    DEREF = 48
    SET_REF = 49
    MAKE_CLOSURE = 50
    MAKE_REC = 51
    MAKE_REC_GLOBAL = 52
    CALL = 60
    CALL_RAW = 61
    TAIL_CALL = 62
    SELF_TAIL_CALL = 63
    RETURN = 64
    IF = 70
    MATCH_ARM = 71
    ELSE = 72
    END = 73
    MATCH_FAIL = 74
    LOOP = 75
    LOOP_TEST = 76
    END_LOOP = 77
    MODULE_NEW = 80
    MODULE_FILL = 81


BINARY = {
    Op.ADD, Op.SUB, Op.MUL, Op.DIV, Op.FADD, Op.FSUB, Op.FMUL, Op.FDIV, Op.CONCAT,
    Op.EQ, Op.NE, Op.EQ_PRIM, Op.NE_PRIM, Op.LT, Op.GT, Op.LE, Op.GE,
    Op.FLT, Op.FGT, Op.FLE, Op.FGE,
}

OPERANDS: dict[Op, tuple[str, ...]] = {op: () for op in Op}
OPERANDS.update({
    Op.CONST: ("k",), Op.LOAD_LOCAL: ("s",), Op.STORE_LOCAL: ("s",), Op.LOAD_FREE: ("i",),
    Op.LOAD_GLOBAL: ("g",), Op.STORE_GLOBAL: ("g",), Op.MAKE_RECORD: ("k",),
    Op.EXTEND: ("k",), Op.GET_FIELD: ("k",), Op.MAKE_VARIANT: ("k", "n"),
    Op.MAKE_ARRAY: ("n",), Op.MAKE_CLOSURE: ("c",), Op.MAKE_REC: ("k",),
    Op.MAKE_REC_GLOBAL: ("k",), Op.CALL: ("n",), Op.CALL_RAW: ("n",), Op.TAIL_CALL: ("n",),
    Op.SELF_TAIL_CALL: ("n",), Op.MATCH_ARM: ("k",), Op.MODULE_NEW: ("k",),
    Op.MODULE_FILL: ("k",),
})
"""The meaning of each opcode's operands (see the table above)."""

TERMINATORS = {Op.RETURN, Op.TAIL_CALL, Op.SELF_TAIL_CALL, Op.MATCH_FAIL}
"""Instructions after which control never falls through."""
