"""Rendering ChatML values as text: ``show`` (behind ``print``/``to_string``) and ``fmt_float``.

Owns the display form of every runtime value (language spec 5.10, stdlib
spec 1.6-1.7): ints in decimal, floats as the reference prints them (``7.``,
``0.1``, ``1e+20``, ``nan``), strings raw, ``[|a, b|]`` for arrays,
``{ a = 1; b = 2 }`` for records (labels sorted), ```Tag(x, y)`` for
variants, ``ref(x)``, ``<closure>``/``<builtin>``/``<module>`` and the task
forms ``pure(v)``, ``bind(t, f)``, ``perform({operation = OP, args = [..]})``.

:func:`show` never recurses in Python, so arbitrarily deep values (a long
variant-encoded list, say) render without exhausting the Python stack, and a
value that contains itself (an array reachable from its own element, through
a recursive type) is reported with :data:`CYCLE_MESSAGE` instead of looping.

``fmt_float`` is defined in the leaf module :mod:`chatml.json_text` (JSON
numbers are written from the same text) and re-exported here.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

from chatml.json_text import fmt_float
from chatml.values import (
    Bind,
    Catch,
    ChatMLFailure,
    Fail,
    Map,
    Module,
    Perform,
    Pure,
    Ref,
    Spawn,
    TableRef,
    Task,
    Value,
    Variant,
    is_builtin,
)


class RenderTooLarge(Exception):
    """The text of a value outgrew the ``max_chars`` given to :func:`show`; ``size`` so far."""

    def __init__(self, size: int, text: str = "") -> None:
        super().__init__(f"the rendered text exceeds {size} characters")
        self.size = size
        self.text = text


__all__ = ["CYCLE_MESSAGE", "RenderTooLarge", "fmt_float", "show"]

CYCLE_MESSAGE = "to_string: the value contains itself (a cyclic array or ref) and cannot be rendered"

Charge = Callable[[int, int], None]
"""Told ``(characters, pieces)`` produced so far, in batches; may raise to stop rendering."""


def show(value: Value, max_chars: int | None = None, *, truncate: bool = False,
         charge: Charge | None = None) -> str:
    """The display form of ``value`` (``print`` writes it followed by a newline).

    A value whose arrays share elements can render exponentially long, so:
    with ``max_chars``, raises :class:`RenderTooLarge` once the text grows past
    it -- or, with ``truncate``, returns its first ``max_chars`` characters and
    ``...``; ``charge`` is called as the text grows (every few thousand
    pieces and at the end) so that a builtin can charge the run's budgets and
    stop it.
    """
    kind = type(value)
    if kind is str:
        return value
    if kind is int:
        return str(value)
    if kind is float:
        return fmt_float(value)
    if kind is bool:
        return "true" if value else "false"
    if value is None:
        return "()"
    # Pause the cyclic collector (inline: this is print's hot path): the work
    # stack's frames would otherwise make it rescan a large value again and again.
    collecting = gc.isenabled()
    if collecting:
        gc.disable()
    try:
        return _show_compound(value, max_chars, charge)
    except RenderTooLarge as too_large:
        if not truncate or max_chars is None:
            raise
        return too_large.text[:max_chars] + "..."
    finally:
        if collecting:
            gc.enable()


class _Literal(str):
    """Text of a task rendering (``", "``, ``")"``) among the values of a parts frame."""

    __slots__ = ()


# Frame modes: the frame's iterator yields (position, child) for _ITEMS,
# (position, label) for _RECORD and parts (values or _Literal text) for _PARTS.
_ITEMS, _RECORD, _PARTS = range(3)
_CHECK_EVERY = 4096


def _show_compound(root: Value, max_chars: int | None, charge: Charge | None) -> str:
    out: list[str] = []
    emit = out.append
    active: set[int] = set()  # ids of the arrays and refs being rendered (cycle check)
    # A frame: [iterator, mode, record (for _RECORD), closing text, id to leave or 0]
    stack: list[list[Any]] = []
    frame = _open(root, emit, active)
    if frame is None:
        return "".join(out)
    stack.append(frame)
    checked = size = 0
    watched = max_chars is not None or charge is not None
    while stack:
        if watched and len(out) - checked >= _CHECK_EVERY:
            grown = sum(map(len, out[checked:]))
            if charge is not None:
                charge(grown, len(out) - checked)
            size += grown
            checked = len(out)
            if max_chars is not None and size > max_chars:
                raise RenderTooLarge(size, "".join(out))
        iterator, mode, record, closer, leave = stack[-1]
        for child in iterator:
            if mode == _ITEMS:
                position, child = child
                if position:
                    emit(", ")
            elif mode == _RECORD:
                position, label = child
                emit(f"; {label} = " if position else f"{label} = ")
                child = record[label]
            elif type(child) is _Literal:
                emit(child)
                continue
            kind = type(child)
            if kind is str:
                emit(child)
            elif kind is int:
                emit(str(child))
            elif kind is float:
                emit(fmt_float(child))
            elif kind is bool:
                emit("true" if child else "false")
            elif child is None:
                emit("()")
            else:
                frame = _open(child, emit, active)
                if frame is not None:
                    stack.append(frame)
                    break
        else:
            stack.pop()
            emit(closer)
            if leave:
                active.discard(leave)
    if charge is not None:
        charge(sum(map(len, out[checked:])), len(out) - checked)
    text = "".join(out)
    if max_chars is not None and len(text) > max_chars:
        raise RenderTooLarge(len(text), text)
    return text


def _open(value: Value, emit: Any, active: set[int]) -> list[Any] | None:
    """Emit the opening text of a compound value; its frame, or ``None`` when it is complete."""
    kind = type(value)
    if kind is list:
        if not value:
            emit("[||]")
            return None
        key = id(value)
        if key in active:
            raise ChatMLFailure(CYCLE_MESSAGE)
        active.add(key)
        emit("[|")
        return [iter(enumerate(value)), _ITEMS, None, "|]", key]
    if kind is dict:
        if not value:
            emit("{  }")
            return None
        emit("{ ")
        return [iter(enumerate(sorted(value))), _RECORD, value, " }", 0]
    if kind is Variant:
        if not value.args:
            emit("`" + value.tag)
            return None
        emit("`" + value.tag + "(")
        return [iter(enumerate(value.args)), _ITEMS, None, ")", 0]
    if kind is Ref or kind is TableRef:
        key = id(value)
        if key in active:
            raise ChatMLFailure(CYCLE_MESSAGE)
        active.add(key)
        emit("ref(")
        return [iter(((0, value.value),)), _ITEMS, None, ")", key]
    if kind is Module:
        emit("<module>")
        return None
    if isinstance(value, Task):
        return _open_task(value, emit)
    emit("<builtin>" if is_builtin(value) else "<closure>" if callable(value)
         else f"<{kind.__name__}>")
    return None


_COMMA = _Literal(", ")


def _open_task(task: Task, emit: Any) -> list[Any] | None:
    if type(task) is Pure:
        emit("pure(")
        return [iter((task.value,)), _PARTS, None, ")", 0]
    if type(task) is Fail:
        emit("fail(" + task.message + ")")
        return None
    if type(task) is Bind:
        emit("bind(")
        return [iter((task.task, _COMMA, task.continuation)), _PARTS, None, ")", 0]
    if type(task) is Map:
        emit("map(")
        return [iter((task.task, _COMMA, task.function)), _PARTS, None, ")", 0]
    if type(task) is Catch:
        emit("catch(")
        return [iter((task.task, _COMMA, task.handler)), _PARTS, None, ")", 0]
    if type(task) is Perform or type(task) is Spawn:
        name = "perform" if type(task) is Perform else "spawn"
        emit(f"{name}({{operation = {task.operation}, args = [")
        return [iter(enumerate(task.args)), _ITEMS, None, "]})", 0]
    emit(f"<{type(task).__name__}>")
    return None
