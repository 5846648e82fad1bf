"""The last line of defence of a command: an escaping exception becomes one diagnostic.

Every frontend reports bad input as diagnostics; an exception that still
escapes a command is a bug of the toolchain, but the user must get a
diagnostic, never a traceback. :func:`internal_error` turns the exception into
``<language>.internal_error`` (phase ``internal``) positioned in the input: at
the innermost source position the failing code was working on when one can be
found among the traceback's local variables (a
:class:`~chatcommon.sources.Span` or a node with a ``span``), else at line 1,
column 1 of the input file. The message names the exception so that the bug
can be reported; the hint asks for that.
"""

from __future__ import annotations

from types import TracebackType

from chatcommon.diagnostics import Diagnostic
from chatcommon.sources import Span

PHASE = "internal"
#: At most this many traceback frames are searched for a position (innermost first).
_FRAMES_SEARCHED = 64
_MESSAGE_CHARS = 200


def _frames_innermost_first(tb: TracebackType | None) -> list[TracebackType]:
    frames: list[TracebackType] = []
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next
    frames.reverse()
    return frames[:_FRAMES_SEARCHED]


def _span_of(value: object) -> Span | None:
    if isinstance(value, Span):
        return value
    try:
        span = getattr(value, "span", None)
    except Exception:  # a property that fails: not a position
        return None
    return span if isinstance(span, Span) else None


def position_in(error: BaseException, file: str) -> Span | None:
    """The innermost span in ``file`` the traceback's frames hold, or None."""
    for tb in _frames_innermost_first(error.__traceback__):
        for value in list(tb.tb_frame.f_locals.values()):
            span = _span_of(value)
            if span is not None and span.file == file:
                return span
    return None


def describe(error: BaseException) -> str:
    """``RecursionError: maximum recursion depth exceeded`` (clipped)."""
    text = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    return text if len(text) <= _MESSAGE_CHARS else text[:_MESSAGE_CHARS] + "..."


def internal_error(language: str, file: str, error: BaseException) -> Diagnostic:
    """``<language>.internal_error`` for ``error`` raised while processing ``file``."""
    code = f"{language}.internal_error"
    message = f"internal error while processing this input: {describe(error)}"
    hint = "this is a bug in the toolchain, not in the input; please report it with the input"
    span = position_in(error, file)
    if span is not None:
        return Diagnostic.at(span, code, message, phase=PHASE, hint=hint)
    return Diagnostic.for_file(file, code, message, phase=PHASE, hint=hint)
