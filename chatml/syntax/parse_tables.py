"""LALR tables for :mod:`chatml.syntax.grammar`: built once with ply.yacc, then cached per user.

ply.yacc's table generator (``Grammar`` + ``LRGeneratedTable``) is used
directly, without ``ply.yacc.yacc()``, so nothing is ever written to the
working directory (no ``parser.out``, no ``parsetab.py``) and nothing is
logged. The resulting action/goto tables are marshalled into
``$XDG_CACHE_HOME/chatml/`` (or ``~/.cache/chatml/``), in a file named after
:func:`chatml.syntax.grammar.signature`, and written atomically (tables of older
grammars are removed then). A missing, corrupt
or stale cache file is ignored and the tables are rebuilt; when the cache
folder is not writable the tables live in memory only. ply is imported only
when tables must be built.
"""

from __future__ import annotations

import contextlib
import marshal
import os

import attrs

from chatml.syntax import grammar
from chatml.syntax.tokens import EOF, TERMINALS

ACCEPT = 1 << 30  #: the action that accepts the input


@attrs.frozen
class Tables:
    """The LR automaton as dense integer tables.

    ``action[state][terminal id]`` is ``n > 0`` to shift and go to state ``n``,
    ``-p`` to reduce by production ``p``, :data:`ACCEPT`, or 0 for a syntax
    error; ``terminal_ids`` maps token kinds to terminal ids. Production ``p``
    (0 is ply's augmented start rule) has left-hand side ``lhs[p]``,
    ``length[p]`` symbols, and after reducing it in a stack whose top state is
    ``s`` the parser goes to ``goto[p][s]``.
    """

    terminals: list[str]
    action: list[list[int]]
    goto: list[list[int]]
    lhs: list[str]
    length: list[int]
    sr_conflicts: list[tuple[int, str, str]] = attrs.field(factory=list)
    rr_conflicts: list[tuple[int, str, str]] = attrs.field(factory=list)
    terminal_ids: dict[str, int] = attrs.field(init=False)
    #: ``action`` with *default reductions*: a state whose only move is one reduction
    #: reduces whatever the lookahead (as Menhir and ply do); what the parser runs on.
    run_action: list[list[int]] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        run_action = []
        for row in self.action:
            moves = set(row) - {0}
            only = next(iter(moves)) if len(moves) == 1 else 0
            run_action.append([only] * len(row) if only < 0 else row)
        object.__setattr__(self, "run_action", run_action)
        object.__setattr__(self, "terminal_ids", {t: i for i, t in enumerate(self.terminals)})


class GrammarConflictError(Exception):
    """The grammar left a conflict to ply's defaults (a bug in :mod:`chatml.syntax.grammar`)."""


def default_cache_dir() -> str | None:
    """``$XDG_CACHE_HOME/chatml`` or ``~/.cache/chatml`` (None when there is no home).

    Plain ``os.path``: importing pathlib would cost ``chatml check`` more start-up
    time than loading the tables.
    """
    base = os.environ.get("XDG_CACHE_HOME", "")
    if base and os.path.isabs(base):
        return os.path.join(base, "chatml")
    home = os.path.expanduser("~")
    if home == "~":  # neither $HOME nor a password entry
        return None
    return os.path.join(home, ".cache", "chatml")


def build_tables() -> Tables:
    """Generate the LALR tables with ply.yacc (takes about a second)."""
    from ply.yacc import Grammar, LRGeneratedTable, NullLogger

    g = Grammar(list(TERMINALS))
    for level, (assoc, *terms) in enumerate(grammar.PRECEDENCE, start=1):
        for term in terms:
            g.set_precedence(term, assoc, level)
    for number, prod in enumerate(grammar.productions(), start=1):
        symbols = list(prod.symbols) + (["%prec", prod.prec] if prod.prec else [])
        g.add_production(prod.lhs, symbols, file="chatml/syntax/grammar.py", line=number)
    g.set_start(grammar.START)
    undefined = g.undefined_symbols()
    if undefined:
        raise GrammarConflictError(f"undefined grammar symbols: {undefined}")
    table = LRGeneratedTable(g, "LALR", NullLogger())
    terminals = [*TERMINALS, EOF]
    states = range(len(table.lr_action))
    action = []
    for state in states:
        row = table.lr_action[state]
        dense = []
        for terminal in terminals:
            move = row.get(terminal)
            dense.append(0 if move is None else ACCEPT if move == 0 else move)
        action.append(dense)
    productions = table.lr_productions
    goto = [[table.lr_goto[state].get(p.name, 0) for state in states] for p in productions]
    return Tables(
        terminals=terminals,
        action=action,
        goto=goto,
        lhs=[p.name for p in productions],
        length=[p.len for p in productions],
        sr_conflicts=[(s, t, r) for s, t, r in table.sr_conflicts],
        rr_conflicts=[(s, str(a), str(b)) for s, a, b in table.rr_conflicts],
    )


def _cache_path(cache_dir: str | os.PathLike[str]) -> str:
    return os.path.join(cache_dir, f"parser-{grammar.signature()}.marshal")


def _expected_shape() -> tuple[list[str], list[int]]:
    prods = grammar.productions()
    return ["S'"] + [p.lhs for p in prods], [1] + [len(p.symbols) for p in prods]


def _decode(data: bytes) -> Tables | None:
    try:
        value = marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        return None
    if not (isinstance(value, tuple) and len(value) == 6 and value[0] == grammar.signature()):
        return None
    _, terminals, action, goto, lhs, length = value
    if terminals != [*TERMINALS, EOF] or (lhs, length) != _expected_shape():
        return None
    if not (isinstance(action, list) and isinstance(goto, list) and len(goto) == len(lhs)
            and all(isinstance(row, list) and len(row) == len(terminals) for row in action)
            and all(isinstance(row, list) and len(row) == len(action) for row in goto)):
        return None
    return Tables(terminals=terminals, action=action, goto=goto, lhs=lhs, length=length)


def _encode(tables: Tables) -> bytes:
    return marshal.dumps((grammar.signature(), tables.terminals, tables.action, tables.goto,
                          tables.lhs, tables.length))


_memory: Tables | None = None


def load_tables(cache_dir: str | os.PathLike[str] | None = "default") -> Tables:
    """The parser tables: from memory, else from the cache file, else freshly built.

    ``cache_dir`` overrides the cache folder (None: do not use a cache file).
    """
    global _memory
    if _memory is not None and cache_dir == "default":
        return _memory
    folder = default_cache_dir() if cache_dir == "default" else cache_dir
    path = _cache_path(folder) if folder is not None else None
    tables: Tables | None = None
    if path is not None:
        try:
            with open(path, "rb") as handle:
                tables = _decode(handle.read())
        except OSError:
            tables = None
    if tables is None:
        tables = build_tables()
        if path is not None:
            from chatcommon.atomic import atomic_write_bytes  # tempfile is slow to import

            with contextlib.suppress(OSError):
                atomic_write_bytes(path, _encode(tables))
                folder, current = os.path.split(path)
                for name in os.listdir(folder):
                    if (name.startswith("parser-") and name.endswith(".marshal")
                            and name != current):  # tables of an older grammar
                        os.unlink(os.path.join(folder, name))
    if cache_dir == "default":
        _memory = tables
    return tables
