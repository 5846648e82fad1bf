"""Exception helpers for MCP failures: the root cause of nested groups, as one line."""

from __future__ import annotations


def root_cause(error: BaseException) -> BaseException:
    """The first leaf of nested exception groups (what actually went wrong)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def describe(error: BaseException) -> str:
    """``Type: message`` of the root cause."""
    cause = root_cause(error)
    text = str(cause).strip()
    return f"{type(cause).__name__}: {text}" if text else type(cause).__name__
