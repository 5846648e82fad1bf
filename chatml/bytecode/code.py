"""Code objects and the compiled module: what the compiler produces and the VM loads.

A :class:`CodeObject` is one function body (code 0 of a module is the top
level): its instructions, a source position for *every* instruction (the
line table), its parameters, locals and captures. A :class:`CompiledModule`
is a whole script: code objects, one constant pool, the global slots, and
what it was compiled from (source hash, surface).
"""

from __future__ import annotations

import hashlib

import attrs

from chatml.bytecode.opcodes import Op

FORMAT_VERSION = 1
"""Bumped whenever the instruction set or the serialised layout changes."""

#: How deep a match pattern may nest in bytecode: the compiler refuses deeper patterns
#: (``chatml.too_deep`` at the first sub-pattern past it) and the verifier rejects them in
#: a bytecode file. Every walk of a pattern (compiling, encoding, verifying, translating,
#: matching) uses an explicit stack, so this is a size policy, not a stack limit.
MAX_PATTERN_DEPTH = 5_000

Instruction = tuple[int, int, int]
Position = tuple[int, int, int, int]
"""(line, column, end line, end column), 1-based, as reported to users."""

LOCAL = 0
FREE = 1


@attrs.frozen
class CodeObject:
    """One compiled function (or the top level).

    ``captures[i]`` says where capture ``i`` comes from in the *enclosing*
    code: ``(LOCAL, slot)`` or ``(FREE, index)``. ``self_loop`` is true when
    the code contains ``SELF_TAIL_CALL`` (its body becomes a loop);
    ``may_bounce`` when it can return a tail call.
    """

    name: str
    arity: int
    n_locals: int
    captures: tuple[tuple[int, int], ...]
    instructions: tuple[Instruction, ...]
    positions: tuple[Position, ...]
    self_loop: bool = False
    may_bounce: bool = False
    parent: int = -1


@attrs.frozen
class CompiledModule:
    """A whole compiled script."""

    source_name: str
    source_hash: str
    surface: str
    consts: tuple[object, ...]
    codes: tuple[CodeObject, ...]
    global_names: tuple[str, ...]
    """Display name of every global slot."""
    builtin_slots: tuple[tuple[int, str], ...]
    """Global slots filled from the surface before the run: (slot, name)."""
    version: int = FORMAT_VERSION

    def instruction_count(self) -> int:
        return sum(len(code.instructions) for code in self.codes)


def op_name(opcode: int) -> str:
    try:
        return Op(opcode).name
    except ValueError:
        return f"<bad opcode {opcode}>"


def source_hash(text: str) -> str:
    """The SHA-256 hex digest of a source text (what a compiled module records)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
