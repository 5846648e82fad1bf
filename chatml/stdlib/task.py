"""The ``Task`` module (stdlib spec 4.5): builders of inert task nodes.

Building a task performs nothing; a host interprets it (:mod:`chatml.tasks`).
Only the task argument of ``bind``/``map``/``catch`` is checked here; the
continuation, function and handler are checked when the host applies them.
"""

from __future__ import annotations

from chatml.registration import implements
from chatml.stdlib.checks import shape
from chatml.values import Bind, Catch, Fail, Map, Pure, Task, Value


@implements("Task.pure")
def pure(value: Value) -> Pure:
    return Pure(value)


@implements("Task.bind")
def bind(task: Value, continuation: Value) -> Bind:
    if not isinstance(task, Task):
        raise shape("Task.bind", "a Task")
    return Bind(task, continuation)


@implements("Task.map")
def map_(task: Value, function: Value) -> Map:
    if not isinstance(task, Task):
        raise shape("Task.map", "a Task")
    return Map(task, function)


@implements("Task.fail")
def fail(message: Value) -> Fail:
    if type(message) is not str:
        raise shape("Task.fail", "a string")
    return Fail(message)


@implements("Task.catch")
def catch(task: Value, handler: Value) -> Catch:
    if not isinstance(task, Task):
        raise shape("Task.catch", "a Task")
    return Catch(task, handler)
