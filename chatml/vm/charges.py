"""Batched memory charges: one meter update for a straight run of allocations.

Every allocation is charged where it happens (:mod:`chatml.limits`); a string
of ``n`` code points costs ``(COST["string"] + n + WORD - 1) // WORD`` words.
Charged one by one, a line like ``"key" ++ to_string(i) ++ "="`` pays a meter
read, write and test -- and a generic shift -- per string. The translator
instead collects the charges of a run of instructions that cannot fail or
be observed (see ``_BATCHED`` in :mod:`chatml.vm.translate`) into a
:class:`Batch` and charges their exact sum once, when the run ends.

What keeps this exact:

* **the amount** -- the sum of the very word counts the instructions would
  have charged: constants are added up at translation time, and the length of
  a string is known as ``fixed + len(part) + ...`` over *parts* of bounded
  length (the text of an int, a literal), so the words of every string of the
  batch are looked up in one precomputed table indexed by the parts' lengths
  (:meth:`Batch.total`); otherwise ``STRING_WORDS[len(s)]`` per string;
* **the failure** -- when the sum takes the budget below zero, the slow path
  gives it back and *replays* the charges one by one, each on a generated line
  mapped to its own instruction: the run stops at the first allocation that
  runs out, with that instruction's position, exactly as unbatched code would
  (and an unlimited run refills at the same points). An integer-overflow
  check inside a batch replays the pending charges before raising, so a memory
  failure that comes first still wins (:func:`replay_lines`);
* **real memory** -- only strings whose length is statically bounded by
  :data:`MAX_TEXT` are deferred, so a batch builds at most a few kilobytes
  before it is charged; any other charge ends the batch at once.
"""

from __future__ import annotations

from typing import Any

import attrs

from chatml.limits import COST, WORD

MAX_TEXT = 1024
"""The longest string (code points) whose charge may be deferred to the end of a batch."""

STRING_WORDS = tuple((COST["string"] + n + WORD - 1) // WORD for n in range(MAX_TEXT + 1))
"""Words charged for a new string of ``n`` code points (``_W`` in generated code)."""

INT_TEXT = len(str(-(2**62)))
"""The longest text of a ChatML int (``to_string(min_int)``: 20 code points)."""

TABLE_LIMIT = 4096
"""The largest per-batch table (entries) :meth:`Batch.total` builds."""

Where = tuple[int, int]


@attrs.frozen
class Text:
    """What is known of a string atom: its length is ``fixed`` plus ``len(p)`` for each
    atom ``p`` of ``parts`` (with multiplicity), and at most ``bound``."""

    fixed: int
    parts: tuple[tuple[str, int], ...]
    """(atom, the most code points it can hold)."""
    bound: int

    def __add__(self, other: Text) -> Text:
        return Text(self.fixed + other.fixed, self.parts + other.parts, self.bound + other.bound)


@attrs.frozen
class _Item:
    words: int = 0
    """A constant charge (words)."""
    atom: str = ""
    """A string charge: the new string (with ``text``)."""
    text: Text | None = None
    code: str = ""
    """Any other charge: its words as an expression."""
    where: Where = (0, 0)

    def expression(self) -> str:
        """The words of this one charge, as generated code."""
        if self.code:
            return self.code
        if self.text is None:
            return str(self.words)
        if not self.text.parts:
            return str(STRING_WORDS[self.text.fixed])
        return f"_W[len({self.atom})]"


class Batch:
    """The charges collected since the last meter update."""

    def __init__(self) -> None:
        self.items: list[_Item] = []

    def __bool__(self) -> bool:
        return bool(self.items)

    def add_words(self, words: int, where: Where) -> None:
        self.items.append(_Item(words=words, where=where))

    def add_string(self, atom: str, text: Text, where: Where) -> None:
        """The new string ``atom`` (``text.bound`` must be at most :data:`MAX_TEXT`)."""
        assert text.bound <= MAX_TEXT
        self.items.append(_Item(atom=atom, text=text, where=where))

    def add_expression(self, code: str, where: Where) -> None:
        """A charge of ``code`` words, computed at run time (the caller flushes at once)."""
        self.items.append(_Item(code=code, where=where))

    def total(self, constants: dict[str, Any]) -> str:
        """The sum of the charges as one expression (tables it needs go into ``constants``)."""
        total = self._strings_and_words(constants)
        codes = [f"({item.code})" for item in self.items if item.code]
        return " + ".join(([total] if total != "0" or not codes else []) + codes)

    def _strings_and_words(self, constants: dict[str, Any]) -> str:
        fixed = 0
        strings: list[Text] = []
        for item in self.items:
            if item.code:
                continue
            if item.text is None:
                fixed += item.words
            elif not item.text.parts:
                fixed += STRING_WORDS[item.text.fixed]
            else:
                strings.append(item.text)
        if not strings:
            return str(fixed)
        parts: dict[str, int] = {}
        for text in strings:
            for atom, bound in text.parts:
                parts[atom] = bound
        names = list(parts)
        sizes = [parts[name] + 1 for name in names]
        if len(names) == 1 and sizes[0] <= TABLE_LIMIT:
            table = tuple(fixed + _words(strings, names, (n,)) for n in range(sizes[0]))
            return f"{_table(constants, table)}[len({names[0]})]"
        if len(names) == 2 and sizes[0] * sizes[1] <= TABLE_LIMIT:
            table = tuple(fixed + _words(strings, names, (a, b))
                          for a in range(sizes[0]) for b in range(sizes[1]))
            return (f"{_table(constants, table)}[len({names[0]}) * {sizes[1]} "
                    f"+ len({names[1]})]")
        terms = [item.expression() for item in self.items if item.text and item.text.parts]
        return " + ".join(([str(fixed)] if fixed else []) + terms)

    def take(self) -> list[_Item]:
        """The collected charges (the batch is empty afterwards)."""
        items, self.items = self.items, []
        return items


def _words(strings: list[Text], names: list[str], lengths: tuple[int, ...]) -> int:
    """The words of ``strings`` when the part atoms ``names`` have ``lengths``."""
    length_of = dict(zip(names, lengths, strict=True))
    total = 0
    for text in strings:
        n = text.fixed + sum(length_of[atom] for atom, _ in text.parts)
        total += STRING_WORDS[min(n, MAX_TEXT)]  # (n <= text.bound <= MAX_TEXT)
    return total


def _table(constants: dict[str, Any], table: tuple[int, ...]) -> str:
    name = f"_bw{len(constants)}"
    while name in constants:
        name += "_"
    constants[name] = table
    return name


def replay_lines(items: list[_Item]) -> list[tuple[str, Where]]:
    """Charge ``items`` one by one (the slow path): (line, where) pairs."""
    lines = []
    for item in items:
        lines.append((f"_M.memory = _m = _M.memory - ({item.expression()})", item.where))
        lines.append(("if _m < 0: _M.out_of_memory()", item.where))
    return lines
