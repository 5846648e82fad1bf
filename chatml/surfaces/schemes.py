"""The builtin type language: a small parser from scheme strings to internal types.

The table writes schemes the way the stdlib spec does::

    'a array -> ('a -> 'b) -> 'b array        (a two-argument function)
    unit -> 'a task                             (a nullary function)
    { ...r } -> string array                    (an open record: row variable r)
    string -> [`None | `Some(int)]              (a closed variant)
    mu j. [`Null | `Array(j array)]             (an explicit recursive type)
    { key : string; value : 'a } array ref      (postfix array / ref / task)
    (int * string)                              (a tuple)

Arrows are flattened into one uncurried function and a ``unit`` parameter is
dropped, exactly as in annotations (spec 4.11). Type variables become generic
variables (one per name and scheme); row variables live in their own
namespace (spec 4.3). Lowercase names other than primitives are the builtin
aliases (``json``, ``item``, ...), parsed on first use and shared.

Parsed schemes are cached per qualified name: :func:`parse_scheme` is called
once per export per process.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from chatml.typecheck.types import (
    GENERIC,
    PRIMITIVES,
    RECORD,
    ROW_EMPTY,
    UNIT,
    TArray,
    TConstr,
    TFun,
    TMu,
    TRecord,
    TRecVar,
    TRef,
    TTuple,
    TVar,
    TVariant,
    Type,
    make_row,
    register_type_name,
)


class SchemeSyntaxError(ValueError):
    """A scheme string of the builtin table is malformed (a bug in the table)."""


_TOKEN = re.compile(r"""
    \s*(?:
      (?P<tyvar>'[a-z_][A-Za-z0-9_]*)
    | (?P<rowvar>\.\.\.[a-z_][A-Za-z0-9_]*)
    | (?P<tag>`[A-Za-z0-9_]+)
    | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
    | (?P<arrow>->)
    | (?P<punct>[(){}\[\]|;:,*.])
    )""", re.VERBOSE)

_POSTFIX = ("array", "ref", "task")


def _tokenize(text: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    position = 0
    text = text.rstrip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            raise SchemeSyntaxError(f"unexpected character at {position} in {text!r}")
        kind = match.lastgroup
        assert kind is not None
        tokens.append((kind, match.group(kind)))
        position = match.end()
    tokens.append(("eof", ""))
    return tokens


class _Parser:
    def __init__(self, text: str, alias: Callable[[str], Type]) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.position = 0
        self.alias = alias
        self.type_vars: dict[str, TVar] = {}
        self.row_vars: dict[str, TVar] = {}
        self.binders: list[str] = []

    # ------------------------------------------------------------------ tokens

    def peek(self) -> tuple[str, str]:
        return self.tokens[self.position]

    def take(self) -> tuple[str, str]:
        token = self.tokens[self.position]
        self.position += 1
        return token

    def expect(self, value: str) -> None:
        kind, text = self.take()
        if text != value:
            raise SchemeSyntaxError(f"expected {value!r}, found {text!r} in {self.text!r}")

    def at(self, value: str) -> bool:
        return self.peek()[1] == value

    # ------------------------------------------------------------------ grammar

    def parse(self) -> Type:
        result = self.arrow()
        if self.peek()[0] != "eof":
            raise SchemeSyntaxError(f"trailing {self.peek()[1]!r} in {self.text!r}")
        return result

    def arrow(self) -> Type:
        left = self.postfix()
        if self.peek()[0] != "arrow":
            return left
        self.take()
        right = self.arrow()
        params: tuple[Type, ...] = () if left is UNIT else (left,)
        if isinstance(right, TFun):
            return TFun(params + right.params, right.result)
        return TFun(params, right)

    def postfix(self) -> Type:
        result = self.atom()
        while self.peek()[0] == "name" and self.peek()[1] in _POSTFIX:
            name = self.take()[1]
            if name == "array":
                result = TArray(result)
            elif name == "ref":
                result = TRef(result)
            else:
                result = TConstr(name, (result,))
        return result

    def atom(self) -> Type:
        kind, text = self.take()
        if kind == "tyvar":
            var = self.type_vars.get(text)
            if var is None:
                var = self.type_vars[text] = TVar(GENERIC)
            return var
        if kind == "name":
            if text == "mu":
                return self.mu()
            if text in self.binders:
                return TRecVar(text)
            if text in PRIMITIVES:
                return PRIMITIVES[text]
            return self.alias(text)
        if text == "(":
            first = self.arrow()
            if self.at("*"):
                elems = [first]
                while self.at("*"):
                    self.take()
                    elems.append(self.arrow())
                self.expect(")")
                return TTuple(tuple(elems))
            self.expect(")")
            return first
        if text == "{":
            return self.record()
        if text == "[":
            return self.variant()
        raise SchemeSyntaxError(f"unexpected {text!r} in {self.text!r}")

    def mu(self) -> Type:
        kind, name = self.take()
        if kind != "name":
            raise SchemeSyntaxError(f"mu needs a name in {self.text!r}")
        self.expect(".")
        self.binders.append(name)
        body = self.arrow()
        self.binders.pop()
        return TMu(name, body)

    def row_var(self, text: str) -> TVar:
        var = self.row_vars.get(text)
        if var is None:
            var = self.row_vars[text] = TVar(GENERIC)
        return var

    def record(self) -> Type:
        fields: dict[str, Type] = {}
        tail: Type = ROW_EMPTY
        while not self.at("}"):
            kind, text = self.take()
            if kind == "rowvar":
                tail = self.row_var(text)
                break
            if kind != "name":
                raise SchemeSyntaxError(f"expected a field label, found {text!r}")
            self.expect(":")
            fields[text] = self.arrow()
            if not self.at(";"):
                break
            self.take()
        self.expect("}")
        flavor: Type = RECORD if tail is ROW_EMPTY else TVar(GENERIC)
        return TRecord(make_row(fields, tail), flavor)

    def variant(self) -> Type:
        cases: dict[str, Type] = {}
        tail: Type = ROW_EMPTY
        while not self.at("]"):
            kind, text = self.take()
            if kind == "rowvar":
                tail = self.row_var(text)
                break
            if kind != "tag":
                raise SchemeSyntaxError(f"expected a tag, found {text!r}")
            args: list[Type] = []
            if self.at("("):
                self.take()
                args.append(self.arrow())
                while self.at(","):
                    self.take()
                    args.append(self.arrow())
                self.expect(")")
            cases[text[1:]] = TTuple(tuple(args))
            if not self.at("|"):
                break
            self.take()
        self.expect("]")
        return TVariant(make_row(cases, tail))


class AliasLookup:
    """Resolves builtin alias names to their (shared) types, parsing each once."""

    def __init__(self, definitions: dict[str, str]) -> None:
        self.definitions = definitions
        self.types: dict[str, Type] = {}
        self._parsing: set[str] = set()

    def __call__(self, name: str) -> Type:
        known = self.types.get(name)
        if known is not None:
            return known
        definition = self.definitions.get(name)
        if definition is None:
            raise SchemeSyntaxError(f"unknown type name {name!r} in the builtin table")
        if name in self._parsing:
            raise SchemeSyntaxError(f"builtin alias {name!r} refers to itself; use mu")
        self._parsing.add(name)
        try:
            parsed = _Parser(definition, self).parse()
        finally:
            self._parsing.discard(name)
        self.types[name] = parsed
        register_type_name(parsed, name)
        return parsed


def parse_scheme(text: str, alias: Callable[[str], Type]) -> Type:
    """The internal type of a scheme string (generic variables for its type variables).

    ``alias`` maps a type alias name to its type (an :class:`AliasLookup` for the table).
    """
    return _Parser(text, alias).parse()
