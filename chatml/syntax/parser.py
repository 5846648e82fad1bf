"""The ChatML parser: source text to a :class:`~chatml.ast.Program` plus warnings.

Public API::

    parse_program(text, *, source=None, name="<string>") -> ParseResult
    parse_source(source) -> ParseResult

Both return a :class:`ParseResult` (the program and the *warning*
diagnostics) or raise :class:`~chatcommon.diagnostics.DiagnosticError` whose
first diagnostic is the (single) error -- lexical, syntax
(``chatml.syntax_error``) or an error production
(``chatml.unexpected_dot``, ``chatml.unsupported_bang_eq``) -- followed by the
warnings reported before it. Every diagnostic has ``phase="parse"``. Nothing
else escapes: any other exception is a bug. The warnings are the lexer's
``chatml.unknown_escape`` and the grammar surprises of DECISIONS 6b
(:mod:`chatml.syntax.parse_warnings`), sorted by position.

Positions: pass ``source`` to parse a script embedded in another file (a
``<script>`` body inside a ChatMD prompt) -- a
:class:`~chatcommon.sources.SourceFile` over the script text whose
``line_offset``/``first_line_column_offset`` place it in the enclosing file;
spans are offsets into the script text and report lines and columns of the
enclosing file.

The grammar (:mod:`chatml.syntax.grammar`) is compiled to LALR tables by ply.yacc
once and cached (:mod:`chatml.syntax.parse_tables`); this module's LR driver runs
those tables directly, calling :mod:`chatml.syntax.parse_actions` on each
reduction (with the garbage collector paused: the tree has no cycles). It
never recurses, so deeply nested input cannot overflow the Python stack here
(later phases that walk the tree recursively may).
"""

from __future__ import annotations

from typing import Any

import attrs

from chatcommon.allocation import gc_paused
from chatcommon.diagnostics import Diagnostic, DiagnosticError
from chatcommon.records import fast_constructor
from chatcommon.sources import SourceFile, Span
from chatml.ast import (
    Bool,
    Float,
    Int,
    PBool,
    PFloat,
    PInt,
    Program,
    PString,
    PVar,
    String,
    TName,
    Var,
)
from chatml.syntax import grammar
from chatml.syntax.errors import syntax_error
from chatml.syntax.lexer import TokenStream, lex
from chatml.syntax.parse_actions import Actions
from chatml.syntax.parse_tables import ACCEPT, Tables, load_tables

__all__ = ["ParseResult", "parse_program", "parse_source"]


@attrs.frozen
class ParseResult:
    """A parsed program and the warnings the lexer and parser reported."""

    program: Program
    diagnostics: tuple[Diagnostic, ...]
    source: SourceFile = attrs.field(eq=False, repr=False)


# How the driver reduces each production (see _plan()).
_CALL, _PICK, _UNIT, _LEAF, _SINGLE, _APPEND, _APPEND_SKIP, _EMPTY = range(8)

#: Productions ``x : TERMINAL`` that build ``cls(token value, span)`` directly (through
#: :func:`chatcommon.records.fast_constructor`: the same node, made at a third of the cost).
_LEAVES: dict[str, Any] = {
    action: fast_constructor(cls) for action, cls in (
        ("int", Int), ("float", Float), ("bool", Bool), ("string", String), ("var", Var),
        ("p_var", PVar), ("p_int", PInt), ("p_float", PFloat), ("p_bool", PBool),
        ("p_string", PString), ("t_name", TName))
}
_LISTS = {"single": _SINGLE, "append": _APPEND, "append_skip": _APPEND_SKIP,
          "empty_list": _EMPTY}


def _plan() -> tuple[list[int], list[Any]]:
    """Per production: a reduction code, and its function / leaf class / picked index."""
    codes: list[int] = [_CALL]
    args: list[Any] = [None]
    for production in grammar.productions():
        action = production.action
        if isinstance(action, int):
            codes.append(_UNIT if len(production.symbols) == 1 else _PICK)
            args.append(action)
        elif action in _LEAVES:
            codes.append(_LEAF)
            args.append(_LEAVES[action])
        elif action in _LISTS:
            codes.append(_LISTS[action])
            args.append(None)
        else:
            codes.append(_CALL)
            args.append(getattr(Actions, action))
    return codes, args


_CODES, _ARGS = _plan()


#: Action entries at or above this (and below :data:`ACCEPT`) shift a token and at once
#: reduce it by the leaf production ``entry - _FOLD``: the state the shift would enter
#: has that reduction as its only move, so the driver skips the round trip.
_FOLD = 1 << 20
#: The last tables folded and their folded action table (parsing uses one set of tables).
_folded: list[tuple[Tables, list[list[int]]]] = []


