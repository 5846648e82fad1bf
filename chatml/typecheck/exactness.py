"""Whether a closed record type describes its values exactly (DECISIONS 6a).

At run time a *closed* record pattern ``{ a = x }`` matches only records with
exactly its fields. Two typing rules let a record value carry more fields than
its closed static type lists: the join of ``if``/``match`` branches drops the
fields one branch lacks (spec 4.7), and parameter reopening lets a helper
accept records wider than the closed record its body saw. The reference then
fails at run time with ``Non-exhaustive pattern match`` (quirk Q9 and its
relatives); here such programs are rejected statically.

Every :class:`~chatml.typecheck.types.TRecord` carries an :class:`Exactness` cell; cells
of unified records are merged (union-find), so what one learns the other
shares. A cell is

* *inexact* when its records may hold more fields than the type lists (a join
  that dropped fields or merged different tails, a reopened parameter, or a
  record that depends on an inexact one -- copy-update of an inexact base, a
  join of an inexact branch);
* *relied upon* when a closed record pattern was counted as covering all its
  records (exhaustiveness).

A closed record pattern covers only exact records; merging an inexact cell
with a relied-upon one is a type error (``chatml.inexact_record``); a
parameter whose record something relies upon is not reopened.
"""

from __future__ import annotations

from chatml.typecheck.types import Exactness

__all__ = ["Exactness", "can_become_inexact", "depends", "mark_inexact", "merge", "rely",
           "root"]


def root(cell: Exactness) -> Exactness:
    while cell.link is not None:
        parent = cell.link
        if parent.link is not None:
            cell.link = parent.link
        cell = parent
    return cell


def _spread(start: Exactness) -> bool:
    """Mark ``start``'s representative and everything depending on it inexact."""
    stack = [start]
    while stack:
        cell = root(stack.pop())
        if cell.relied:
            return False
        cell.inexact = True
        dependents = cell.dependents
        if dependents:
            cell.dependents = None
            stack.extend(dependents)
    return True


def mark_inexact(cell: Exactness) -> bool:
    """Record that the records of ``cell`` may hold unlisted fields; False on a conflict."""
    return _spread(cell)


def can_become_inexact(cell: Exactness) -> bool:
    """Whether marking ``cell`` inexact would not contradict a closed pattern relying on it."""
    seen: set[int] = set()
    stack = [root(cell)]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if current.relied:
            return False
        if current.dependents:
            stack.extend(root(d) for d in current.dependents)
    return True


def rely(cell: Exactness) -> bool:
    """Count on the records of ``cell`` having exactly their fields; False if they may not."""
    representative = root(cell)
    if representative.inexact:
        return False
    representative.relied = True
    return True


def depends(source: Exactness, target: Exactness) -> bool:
    """``target`` becomes inexact whenever ``source`` does; False on a conflict."""
    source_root = source if source.link is None else root(source)  # (a root needs no call)
    if source_root.inexact:
        return mark_inexact(target)
    if source_root.dependents is None:
        source_root.dependents = [target]
    else:
        source_root.dependents.append(target)
    return True


def merge(a: Exactness, b: Exactness) -> bool:
    """Merge the cells of two unified record types; False on a conflict."""
    ra = a if a.link is None else root(a)  # (a root needs no call)
    rb = b if b.link is None else root(b)
    if ra is rb:
        return True
    if (ra.relied and rb.inexact) or (rb.relied and ra.inexact):
        return False
    rb.link = ra
    ra.relied = ra.relied or rb.relied
    if rb.dependents:
        if ra.dependents is None:
            ra.dependents = rb.dependents
        else:
            ra.dependents.extend(rb.dependents)
    rb.dependents = None
    if ra.inexact or rb.inexact:
        return _spread(ra)
    return True
