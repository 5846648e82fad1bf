"""Output finalisation (shell spec §8.9): terminal sanitisation, decoding, redaction, caps.

:func:`sanitise_terminal` removes CSI escape sequences (ESC ``[`` ... a final
byte 0x40-0x7E), other escape sequences, and every control byte except TAB,
LF and CR (DEL included). :func:`finalise` then decodes as UTF-8 (invalid
sequences replaced), redacts secrets and truncates each channel to its limit.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

_CSI = re.compile(rb"\x1b\[[\x20-\x3f]*[\x40-\x7e]?")
_OSC = re.compile(rb"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?")
_ESC = re.compile(rb"\x1b[\x20-\x2f]*[\x30-\x7e]?")
_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def sanitise_terminal(data: bytes) -> bytes:
    data = _CSI.sub(b"", data)
    data = _OSC.sub(b"", data)
    data = _ESC.sub(b"", data)
    return _CONTROL.sub(b"", data)


@dataclass(frozen=True)
class Channel:
    """One finalised output channel."""

    text: str
    truncated: bool


def finalise(data: bytes, limit: int, truncated: bool,
             redact: Callable[[str], str]) -> Channel:
    """Sanitise, decode, redact and cap one channel (``truncated``: capture already cut)."""
    text = redact(sanitise_terminal(data).decode("utf-8", "replace"))
    encoded = text.encode("utf-8")
    if len(encoded) > limit:
        text = encoded[:limit].decode("utf-8", "ignore")
        truncated = True
    return Channel(text, truncated)


def preview(text: str, redact: Callable[[str], str], size: int = 256) -> str:
    """A safe preview of script source: sanitised, redacted, first ``size`` bytes."""
    clean = sanitise_terminal(redact(text).encode("utf-8"))[:size]
    return clean.decode("utf-8", "ignore")
