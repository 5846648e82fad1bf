"""The undo journal of transactional runs: record before mutating, roll back on failure.

A transactional run (:func:`chatml.vm.run.run_boundary` with
``transactional=True``) keeps a journal in ``METER.journal``; builtins and
compiled code call :func:`journal_item` / :func:`journal_ref` /
:func:`journal_whole` *before* mutating a pre-existing array, dict (Hashtbl)
or ref, and the boundary calls :func:`rollback` when the run fails, so the
host sees its ChatML state exactly as before the run (DECISIONS 5). Outside a
transactional run ``METER.journal`` is ``None`` and recording does nothing.
"""

from __future__ import annotations

from typing import Any

from chatml.limits import METER
from chatml.values import Value

_MISSING = object()
_WHOLE = object()
_REF = object()


def journal_item(container: list[Value] | dict[Any, Value], key: Any) -> None:
    """Record ``container[key]`` (absent keys too) before it is overwritten or removed."""
    journal = METER.journal
    if journal is not None:
        if isinstance(container, list):
            journal.append((container, key, container[key]))
        else:
            journal.append((container, key, container.get(key, _MISSING)))


def journal_ref(ref: Any) -> None:
    """Record a ref cell's content before ``:=`` or ``swap_ref`` changes it."""
    journal = METER.journal
    if journal is not None:
        journal.append((ref, _REF, ref.value))


def journal_whole(container: list[Value] | dict[Any, Value]) -> None:
    """Record a whole array or dict before an in-place bulk change (fill, sort, clear)."""
    journal = METER.journal
    if journal is not None:
        journal.append((container, _WHOLE, container.copy()))


def rollback(journal: list[tuple[Any, Any, Any]]) -> None:
    """Undo the journalled mutations, newest first."""
    for container, key, old in reversed(journal):
        if key is _REF:
            container.value = old
        elif key is _WHOLE:
            if isinstance(container, list):
                container[:] = old
            else:
                container.clear()
                container.update(old)
        elif old is _MISSING:
            container.pop(key, None)
        else:
            container[key] = old
    journal.clear()
