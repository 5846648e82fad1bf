"""Entry ids and the allocator that hands them out (moderator-runtime spec 0).

An entry id is the text ``"<byte length of namespace>:<namespace>:<sequence>"``
(``"13:abc.md/stream:7"``): application-owned, unrelated to a provider item
``id`` or a tool ``call_id``. :class:`EntryAllocator` gives ids of one
namespace from a sequence that never moves backwards; it is thread-safe and
reserves N consecutive ids atomically (a failed reservation does not
advance). An :class:`Entry` is one canonical history occurrence: an entry id
and a Responses item (a JSON object as Python data).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import attrs

from chatcommon.numbers import parse_int

Item = Mapping[str, Any]
"""A Responses API item as Python JSON data."""


class InvalidEntryId(ValueError):
    """Text that is not ``<len>:<namespace>:<seq>``."""


@attrs.frozen(order=True)
class EntryId:
    """A parsed entry id: namespace and sequence number."""

    namespace: str
    sequence: int

    def __attrs_post_init__(self) -> None:
        if not self.namespace:
            raise InvalidEntryId("an entry id needs a non-empty namespace")
        if self.sequence < 0:
            raise InvalidEntryId("an entry id's sequence is a non-negative integer")

    def __str__(self) -> str:
        return f"{len(self.namespace.encode('utf-8'))}:{self.namespace}:{self.sequence}"

    @classmethod
    def parse(cls, text: str) -> EntryId:
        """Read ``<len>:<namespace>:<seq>``; :class:`InvalidEntryId` says what is wrong."""
        data = text.encode("utf-8", "surrogatepass")
        colon = data.find(b":")
        length_text = data[:colon]
        if colon <= 0 or not _is_number(length_text):
            raise InvalidEntryId(f"invalid entry id {text!r}: expected "
                                 "<byte length>:<namespace>:<sequence>, e.g. 7:session:12")
        length = parse_int(length_text)
        if length is None:
            raise InvalidEntryId(f"invalid entry id {text[:40]!r}...: the namespace length has "
                                 "too many digits")
        end = colon + 1 + length
        if length == 0 or end >= len(data) or data[end:end + 1] != b":":
            raise InvalidEntryId(f"invalid entry id {text!r}: the length {length} does not "
                                 "match the namespace that follows it")
        if not _is_number(data[end + 1:]):
            raise InvalidEntryId(f"invalid entry id {text!r}: the sequence must be a decimal "
                                 "number without leading zeros")
        sequence = parse_int(data[end + 1:])
        if sequence is None:
            raise InvalidEntryId(f"invalid entry id {text[:40]!r}...: the sequence has too many "
                                 "digits")
        return cls(data[colon + 1:end].decode("utf-8", "surrogatepass"), sequence)


def _is_number(text: bytes) -> bool:
    return (bool(text) and text.isdigit() and text.isascii()
            and (text == b"0" or not text.startswith(b"0")))


def is_entry_id(text: str) -> bool:
    try:
        EntryId.parse(text)
    except InvalidEntryId:
        return False
    return True


class EntryAllocator:
    """Hands out entry ids of one namespace, in order; thread-safe, never backwards."""

    def __init__(self, namespace: str, next_sequence: int = 0) -> None:
        EntryId(namespace, next_sequence)  # validates both
        self.namespace = namespace
        self._next = next_sequence
        self._lock = threading.Lock()

    @property
    def next_sequence(self) -> int:
        """The sequence the next id will get."""
        with self._lock:
            return self._next

    def allocate(self) -> str:
        """One fresh id."""
        return self.reserve(1)[0]

    def reserve(self, count: int) -> list[str]:
        """``count`` consecutive fresh ids, all at once (``count`` < 0 raises, nothing taken)."""
        if count < 0:
            raise ValueError(f"cannot reserve {count} entry ids")
        with self._lock:
            start = self._next
            self._next = start + count
        return [str(EntryId(self.namespace, start + offset)) for offset in range(count)]

    def advance_past(self, entry_ids: list[str]) -> None:
        """Make sure later ids follow every id of this namespace in ``entry_ids`` (restores)."""
        highest = -1
        for text in entry_ids:
            try:
                parsed = EntryId.parse(text)
            except InvalidEntryId:
                continue
            if parsed.namespace == self.namespace:
                highest = max(highest, parsed.sequence)
        with self._lock:
            self._next = max(self._next, highest + 1)


@attrs.frozen
class Entry:
    """One canonical history occurrence: an entry id and its Responses item."""

    entry_id: str
    item: Item

    def to_json(self) -> dict[str, Any]:
        return {"entry_id": self.entry_id, "item": dict(self.item)}


__all__ = ["Entry", "EntryAllocator", "EntryId", "InvalidEntryId", "Item", "is_entry_id"]
