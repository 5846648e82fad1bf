"""How long a printed type may be: one process-wide bound, shared by both toolchains.

ChatML types can be exponentially long when written out (issue 15), so every
message and ``val`` line prints a type cut at :data:`TYPE_LENGTH_LIMIT`
characters, with a marker saying how much was left out. Machine-readable
output (``--format json``) and ``chatml check --full-types`` lift the bound
with :func:`type_length_limited`. It lives here, not in ``chatml``, so that
``chatmdc`` (which never imports ``chatml``) can lift it for the moderator
scripts it checks. A plain global, not a context variable: the checker may
run on a helper thread, which starts with a fresh context.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

#: The default bound on the length of one printed type, in characters.
TYPE_LENGTH_LIMIT = 2000

_limit: list[int | None] = [TYPE_LENGTH_LIMIT]


def type_length_limit() -> int | None:
    """The bound in force (None: types print in full)."""
    return _limit[0]


@contextmanager
def type_length_limited(limit: int | None) -> Iterator[None]:
    """Bound printed types to ``limit`` characters inside the block (None: no bound)."""
    previous = _limit[0]
    _limit[0] = limit
    try:
        yield
    finally:
        _limit[0] = previous


def elide(text: str, limit: int | None = None) -> str:
    """``text`` cut at the bound, with a marker saying how much was left out."""
    bound = _limit[0] if limit is None else limit
    if bound is None or len(text) <= bound:
        return text
    left_out = len(text) - bound
    return (f"{text[:bound]} ...[{left_out} more characters of this type; "
            "--full-types or --format json shows it all]")
