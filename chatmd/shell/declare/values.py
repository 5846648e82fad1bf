"""Value types of the shell vocabulary (spec §2): parsers from attribute text to values.

Each parser takes the decoded attribute text and returns the parsed value, or
raises :class:`ValueProblem` with a message that says what was expected. The
caller (the attribute reader) turns the problem into a positioned diagnostic
with the code that fits the context (runtime or tool attribute).

Path expressions are kept symbolic (:class:`PathExpr`): variables are resolved
only when a runtime is instantiated, against host-supplied directories.
"""

from __future__ import annotations

import json
import re

import attrs

from chatcommon.numbers import abbreviate_digits, parse_int

#: The variables a path expression may start with (spec §2).
PATH_VARIABLES: tuple[str, ...] = (
    "workspace", "source_dir", "prompt_dir", "tool_dir", "session_dir", "cache_dir", "home",
)

_INT64_MAX = 2**63 - 1
_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ms|s|m|h)")
_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_BYTES = re.compile(r"(\d+)(GiB|MiB|KiB|B)?")
_BYTE_UNITS = {None: 1, "B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3}
_UINT = re.compile(r"\d+")
_RUNTIME_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]*")
_VARIABLE = re.compile(r"\$\{([^}]*)\}")
_HEX = re.compile(r"[0-9A-Fa-f]+")


class ValueProblem(ValueError):
    """An attribute value that does not parse; ``str()`` says what was expected."""


@attrs.frozen
class PathExpr:
    """A path expression: absolute (``base`` None) or ``${base}`` followed by ``path``.

    A relative value is stored with base ``source_dir`` and the declaring file's
    folder in ``source_dir`` (``${source_dir}`` means the folder of the file that
    contains the declaration, so two files' relative paths never mix).
    """

    base: str | None
    path: str
    source_dir: str | None = None

    def __str__(self) -> str:
        if self.base is None:
            return self.path
        if not self.path:
            return f"${{{self.base}}}"
        return f"${{{self.base}}}/{self.path}"


def parse_bool(text: str) -> bool:
    if text == "true":
        return True
    if text == "false":
        return False
    raise ValueProblem(f"expected true or false, found {text!r}")


def parse_enum(text: str, choices: tuple[str, ...]) -> str:
    if text in choices:
        return text
    raise ValueProblem(f"expected one of {', '.join(choices)}, found {text!r}")


def parse_duration(text: str) -> float:
    """``30s``, ``1500ms``, ``2.5m``, ``1h`` as float seconds (> 0)."""
    match = _DURATION.fullmatch(text)
    if match is None:
        raise ValueProblem(f"expected a duration such as 30s, 1500ms, 2.5m or 1h "
                           f"(a number > 0 followed by ms, s, m or h), found {text!r}")
    seconds = float(match.group(1)) * _DURATION_UNITS[match.group(2)]
    if seconds <= 0:
        raise ValueProblem(f"expected a duration greater than zero, found {text!r}")
    return seconds


def parse_optional_duration(text: str) -> float | None:
    """A duration, or ``none`` (None) to clear the limit."""
    if text == "none":
        return None
    try:
        return parse_duration(text)
    except ValueProblem:
        raise ValueProblem(f"expected a duration such as 30s, 1500ms, 2.5m or 1h, or none, "
                           f"found {text!r}") from None


def parse_bytes(text: str) -> int:
    """``512``, ``1KiB``, ``4MiB``, ``2GiB``, ``10B`` as an integer byte count."""
    match = _BYTES.fullmatch(text)
    if match is None:
        raise ValueProblem(f"expected a whole number of bytes with an optional unit B, KiB, "
                           f"MiB or GiB (no fractions), found {text!r}")
    number = parse_int(match.group(1))
    value = _INT64_MAX + 1 if number is None else number * _BYTE_UNITS[match.group(2)]
    if value > _INT64_MAX:
        raise ValueProblem(f"byte size {abbreviate_digits(text)!r} is too large (the maximum is {_INT64_MAX} bytes)")
    return value


def parse_uint(text: str) -> int:
    if _UINT.fullmatch(text) is None:
        raise ValueProblem(f"expected a whole number >= 0, found {text!r}")
    value = parse_int(text)
    if value is None or value > _INT64_MAX:
        raise ValueProblem(f"number {abbreviate_digits(text)!r} is too large (the maximum is {_INT64_MAX})")
    return value


def parse_positive_int(text: str) -> int:
    value = parse_uint(text)
    if value == 0:
        raise ValueProblem(f"expected a whole number > 0, found {text!r}")
    return value


def parse_csv(text: str) -> tuple[str, ...]:
    """A comma-separated list, items trimmed; an empty item is an error."""
    items = tuple(item.strip() for item in text.split(","))
    if any(not item for item in items):
        raise ValueProblem(f"expected a comma-separated list of non-empty items, found {text!r}")
    return items


def parse_json_strings(text: str) -> tuple[str, ...]:
    """A JSON array of strings, e.g. ``["-c"]``."""
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueProblem(f'expected a JSON array of strings such as ["-c"], found {text!r}')
    return tuple(value)


def parse_path(text: str, source_dir: str) -> PathExpr:
    """A path expression (spec §2); relative values are anchored at ``${source_dir}``."""
    if not text:
        raise ValueProblem("expected a path, found an empty value")
    if "\x00" in text:
        raise ValueProblem("a path may not contain a NUL character")
    if text.startswith("/"):
        return PathExpr(None, text)
    if text.startswith("${"):
        match = _VARIABLE.match(text)
        if match is not None:
            name = match.group(1)
            if name not in PATH_VARIABLES:
                raise ValueProblem(f"unknown path variable ${{{name}}}; expected one of "
                                   + ", ".join(f"${{{v}}}" for v in PATH_VARIABLES))
            rest = text[match.end():]
            if rest and not rest.startswith("/"):
                raise ValueProblem(f"path variable ${{{name}}} must be followed by / or end "
                                   f"the value, found {text!r}")
            rest = rest[1:]
            return PathExpr(name, rest, source_dir if name == "source_dir" else None)
    return PathExpr("source_dir", text, source_dir)


def parse_hex_digest(text: str) -> str:
    """A hexadecimal digest (a SHA-256 pin); compared case-insensitively later."""
    if not text or _HEX.fullmatch(text) is None:
        raise ValueProblem(f"expected a hexadecimal SHA-256 digest, found {text!r}")
    return text


def parse_non_empty(text: str) -> str:
    if not text:
        raise ValueProblem("expected a non-empty value")
    return text


def parse_env_name(text: str) -> str:
    if not text or "=" in text or "\x00" in text:
        raise ValueProblem(f"expected an environment variable name without '=' or NUL, "
                           f"found {text!r}")
    return text


def is_runtime_id(text: str) -> bool:
    """Whether a (qualified) runtime id matches ``[A-Za-z_][A-Za-z0-9_.:-]*``."""
    return _RUNTIME_ID.fullmatch(text) is not None


def format_duration(seconds: float) -> str:
    """A readable duration (``30s``, ``1500ms``, ``2.5m``) for summaries."""
    if seconds < 1:
        return f"{seconds * 1000:g}ms"
    if seconds >= 3600 and seconds % 3600 == 0:
        return f"{seconds / 3600:g}h"
    if seconds >= 60 and seconds % 60 == 0:
        return f"{seconds / 60:g}m"
    return f"{seconds:g}s"


def format_bytes(count: int) -> str:
    """A readable byte size (``1MiB``, ``1500000B``) for summaries."""
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if count >= size and count % size == 0:
            return f"{count // size}{unit}"
    return f"{count}B"
