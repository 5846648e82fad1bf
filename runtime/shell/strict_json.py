"""Strict JSON documents for the shell security phase (trusted sources, signatures, keys).

:func:`load_json_file` reads a UTF-8 JSON file whose objects have no duplicate
keys; :func:`exact_object` checks that a decoded value is an object with
exactly the expected keys. Both raise :class:`ShapeError`, whose message the
caller turns into its own stable code.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

#: Security documents are small; anything larger is refused before decoding.
MAX_DOCUMENT_BYTES = 1 << 20


class ShapeError(ValueError):
    """A document is unreadable, not JSON, or not of the expected shape."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ShapeError(f"duplicate key {key!r}")
        result[key] = value
    return result


def load_json_file(path: str) -> Any:
    """The decoded JSON of ``path`` (duplicate keys, NaN and oversize files refused)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_DOCUMENT_BYTES + 1)
    except OSError as error:
        raise ShapeError(f"cannot read {path}: {error.strerror or error}") from None
    if len(data) > MAX_DOCUMENT_BYTES:
        raise ShapeError(f"{path} is larger than {MAX_DOCUMENT_BYTES} bytes")
    try:
        return json.loads(data.decode("utf-8"), object_pairs_hook=_no_duplicates,
                          parse_constant=_refuse_constant)
    except ShapeError as error:
        raise ShapeError(f"{path}: {error}") from None
    except (UnicodeDecodeError, ValueError) as error:
        raise ShapeError(f"{path} is not valid JSON: {error}") from None


def _refuse_constant(name: str) -> Any:
    raise ShapeError(f"{name} is not JSON")


def exact_object(value: Any, what: str, required: Iterable[str],
                 optional: Iterable[str] = ()) -> dict[str, Any]:
    """``value`` as an object holding every ``required`` key and nothing else but ``optional``."""
    if not isinstance(value, dict):
        raise ShapeError(f"{what} must be a JSON object")
    required = tuple(required)
    allowed = set(required) | set(optional)
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise ShapeError(f"{what} has the unknown field {unknown[0]!r}; expected "
                         f"{', '.join(sorted(allowed))}")
    missing = [key for key in required if key not in value]
    if missing:
        raise ShapeError(f"{what} is missing the field {missing[0]!r}")
    return value


def string_field(data: dict[str, Any], key: str, what: str, *, optional: bool = False
                 ) -> str | None:
    value = data.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value:
        raise ShapeError(f"{what}.{key} must be a non-empty string"
                         + (" or null" if optional else ""))
    return value


def string_list(data: dict[str, Any], key: str, what: str) -> tuple[str, ...]:
    value = data.get(key)
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise ShapeError(f"{what}.{key} must be a list of non-empty strings")
    return tuple(value)


def bool_field(data: dict[str, Any], key: str, what: str) -> bool:
    value = data.get(key)
    if not isinstance(value, bool):
        raise ShapeError(f"{what}.{key} must be true or false")
    return value


def int_field(data: dict[str, Any], key: str, what: str, *, optional: bool = False
              ) -> int | None:
    value = data.get(key)
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ShapeError(f"{what}.{key} must be an integer" + (" or null" if optional else ""))
    return value
