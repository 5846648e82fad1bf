"""What a person sees during a run: streamed text on stdout, tool activity on stderr.

On a terminal, reasoning summaries are dimmed and each assistant answer starts on its own
line; on a pipe the same text is written plain (no escape sequences). Tool activity is one
line per call on standard error: ``tool NAME ARGS-PREVIEW (DURATION) ok|error: ...``.
:class:`QuietDisplay` shows nothing (``--format json``, nested agents).
"""

from __future__ import annotations

import io
import sys
import threading
from typing import TextIO

DIM = "\x1b[2m"
RESET = "\x1b[0m"
PREVIEW_CHARS = 60


def preview(payload: str, limit: int = PREVIEW_CHARS) -> str:
    """One line, at most ``limit`` characters."""
    flat = " ".join(payload.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class Display:
    def __init__(self, out: TextIO | None = None, err: TextIO | None = None) -> None:
        self.out = out if out is not None else sys.stdout
        self.err = err if err is not None else sys.stderr
        self.live = bool(getattr(self.out, "isatty", lambda: False)())
        self._mode: str | None = None
        self._at_line_start = True
        self._lock = threading.Lock()

    def _write(self, text: str, mode: str) -> None:
        if not text:
            return
        with self._lock:
            if self._mode != mode and not self._at_line_start:
                self.out.write("\n")
            if self.live and mode == "reasoning":
                text = DIM + text + RESET
            self._mode = mode
            self.out.write(text)
            self._at_line_start = text.endswith("\n") or text.endswith(RESET + "\n")
            self.out.flush()

    def text_delta(self, text: str) -> None:
        self._write(text, "text")

    def reasoning_delta(self, text: str) -> None:
        self._write(text, "reasoning")

    def end_block(self) -> None:
        with self._lock:
            if not self._at_line_start:
                self.out.write("\n")
                self.out.flush()
                self._at_line_start = True
            self._mode = None

    def tool_line(self, name: str, arguments: str, seconds: float, error: str | None) -> None:
        outcome = "ok" if error is None else f"error: {preview(error, 120)}"
        line = f"tool {name} {preview(arguments)} ({seconds * 1000:.0f} ms) {outcome}\n"
        with self._lock:
            self.err.write(line)
            self.err.flush()

    def note(self, text: str) -> None:
        self.end_block()
        with self._lock:
            self.err.write(text + "\n")
            self.err.flush()


class QuietDisplay(Display):
    """Shows nothing."""

    def __init__(self) -> None:
        super().__init__(out=io.StringIO(), err=io.StringIO())
        self.out = self.err = _Null()


class _Null(io.StringIO):
    """Swallows everything."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


__all__ = ["Display", "QuietDisplay", "preview"]
