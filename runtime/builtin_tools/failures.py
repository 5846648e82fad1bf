"""Tool failures as outputs the model reads: :class:`ToolFailure` and the :func:`guarded` wrapper.

A built-in never raises into the driver. Each runner raises :class:`ToolFailure`
(a stable code, a message saying what was expected, an optional hint) and
:func:`guarded` turns it into the output text::

    read_file.outside_roots: /etc/passwd is outside every read_file root
    hint: roots: src (/work/project/src)

An unexpected ``OSError`` becomes ``tool.os_error`` and any other exception
``tool.internal_error``, so a bug in a runner is reported to the model, not a
crash of the run.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from runtime.tools import Runner, ToolOutput


class ToolFailure(Exception):
    """A failed tool call; :meth:`render` is the output the model reads."""

    def __init__(self, code: str, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = hint

    def render(self) -> str:
        text = f"{self.code}: {self.message}"
        return f"{text}\nhint: {self.hint}" if self.hint else text


def guarded(run: Callable[[str], ToolOutput]) -> Runner:
    """``run`` with every failure turned into an output string that starts with its code."""

    @functools.wraps(run)
    def runner(payload: str) -> ToolOutput:
        try:
            return run(payload)
        except ToolFailure as failure:
            return failure.render()
        except OSError as error:
            where = f" ({error.filename})" if error.filename else ""
            return f"tool.os_error: {error.strerror or error}{where}"
        except Exception as error:  # a runner bug: still an output, never a crash of the run
            return f"tool.internal_error: {type(error).__name__}: {error}"

    return runner


def fixed_output(text: str) -> Runner:
    """A runner that always answers ``text`` (a tool that is declared but disabled)."""
    return lambda _payload: text
