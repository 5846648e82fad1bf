"""When the cyclic garbage collector runs: paused for allocation-heavy phases, off for CLI runs.

Parsers build large acyclic trees; CPython's generational collector would scan
them again and again while they grow (nearly half the frontend's time on a
5 MB transcript). Trees have no reference cycles, so pausing collection while
building one loses nothing; collection resumes (if it was on) afterwards
(:func:`gc_paused`). A large tree built that way is then moved to the oldest
generation unscanned: otherwise the very next (young) collection would walk
the whole new tree at once -- 10-15% of checking a 5,000-line ChatML program --
only to find it alive, as the caller is still holding it.

A command-line run that does one batch job and exits (``chatmdc check``,
``chatml check``) needs no cyclic collection at all: :func:`one_shot_process`
turns it off for the rest of the process (about 5% of a ``chatml check``: the
collector would walk every class and function the imports create, repeatedly)
and spares the interpreter its final full collection at exit (another 6%),
whose only effect would be to free memory that the exit frees anyway.
"""

from __future__ import annotations

import atexit
import gc
from collections.abc import Iterator
from contextlib import contextmanager

#: From this many young objects left by a pause on, they are promoted instead of scanned.
_PROMOTE_AT = 10_000


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the duration of the block.

    When collection resumes after a block that left many young objects (a
    tree was built), they all join the oldest generation without being
    scanned: ``gc.freeze()`` then ``gc.unfreeze()``, two list splices. They
    are examined by the next full collection, like any object that lived long
    enough. Small blocks resume normally, so that frequent short pauses (a
    host parsing small JSON values) keep young collections useful. Skipped
    while the process keeps frozen objects of its own (a host that called
    ``gc.freeze()``), which ``unfreeze`` would release.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if gc.get_count()[0] >= _PROMOTE_AT and not gc.get_freeze_count():
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def one_shot_process() -> None:
    """Switch the cyclic collector off for the rest of this process, including its exit.

    Only for a process that runs one batch job and then exits (a CLI command
    run as a program, never a library call or a long-lived session):
    reference counting still frees every acyclic object at once, and what a
    short run leaves in cycles is returned to the system at exit. Objects
    alive at exit are frozen (``gc.freeze``) so that the interpreter's
    closing collection has nothing to walk; standard streams are still
    flushed and ``atexit`` handlers still run.
    """
    gc.disable()
    atexit.register(gc.freeze)
