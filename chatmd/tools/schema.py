"""JSON shapes of the tool definitions sent to the model (spec §6).

Two forms exist in a Responses request::

    {"type": "function", "name": N, "description": D, "parameters": {...}, "strict": B}
    {"type": "custom", "name": N, "description": D, "format": {...}}

``description`` is omitted when there is none. Every object schema built here
has ``"type": "object"`` and ``"additionalProperties": false``; ``required``
is omitted when no property is required.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

JsonObject = dict[str, Any]

STRING: JsonObject = {"type": "string"}
INTEGER: JsonObject = {"type": "integer"}
BOOLEAN: JsonObject = {"type": "boolean"}
STRING_ARRAY: JsonObject = {"type": "array", "items": {"type": "string"}}
NULLABLE_STRING: JsonObject = {"type": ["string", "null"]}


def object_schema(properties: Mapping[str, JsonObject], required: Sequence[str] = ()) -> JsonObject:
    """An object schema with ``properties`` (in order) and the ``required`` names."""
    unknown = [name for name in required if name not in properties]
    if unknown:
        raise ValueError(f"required properties {unknown} are not declared")
    schema: JsonObject = {
        "type": "object",
        "properties": {name: dict(value) for name, value in properties.items()},
    }
    if required:
        schema["required"] = list(required)
    schema["additionalProperties"] = False
    return schema


def function_tool(name: str, description: str | None, parameters: JsonObject, *,
                  strict: bool) -> JsonObject:
    """A ``{"type": "function", ...}`` definition."""
    definition: JsonObject = {"type": "function", "name": name}
    if description:
        definition["description"] = description
    definition["parameters"] = parameters
    definition["strict"] = strict
    return definition


def custom_tool(name: str, description: str | None, format_: JsonObject) -> JsonObject:
    """A free-form ``{"type": "custom", ...}`` definition (the model sends raw text)."""
    definition: JsonObject = {"type": "custom", "name": name}
    if description:
        definition["description"] = description
    definition["format"] = format_
    return definition
