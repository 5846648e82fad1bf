"""What the translator knows about ``Hashtbl`` tables between inline operations.

An inline ``Hashtbl.get``/``mem``/``set`` (:func:`chatml.vm.intrinsics.hashtbl_lines`)
first tests that the table is in its dict form and the key a string, then
measures the dict. When a later operation in the same body works on the same
table variable, and nothing that runs in between can take the table out of
its dict form (only a call, ``!t``, ``t := a``, an equality test or another
table's ``set`` can), the later operation needs none of that: the first one
left the dict in a variable (``None`` when it took the builtin's path), the
keys it tested are strings, and after a ``get`` or ``mem`` the length is
unchanged. :class:`TableFacts` tracks this along the translation of one body:

* a fact holds from the operation that made it to the end of the innermost
  block it was made in, and at the start of every branch of a block that
  begins after it;
* anything that could invalidate a fact (an instruction outside a short list
  of ones that run no other code, a store into the table's or a key's
  variable, a loop's start or end) forgets it; a block in which anything was
  forgotten forgets everything made before it when it ends (``epoch``).

So every operation that uses a fact is dominated by the one that made it,
with nothing between them that could have changed what it recorded.
"""

from __future__ import annotations

import attrs

from chatml.bytecode.opcodes import Op
from chatml.vm.intervals import Operand, Var
from chatml.vm.intrinsics import NO_ACCESS, TableAccess

KEEP = frozenset({
    Op.CONST, Op.LOAD_LOCAL, Op.LOAD_FREE, Op.LOAD_GLOBAL, Op.POP,
    Op.ADD, Op.SUB, Op.MUL, Op.NEG, Op.DIV, Op.FADD, Op.FSUB, Op.FMUL, Op.FNEG, Op.FDIV,
    Op.LT, Op.GT, Op.LE, Op.GE, Op.FLT, Op.FGT, Op.FLE, Op.FGE, Op.EQ_PRIM, Op.NE_PRIM,
    Op.CONCAT, Op.MAKE_RECORD, Op.EXTEND, Op.GET_FIELD, Op.MAKE_VARIANT, Op.MAKE_ARRAY,
    Op.ARRAY_GET, Op.ARRAY_SET, Op.MAKE_REF, Op.IF, Op.MATCH_ARM, Op.ELSE, Op.END,
    Op.MATCH_FAIL, Op.RETURN, Op.TAIL_CALL, Op.SELF_TAIL_CALL,
})
"""Instructions that run no code but the generated lines (they fail or go on; a
``RETURN`` or tail call ends the path). ``STORE_LOCAL`` and the calls are decided
one by one, everything else forgets every fact."""


@attrs.frozen
class Fact:
    pairs: str
    """The Python variable holding the table's dict, or ``None`` at run time."""
    keys: frozenset[str]
    """Key atoms an operation on the inline path tested to be strings."""
    length: str | None
    """A Python variable holding the dict's length, while that is unchanged."""
    reads: frozenset[Var]
    """The variables of the table and of those keys."""


class TableFacts:
    """The facts at the current point of one body's translation (table atom -> fact)."""

    def __init__(self) -> None:
        self.known: dict[str, Fact] = {}
        self.epoch = 0
        """Bumped whenever a fact is forgotten or changed."""
        self.saved: dict[int, tuple[dict[str, Fact], int]] = {}
        """Block (by ``id``) -> the facts and the epoch where it began."""
        self.names = 0

    def forget(self, keep: dict[str, Fact] | None = None) -> None:
        if self.known:
            self.epoch += 1
        self.known = keep or {}

    def stored(self, var: Var) -> None:
        """``var`` is assigned: forget the facts that depend on it."""
        kept = {atom: fact for atom, fact in self.known.items() if var not in fact.reads}
        if len(kept) != len(self.known):
            self.forget(kept)

    def began(self, block: object) -> None:
        self.saved[id(block)] = (dict(self.known), self.epoch)

    def branch(self, block: object) -> None:
        """A block's next branch begins: the facts where the block began."""
        self.known = dict(self.saved[id(block)][0])

    def ended(self, block: object) -> None:
        known, epoch = self.saved.pop(id(block))
        if epoch == self.epoch:
            self.known = known
        else:
            self.forget()

    def _name(self, prefix: str) -> str:
        self.names += 1
        return f"{prefix}{self.names}"

    def access(self, kind: str, table: Operand, key: Operand, key_is_text: bool) -> TableAccess:
        """The :class:`TableAccess` of an inline operation ``kind`` on ``table`` and ``key``
        (``key_is_text``: the key is known to be a string), recording what it leaves
        known."""
        writes = kind == "hashtbl_set"
        if table.var is None or table.deferred:
            if writes:
                self.forget()
            return NO_ACCESS
        stable = key.var is not None or key_is_text
        fact = self.known.get(table.text)
        if writes:  # may grow this table, or spill another one that is the same table
            self.forget({table.text: fact} if fact is not None else None)
        if fact is None:
            pairs = self._name("_hp")
            length = None if writes else self._name("_hn")
            access = TableAccess(key_is_str=key_is_text, remember=pairs, remember_length=length)
            self.known[table.text] = Fact(
                pairs, frozenset({key.text}) if stable else frozenset(), length,
                frozenset(v for v in (table.var, key.var) if v is not None))
            return access
        key_is_str = key_is_text or key.text in fact.keys
        length, remember_length = fact.length, None
        if length is None and not writes:
            length = remember_length = self._name("_hn")
        access = TableAccess(pairs=fact.pairs, key_is_str=key_is_str, length=fact.length,
                             remember=fact.pairs if writes else None,
                             remember_length=remember_length)
        keys = fact.keys | {key.text} if stable else fact.keys
        reads = fact.reads | {key.var} if key.var is not None else fact.reads
        updated = Fact(fact.pairs, keys, None if writes else length, reads)
        if updated != fact:
            if writes:
                self.epoch += 1
            self.known[table.text] = updated
        return access
