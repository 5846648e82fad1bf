"""JSON arguments of function-call built-ins, validated into plain values (``tool.invalid_arguments``).

The model's arguments text must be a JSON object whose keys are among the
tool's parameters; each accessor checks one value's type and says what was
expected when it is wrong.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import Any

from runtime.builtin_tools.failures import ToolFailure

INVALID = "tool.invalid_arguments"


def parse_arguments(payload: str, tool: str, allowed: Collection[str]) -> dict[str, Any]:
    """The arguments object; a failure when it is not JSON, not an object or has unknown keys."""
    try:
        value = json.loads(payload) if payload.strip() else {}
    except json.JSONDecodeError as error:
        raise ToolFailure(INVALID, f"the arguments of {tool} are not valid JSON: {error.msg} "
                          f"at line {error.lineno} column {error.colno}",
                          hint="send a JSON object such as " + _example(allowed)) from None
    if not isinstance(value, dict):
        raise ToolFailure(INVALID, f"the arguments of {tool} must be a JSON object, not "
                          f"{_json_type(value)}", hint="send " + _example(allowed))
    unknown = sorted(key for key in value if key not in allowed)
    if unknown:
        raise ToolFailure(INVALID, f"{tool} has no argument " +
                          ", ".join(f'"{key}"' for key in unknown),
                          hint="expected arguments: " + ", ".join(allowed))
    return value


def string_arg(args: Mapping[str, Any], name: str, tool: str, *,
               aliases: tuple[str, ...] = ()) -> str:
    """A required, non-empty string (the first of ``name`` and its ``aliases`` present)."""
    for key in (name, *aliases):
        if args.get(key) is not None:
            return _string(args[key], key, tool)
    raise ToolFailure(INVALID, f"{tool} needs the string argument \"{name}\"")


def optional_string(args: Mapping[str, Any], name: str, tool: str) -> str | None:
    value = args.get(name)
    return None if value is None else _string(value, name, tool)


def any_string(args: Mapping[str, Any], name: str, tool: str) -> str:
    """A required string that may be empty (file content, replacement text)."""
    value = args.get(name)
    if not isinstance(value, str):
        raise ToolFailure(INVALID, f"{tool} needs the string argument \"{name}\", got "
                          f"{_json_type(value)}")
    return value


def optional_count(args: Mapping[str, Any], name: str, tool: str) -> int | None:
    """An optional non-negative integer."""
    value = args.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ToolFailure(INVALID, f"\"{name}\" of {tool} must be a non-negative integer, got "
                          f"{json.dumps(value)}")
    return value


def bool_arg(args: Mapping[str, Any], name: str, tool: str, *, default: bool) -> bool:
    value = args.get(name)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ToolFailure(INVALID, f"\"{name}\" of {tool} must be true or false, got "
                          f"{json.dumps(value)}")
    return value


def _string(value: Any, key: str, tool: str) -> str:
    if not isinstance(value, str):
        raise ToolFailure(INVALID, f"\"{key}\" of {tool} must be a string, got "
                          f"{_json_type(value)}")
    if not value:
        raise ToolFailure(INVALID, f"\"{key}\" of {tool} must not be empty")
    return value


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def _example(allowed: Collection[str]) -> str:
    return "{" + ", ".join(f'"{key}": ...' for key in allowed) + "}"
