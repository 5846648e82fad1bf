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
``chatml check``, ``chatml compile``, ``chatml dis``) needs no cyclic collection at all: :func:`one_shot_process`
turns it off for the rest of the process (about 5% of a ``chatml check``: the
collector would walk every class and function the imports create, repeatedly)
and spares the interpreter its final full collection at exit (another 6%),
whose only effect would be to free memory that the exit frees anyway.
For the same reason such a process may end with :func:`end_one_shot_process`:
what it built (:func:`hold_until_exit`; a 12 MB transcript's tree is a million
objects, a tenth of checking it) is dropped with the process instead of being
freed object by object.
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress

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
    global _one_shot
    _one_shot = True
    gc.disable()
    atexit.register(gc.freeze)


_one_shot = False
_held: list[object] = []


def hold_until_exit(value: object) -> None:
    """In a one-shot process, keep ``value`` alive until :func:`end_one_shot_process`.

    Outside one (a library call, a test), this does nothing: ``value`` is freed
    as usual when its last reference goes.
    """
    if _one_shot:
        _held.append(value)


def end_one_shot_process(status: int) -> int:
    """End a one-shot process now with exit ``status``, skipping the interpreter's teardown.

    Standard output and error are flushed and the ``atexit`` handlers run, as at
    a normal exit; then the process ends (``os._exit``) without freeing its
    objects one by one. Returns ``status`` -- and ends nothing -- outside a
    one-shot process or while another thread is running, so that a caller may
    always ``return end_one_shot_process(status)``.
    """
    threading = sys.modules.get("threading")
    if not _one_shot or (threading is not None and threading.active_count() > 1):
        return status
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):  # a closed or broken pipe: nothing more to write
            stream.flush()
    atexit._run_exitfuncs()
    os._exit(status)
