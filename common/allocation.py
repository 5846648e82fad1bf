"""Allocation-heavy phases run with the cyclic garbage collector paused.

Parsers build large acyclic trees; CPython's generational collector would scan
them again and again while they grow (nearly half the frontend's time on a
5 MB transcript). Trees have no reference cycles, so pausing collection while
building one loses nothing; collection resumes (if it was on) afterwards.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the duration of the block."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
