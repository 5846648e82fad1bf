"""The ChatML grammar as data: productions, their semantic actions, and precedences.

This is the reference's ``chatml_parser.mly`` (spec 3.1-3.6) written for
ply.yacc's LALR generator. Each production names either a method of
:class:`chatml.syntax.parse_actions.Actions` or, for a pass-through production, the
index of the right-hand-side symbol whose value it returns.

Reproducing the reference's conflict resolution (spec 3.3, DECISIONS 6b).
Menhir resolves every shift/reduce conflict the reference leaves open in favour
of shifting; ply would *reduce* when only the rule has a precedence. So every
conflicting production gets an explicit precedence and every token that must be
shifted gets a precedence above it:

* ``LOWEST`` (a pseudo-token) is given to the productions whose right end is
  open: ``seq : expr`` (so ``else``/``fun``/arm/``let`` bodies swallow ``;``),
  ``ref e``, ``e := e``, ``a[i] <- e``, ``match`` (arms), ``type_expr :
  type_post``, a bare tag (``` `A(x) ``` is a payload, not an application)
  and ``stmt : expr`` (statements are juxtaposed);
* the binary operators have the reference's three left-associative levels, and
  prefix ``-``/``-.`` take the additive level, ``!`` its own level above;
* ``:=``, ``;``, ``|``, the postfix tokens ``(``, ``[``, ``.`` and a following
  lowercase name (a postfix type constructor) sit on top, so they are always
  shifted (``a + b := c`` is ``a + (b := c)``, ``!f(x)`` is ``!(f(x))``, a
  statement starting with ``(`` continues the previous one).

``tests/chatml/test_chatml_parse_tables.py`` checks that no conflict is left
to ply's defaults, and ``test_chatml_properties.py`` compares the parser with
the Pratt-style description of spec 3.3 (``tests/chatml/pratt_oracle.py``).
"""

from __future__ import annotations

import zlib
from functools import cache
from typing import NamedTuple

from chatml.syntax.tokens import ADDITIVE_OPS, COMPARISON_OPS, MULTIPLICATIVE_OPS, TERMINALS

VERSION = 2  # bump to invalidate cached tables when the table format changes

PRECEDENCE: tuple[tuple[str, ...], ...] = (
    ("right", "LOWEST"),
    ("left", *COMPARISON_OPS),
    ("left", *ADDITIVE_OPS),
    ("left", *MULTIPLICATIVE_OPS),
    ("left", "BANG"),
    ("right", "COLONEQ", "SEMI", "BAR", "LPAREN", "LBRACKET", "DOT", "LIDENT"),
)

_BINARY_RULES = tuple(f"expr : expr {op} expr" for op in
                      (*COMPARISON_OPS, *ADDITIVE_OPS, *MULTIPLICATIVE_OPS))