def _folded_action(tables: Tables) -> list[list[int]]:
    """``tables.run_action`` with the shifts into leaf-reducing states folded (see :data:`_FOLD`)."""
    if _folded and _folded[0][0] is tables:
        return _folded[0][1]
    run_action = tables.run_action
    leaf_of: dict[int, int] = {}
    for state, row in enumerate(run_action):
        p = -row[0]
        if p > 0 and _CODES[p] == _LEAF and row.count(row[0]) == len(row):
            leaf_of[state] = p
    folded = [[_FOLD + leaf_of[t] if 0 < t < ACCEPT and t in leaf_of else t for t in row]
              for row in run_action]
    _folded[:] = [(tables, folded)]
    return folded


def _run(stream: TokenStream, tables: Tables, actions: Actions) -> Program:
    """Drive the LR automaton over ``stream``.

    Stacks: ``states`` (the top is also kept in ``state``); ``values`` (a
    token index for a terminal, the semantic value for a nonterminal);
    ``starts`` (the start offset of each symbol). A production always ends
    where the last shifted token ends (``prev_end``). The action table has the
    default reductions filled in (``tables.run_action``), so no lookahead test
    is needed, and a shift whose next move is a leaf reduction does both.
    """
    action = _folded_action(tables)
    goto = tables.goto
    length = tables.length
    codes = _CODES
    args = _ARGS
    kind_ids = list(map(tables.terminal_ids.__getitem__, stream.kinds))
    token_values = stream.values
    token_starts = stream.starts
    token_ends = stream.ends
    src = stream.source
    state = 0
    states = [0]
    values: list[Any] = []
    starts: list[int] = []
    index = 0
    prev_end = 0
    kind = kind_ids[0]
    while True:
        t = action[state][kind]
        if t > 0:
            if t < _FOLD:
                states.append(t)
                state = t
                values.append(index)
                starts.append(token_starts[index])
                prev_end = token_ends[index]
                index += 1
                kind = kind_ids[index]
                continue
            if t == ACCEPT:
                result: Program = values[-1]
                return result
            p = t - _FOLD
            start = token_starts[index]
            prev_end = token_ends[index]
            values.append(args[p](token_values[index], Span(src, start, prev_end)))
            starts.append(start)
            state = goto[p][state]
            states.append(state)
            index += 1
            kind = kind_ids[index]
            continue
        if not t:
            raise syntax_error(stream, index, tables)
        p = -t
        code = codes[p]
        if code == _UNIT:
            state = states[-1] = goto[p][states[-2]]
        elif code == _LEAF:
            values[-1] = args[p](token_values[values[-1]], Span(src, starts[-1], prev_end))
            state = states[-1] = goto[p][states[-2]]
        elif code == _CALL:
            n = length[p]
            if n > 1:
                value = args[p](actions, starts[-n], prev_end, *values[-n:])
                del values[1 - n :]
                del starts[1 - n :]
                del states[1 - n :]
                values[-1] = value
                state = states[-1] = goto[p][states[-2]]
            elif n:
                values[-1] = args[p](actions, starts[-1], prev_end, values[-1])
                state = states[-1] = goto[p][states[-2]]
            else:
                values.append(args[p](actions, prev_end, prev_end))
                starts.append(prev_end)
                state = goto[p][state]
                states.append(state)
        elif code == _SINGLE:
            values[-1] = [values[-1]]
            state = states[-1] = goto[p][states[-2]]
        elif code == _APPEND:
            item = values.pop()
            values[-1].append(item)
            del starts[-1]
            del states[-1]
            state = states[-1] = goto[p][states[-2]]
        elif code == _APPEND_SKIP:
            item = values.pop()
            del values[-1]
            values[-1].append(item)
            del starts[-2:]
            del states[-2:]
            state = states[-1] = goto[p][states[-2]]
        elif code == _EMPTY:
            values.append([])
            starts.append(prev_end)
            state = goto[p][state]
            states.append(state)
        else:  # _PICK
            n = length[p]
            value = values[args[p] - n]
            del values[1 - n :]
            del starts[1 - n :]
            del states[1 - n :]
            values[-1] = value
            state = states[-1] = goto[p][states[-2]]


def parse_source(source: SourceFile) -> ParseResult:
    """Parse the whole of ``source``; see the module docstring for results and errors."""
    tables = load_tables()
    with gc_paused():
        stream, warnings = lex(source)
        actions = Actions(stream, warnings)
        try:
            program = _run(stream, tables, actions)
        except DiagnosticError as error:
            raise DiagnosticError([*error.diagnostics, *_sorted(warnings)]) from None
    return ParseResult(program, tuple(_sorted(warnings)), source)


def _sorted(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    return sorted(diagnostics, key=lambda d: (d.line, d.column))


def parse_program(text: str, *, source: SourceFile | None = None,
                  name: str = "<string>") -> ParseResult:
    """Parse ``text`` (named ``name`` in diagnostics, or positioned by ``source``).

    When ``source`` is given its text must be ``text``.
    """
    if source is None:
        source = SourceFile(name, text)
    elif source.text != text:
        raise ValueError("parse_program: `text` differs from `source.text`")
    return parse_source(source)
