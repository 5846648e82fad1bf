"""Python values <-> ChatML values, guided by ChatML types (the host side of the embedding API).

ChatML's runtime representation is mostly plain Python already
(:mod:`chatml.values`): ``int``, ``float``, ``bool``, ``str``, ``None`` for
unit, ``list`` for arrays and ``dict`` for records. This module checks a host
value against the ChatML type it must have and converts where the two sides
differ:

=====================  ==========================  ===========================
ChatML type            from Python (to ChatML)     to Python (from ChatML)
=====================  ==========================  ===========================
``int``                ``int`` (63-bit range)      ``int``
``float``              ``float`` or ``int``        ``float``
``bool``/``string``    ``bool`` / ``str``          same
``unit``               ``None``                    ``None``
``T array``            ``list``/``tuple`` of T     ``list`` (the same list when
                                                   no element changes)
record ``{a: T}``      ``dict`` with those labels  ``dict``
variants               :class:`~chatml.values.Variant` (payloads converted)
``json``               JSON data: ``dict``,        JSON data (objects become
                       ``list``, numbers, ...      ``dict``, first duplicate
                       or a ``json`` variant       key wins)
functions              a Python callable (wrapped  a Python callable that calls
                       as a builtin converting     the ChatML function through
                       both ways) or a ChatML      the engine (converting both
                       function                    ways)
``'a``, refs, tasks    passed through unchanged
=====================  ==========================  ===========================

A value that does not fit raises :class:`ConversionError` naming where it
is (``greet: argument 1``) and what was expected.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chatml import json_values
from chatml.json_values import JSON_TAGS, JsonShapeError
from chatml.typecheck.types import (
    FLOAT,
    INT,
    STRING,
    UNIT,
    Prim,
    TArray,
    TFun,
    TMu,
    TRecord,
    TTuple,
    TVar,
    TVariant,
    Type,
    flatten_row,
    resolve,
    show_message_type,
)
from chatml.values import MAX_INT, MIN_INT, ChatMLFailure, Value, Variant, builtin, is_builtin

Caller = Callable[[Value, tuple[Value, ...]], Value]
"""How a wrapped ChatML function is called: ``caller(function, chatml_args) -> chatml_result``."""


class ConversionError(TypeError):
    """A host value does not fit the ChatML type it must have (or the other way round)."""


def is_json_type(t: Type) -> bool:
    """True for the builtin ``json`` alias (a recursive variant over the six JSON tags)."""
    t = resolve(t)
    if type(t) is not TMu:
        return False
    body = resolve(t.unfold())
    if type(body) is not TVariant:
        return False
    tags, _ = flatten_row(body.row)
    return set(tags) == JSON_TAGS


def _describe(value: Any) -> str:
    text = repr(value)
    if len(text) > 40:
        text = text[:37] + "..."
    return f"{type(value).__name__} {text}"


def to_chatml(value: Any, t: Type, where: str, caller: Caller) -> Value:
    """``value`` (from the host) as a ChatML value of type ``t``."""
    try:
        return _to_chatml(value, t, where, caller)
    except RecursionError:
        raise ConversionError(f"{where}: the value is nested too deeply to convert") from None


def _to_chatml(value: Any, t: Type, where: str, caller: Caller) -> Value:
    t = resolve(t)
    match t:
        case Prim():
            return _primitive(value, t, where)
        case TArray():
            if type(value) is not list and type(value) is not tuple:
                raise ConversionError(f"{where}: expected a list for {show_message_type(t)}, got "
                                      f"{_describe(value)}")
            converted = [_to_chatml(item, t.elem, f"{where}[{i}]", caller)
                         for i, item in enumerate(value)]
            if type(value) is list and all(a is b for a, b in zip(converted, value, strict=True)):
                return value
            return converted
        case TRecord():
            return _record(value, t, where, caller, _to_chatml)
        case TMu():
            if is_json_type(t):
                return _json(value, where)
            return _to_chatml(value, t.unfold(), where, caller)
        case TVariant():
            return _variant(value, t, where, caller, _to_chatml)
        case TFun():
            return _host_function(value, t, where, caller)
    return value  # type variables, refs, tasks, recursion variables: as they are


def _primitive(value: Any, t: Prim, where: str) -> Value:
    if t is INT:
        if type(value) is int and MIN_INT <= value <= MAX_INT:
            return value
        if type(value) is int:
            raise ConversionError(f"{where}: {value} is outside the 63-bit range of ChatML ints")
    elif t is FLOAT:
        if type(value) is float:
            return value
        if type(value) is int:
            return float(value)
    elif t is STRING:
        if type(value) is str:
            return value
    elif t is UNIT:
        if value is None:
            return None
    elif type(value) is bool:
        return value
    expected = {"unit": "None", "string": "a str", "float": "a float", "int": "an int",
                "bool": "a bool"}[t.name]
    raise ConversionError(f"{where}: expected {expected} for {t.name}, got {_describe(value)}")


def _record(value: Any, t: TRecord, where: str, caller: Caller, convert: Any) -> Value:
    fields, tail = flatten_row(t.row)
    if type(value) is not dict:
        raise ConversionError(f"{where}: expected a dict for {show_message_type(t)}, got "
                              f"{_describe(value)}")
    missing = [label for label in fields if label not in value]
    if missing:
        raise ConversionError(f"{where}: missing field {missing[0]!r} of {show_message_type(t)}")
    extra = [label for label in value if label not in fields]
    if extra and type(tail) is not TVar:  # a closed record type
        raise ConversionError(f"{where}: unexpected field {extra[0]!r} for {show_message_type(t)}")
    converted = dict(value)
    changed = False
    for label, field_type in fields.items():
        item = convert(value[label], field_type, f"{where}.{label}", caller)
        if item is not value[label]:
            converted[label] = item
            changed = True
    return converted if changed else value


def _variant(value: Any, t: TVariant, where: str, caller: Caller, convert: Any) -> Value:
    cases, tail = flatten_row(t.row)
    if type(value) is not Variant:
        raise ConversionError(f"{where}: expected a chatml.values.Variant for {show_message_type(t)}, "
                              f"got {_describe(value)}")
    payload = cases.get(value.tag)
    if payload is None:
        if type(tail) is TVar:  # an open row: other tags are fine, payloads unchecked
            return value
        raise ConversionError(f"{where}: `{value.tag} is not a case of {show_message_type(t)}")
    payload = resolve(payload)
    types = payload.elems if type(payload) is TTuple else (payload,)
    if len(types) != len(value.args):
        raise ConversionError(f"{where}: `{value.tag} takes {len(types)} payload value(s), "
                              f"got {len(value.args)}")
    args = tuple(convert(arg, arg_type, f"{where}<{value.tag}>[{i}]", caller)
                 for i, (arg, arg_type) in enumerate(zip(value.args, types, strict=True)))
    if all(a is b for a, b in zip(args, value.args, strict=True)):
        return value
    return Variant(value.tag, args)


def _json(value: Any, where: str) -> Value:
    if type(value) is Variant and value.tag in JSON_TAGS:
        try:
            json_values.to_tree(value)  # check its shape
        except JsonShapeError as error:
            raise ConversionError(f"{where}: {error.message}") from None
        return value
    try:
        return json_values.from_host(value)
    except JsonShapeError as error:
        raise ConversionError(f"{where}: {error.message}") from None


def _host_function(value: Any, t: TFun, where: str, caller: Caller) -> Value:
    if isinstance(value, ChatMLFunction):
        return value.function
    if not callable(value):
        raise ConversionError(f"{where}: expected a callable for {show_message_type(t)}, got "
                              f"{_describe(value)}")
    if is_chatml_function(value):
        return value
    return wrap_python_function(where, value, t, caller)


def is_chatml_function(value: Any) -> bool:
    """A builtin, or a closure compiled from ChatML (its code lives in a ``<chatml ...>`` file)."""
    if is_builtin(value):
        return True
    code = getattr(value, "__code__", None)
    return code is not None and code.co_filename.startswith("<chatml ")


def wrap_python_function(name: str, function: Callable[..., Any], t: TFun,
                         caller: Caller) -> Value:
    """A ChatML builtin ``name`` of type ``t`` that runs the Python ``function``.

    Arguments are converted to Python, the result back to ChatML. The
    function may raise :class:`~chatml.values.ChatMLFailure` to fail with a
    message of its choice; any other exception becomes the runtime error
    ``NAME: ExceptionType: message``.
    """
    params = t.params
    result = t.result
    short = name.rsplit(".", 1)[-1]
    count = len(params)

    @builtin(name)
    def host(*args: Value) -> Value:
        if len(args) != count:
            words = {0: "zero arguments", 1: "exactly one argument", 2: "exactly two arguments",
                     3: "exactly three arguments"}.get(count, f"exactly {count} arguments")
            raise ChatMLFailure(f"{short}: expected {words}")
        python_args = [to_python(arg, param, caller) for arg, param in zip(args, params,
                                                                           strict=True)]
        try:
            answer = function(*python_args)
        except ChatMLFailure:
            raise
        except Exception as error:  # noqa: BLE001 -- reported as a ChatML runtime error
            raise ChatMLFailure(f"{name}: {type(error).__name__}: {error}") from error
        try:
            return to_chatml(answer, result, f"{name}: result", caller)
        except ConversionError as error:
            raise ChatMLFailure(str(error)) from None

    return host


class ChatMLFunction:
    """A ChatML function value handed to the host: call it with Python values."""

    def __init__(self, function: Value, t: TFun, caller: Caller, name: str = "function") -> None:
        self.function = function
        self.type = t
        self.name = name
        self._caller = caller

    def __call__(self, *args: Any) -> Any:
        params = self.type.params
        if len(args) != len(params):
            raise ConversionError(f"{self.name}: expected {len(params)} argument(s) for "
                                  f"{show_message_type(self.type)}, got {len(args)}")
        converted = tuple(to_chatml(arg, param, f"{self.name}: argument {i + 1}", self._caller)
                          for i, (arg, param) in enumerate(zip(args, params, strict=True)))
        return to_python(self._caller(self.function, converted), self.type.result, self._caller)

    def __repr__(self) -> str:
        return f"<ChatML function {self.name} : {show_message_type(self.type)}>"


def to_python(value: Value, t: Type, caller: Caller, name: str = "function") -> Any:
    """A ChatML value of type ``t`` as a Python value for the host (``name`` labels functions)."""
    t = resolve(t)
    if type(t) is Prim or value is None or type(value) in (int, float, bool, str):
        return value
    match t:
        case TArray():
            converted = [to_python(item, t.elem, caller) for item in value]
            return value if all(a is b for a, b in zip(converted, value, strict=True)) \
                else converted
        case TRecord() if type(value) is dict:
            fields, _ = flatten_row(t.row)
            result = dict(value)
            for label, field_type in fields.items():
                if label in value:
                    result[label] = to_python(value[label], field_type, caller)
            return result
        case TMu():
            if is_json_type(t):
                return json_values.to_host(value)
            return to_python(value, t.unfold(), caller)
        case TVariant() if type(value) is Variant:
            return _variant_to_python(value, t, caller)
        case TFun() if callable(value):
            return ChatMLFunction(value, t, caller, name)
    return value


def _variant_to_python(value: Variant, t: TVariant, caller: Caller) -> Any:
    cases, _ = flatten_row(t.row)
    payload = cases.get(value.tag)
    if payload is None:
        return value
    payload = resolve(payload)
    types = payload.elems if type(payload) is TTuple else (payload,)
    if len(types) != len(value.args):
        return value
    return Variant(value.tag, tuple(to_python(arg, arg_type, caller)
                                    for arg, arg_type in zip(value.args, types, strict=True)))


__all__ = ["ChatMLFunction", "ConversionError", "is_chatml_function", "is_json_type",
           "to_chatml", "to_python", "wrap_python_function"]