#: (action, productions). An int action returns that right-hand-side value unchanged.
RULES: tuple[tuple[str | int, tuple[str, ...]], ...] = (
    ("program", ("program : stmts",)),
    ("append", ("stmts : stmts top_stmt", "mstmts : mstmts stmt")),
    ("empty_list", ("stmts :", "mstmts :")),
    ("type_stmt", ("top_stmt : TYPE LIDENT EQ type_expr",)),
    (0, ("top_stmt : stmt",)),
    # ------------------------------------------------------------------ statements
    ("let_rec_stmt", ("stmt : LET REC rec_bindings",)),
    ("let_annot_stmt", ("stmt : LET LIDENT COLON type_expr EQ seq",)),
    ("let_fun_stmt", ("stmt : LET LIDENT params EQ seq",)),
    ("let_unit_fun_stmt", ("stmt : LET LIDENT LPAREN RPAREN EQ seq",)),
    ("let_stmt", ("stmt : LET LIDENT EQ seq",)),
    ("module_stmt", ("stmt : MODULE UIDENT EQ STRUCT mstmts END",)),
    ("open_stmt", ("stmt : OPEN UIDENT",)),
    ("expr_stmt", ("stmt : expr %prec LOWEST",)),
    ("single", ("rec_bindings : rec_binding", "params : LIDENT",
                "args1 : seq", "field_seq : field", "arms : arm",
                "patterns : pattern", "pfield_seq : pfield",
                "tfield_seq : tfield", "tcases1 : tcase", "types1 : type_expr")),
    ("append_skip", ("rec_bindings : rec_bindings AND rec_binding", "args1 : args1 COMMA seq",
                     "field_seq : field_seq SEMI field", "patterns : patterns COMMA pattern",
                     "pfield_seq : pfield_seq SEMI pfield",
                     "tfield_seq : tfield_seq SEMI tfield", "tcases1 : tcases1 BAR tcase",
                     "types1 : types1 COMMA type_expr")),
    ("append", ("params : params LIDENT", "arms : arms arm")),
    ("rec_annot", ("rec_binding : LIDENT COLON type_expr EQ seq",)),
    ("rec_fun", ("rec_binding : LIDENT params EQ seq",)),
    ("rec_unit_fun", ("rec_binding : LIDENT LPAREN RPAREN EQ seq",)),
    ("rec_value", ("rec_binding : LIDENT EQ seq",)),
    # ------------------------------------------------------------------ sequences and lists
    (0, ("seq : expr %prec LOWEST",)),
    ("sequence", ("seq : expr SEMI seq",)),
    ("empty_list", ("args :", "fields_opt :", "tfields_opt :", "tcases :")),
    (0, ("args : args1", "fields_opt : fields", "fields : field_seq",
         "tfields_opt : tfields", "tfields : tfield_seq", "tcases : tcases1")),
    (0, ("fields : field_seq SEMI", "tfields : tfield_seq SEMI")),
    ("field", ("field : LIDENT EQ expr",)),
    # ------------------------------------------------------------------ expressions
    ("int", ("expr : INT",)),
    ("float", ("expr : FLOAT",)),
    ("bool", ("expr : BOOL",)),
    ("string", ("expr : STRING",)),
    ("var", ("expr : LIDENT", "expr : UIDENT")),
    ("unit", ("expr : LPAREN RPAREN",)),
    (1, ("expr : LPAREN seq RPAREN",)),
    ("variant", ("expr : TAG %prec LOWEST",)),
    ("variant_args", ("expr : TAG LPAREN args RPAREN",)),
    ("array", ("expr : LBRACKET args RBRACKET",)),
    ("record", ("expr : LBRACE fields_opt RBRACE",)),
    ("record_extend", ("expr : LBRACE seq WITH fields RBRACE",)),
    ("app", ("expr : expr LPAREN args RPAREN",)),
    ("field_get", ("expr : expr DOT LIDENT",)),
    ("method_call", ("expr : expr DOT LIDENT LPAREN args RPAREN",)),
    ("array_get", ("expr : expr LBRACKET expr RBRACKET",)),
    ("array_set", ("expr : expr LBRACKET expr RBRACKET LEFTARROW expr %prec LOWEST",)),
    ("ref", ("expr : REF expr %prec LOWEST",)),
    ("deref", ("expr : BANG expr",)),
    ("set_ref", ("expr : expr COLONEQ expr %prec LOWEST",)),
    ("neg", ("expr : MINUS expr", "expr : MINUSDOT expr %prec MINUS")),
    ("prefix_bang_eq", ("expr : BANGEQ expr",)),
    ("prefix_dot", ("expr : DOT expr",)),
    ("binop", _BINARY_RULES),
    ("fun", ("expr : FUN params ARROW seq",)),
    ("fun_unit", ("expr : FUN LPAREN RPAREN ARROW seq",)),
    ("if_", ("expr : IF seq THEN seq ELSE seq",)),
    ("while_", ("expr : WHILE seq DO seq DONE",)),
    ("match", ("expr : MATCH seq WITH arms %prec LOWEST",)),
    ("arm", ("arm : BAR pattern ARROW seq",)),
    ("let_in", ("expr : LET LIDENT EQ seq IN seq",)),
    ("let_fun_in", ("expr : LET LIDENT params EQ seq IN seq",)),
    ("let_unit_fun_in", ("expr : LET LIDENT LPAREN RPAREN EQ seq IN seq",)),
    ("let_annot_in", ("expr : LET LIDENT COLON type_expr EQ seq IN seq",)),
    ("let_rec_in", ("expr : LET REC rec_bindings IN seq",)),
    ("let_task", ("expr : LETSTAR binder EQ seq IN seq", "expr : LETPLUS binder EQ seq IN seq")),
    ("binder_name", ("binder : LIDENT",)),
    ("binder_unit", ("binder : LPAREN RPAREN",)),
    # ------------------------------------------------------------------ patterns
    ("p_wildcard", ("pattern : UNDERSCORE",)),
    ("p_var", ("pattern : LIDENT",)),
    ("p_unit", ("pattern : LPAREN RPAREN",)),
    ("p_int", ("pattern : INT",)),
    ("p_float", ("pattern : FLOAT",)),
    ("p_bool", ("pattern : BOOL",)),
    ("p_string", ("pattern : STRING",)),
    ("p_variant", ("pattern : TAG",)),
    ("p_variant_args", ("pattern : TAG LPAREN patterns RPAREN",)),
    ("p_record_empty", ("pattern : LBRACE RBRACE",)),
    ("p_record", ("pattern : LBRACE pfields RBRACE",)),
    ("p_closed", ("pfields : pfield_seq", "pfields : pfield_seq SEMI")),
    ("p_open", ("pfields : pfield_seq SEMI UNDERSCORE",
                "pfields : pfield_seq SEMI UNDERSCORE SEMI")),
    ("pfield", ("pfield : LIDENT EQ pattern",)),
    # ------------------------------------------------------------------ type expressions
    (0, ("type_expr : type_post %prec LOWEST",)),
    ("t_arrow", ("type_expr : type_post ARROW type_expr",)),
    (0, ("type_post : type_prim",)),
    ("t_constr", ("type_post : type_post LIDENT",)),
    ("t_name", ("type_prim : LIDENT",)),
    (1, ("type_prim : LPAREN type_expr RPAREN",)),
    ("t_record", ("type_prim : LBRACE tfields_opt RBRACE",)),
    ("t_variant", ("type_prim : LBRACKET tcases RBRACKET",)),
    ("t_field", ("tfield : LIDENT COLON type_expr",)),
    ("t_case", ("tcase : TAG",)),
    ("t_case_args", ("tcase : TAG LPAREN types1 RPAREN",)),
)

START = "program"


class Production(NamedTuple):
    """One production: ``lhs : symbols [%prec prec]`` reduced by ``action``."""

    lhs: str
    symbols: tuple[str, ...]
    prec: str | None
    action: str | int


@cache
def productions() -> tuple[Production, ...]:
    """Every production, in order (production ``i`` of the tables is ``productions()[i - 1]``)."""
    result: list[Production] = []
    for action, rules in RULES:
        for rule in rules:
            lhs, _, rhs = rule.partition(":")
            symbols = rhs.split()
            prec = None
            if "%prec" in symbols:
                prec = symbols[-1]
                symbols = symbols[:-2]
            result.append(Production(lhs.strip(), tuple(symbols), prec, action))
    return tuple(result)


@cache
def signature() -> str:
    """A checksum of everything the LR tables depend on (keys the table cache).

    zlib's checksums rather than hashlib: importing hashlib costs more start-up
    time than the whole table load, and this only has to tell grammars apart.
    """
    data = repr((VERSION, TERMINALS, PRECEDENCE, START,
                 [(p.lhs, p.symbols, p.prec) for p in productions()])).encode()
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}"
