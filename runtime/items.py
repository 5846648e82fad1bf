"""Responses API items as the runtime handles them: validation and the few shapes it builds.

:func:`item_problem` decides whether host JSON is a Responses item the
runtime can put in a history (overlay inserts and replacements must be,
moderator-runtime spec 2.2); the builders make the items the runtime
synthesises (developer notes, tool outputs); the readers pull a tool call's
name, payload and call id out of an item.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

CALL_KINDS = ("function_call", "custom_tool_call")
OUTPUT_KINDS = ("function_call_output", "custom_tool_call_output")
MESSAGE_ROLES = ("user", "assistant", "system", "developer")
HOSTED_CALL_KINDS = ("file_search_call", "web_search_call", "computer_call", "image_generation_call",
                     "code_interpreter_call", "local_shell_call", "mcp_call", "mcp_list_tools",
                     "item_reference")


def item_problem(item: Any) -> str | None:
    """Why ``item`` is not a Responses item the runtime accepts, or None when it is."""
    if not isinstance(item, Mapping):
        return "expected a JSON object"
    kind = item.get("type", "message" if "role" in item else None)
    if kind is None:
        return 'expected a "type" field (or a message "role")'
    if not isinstance(kind, str):
        return 'the "type" field must be a string'
    if kind == "message":
        role = item.get("role")
        if role not in MESSAGE_ROLES:
            return f"a message needs a role among {', '.join(MESSAGE_ROLES)}, not {role!r}"
        content = item.get("content")
        if isinstance(content, str):
            return None
        if not isinstance(content, list):
            return "a message needs a content string or a list of content parts"
        for part in content:
            if not isinstance(part, Mapping) or not isinstance(part.get("type"), str):
                return "every content part must be an object with a string \"type\""
        return None
    if kind in CALL_KINDS:
        payload_key = "input" if kind == "custom_tool_call" else "arguments"
        for key in ("name", "call_id", payload_key):
            if not isinstance(item.get(key), str):
                return f"a {kind} needs a string {key!r}"
        return None
    if kind in OUTPUT_KINDS:
        if not isinstance(item.get("call_id"), str):
            return f"a {kind} needs a string 'call_id'"
        output = item.get("output")
        if not isinstance(output, str | list):
            return f"a {kind} needs an 'output' string or list of parts"
        return None
    if kind == "reasoning":
        if not isinstance(item.get("summary", []), list):
            return "a reasoning item's summary must be a list"
        return None
    if kind in HOSTED_CALL_KINDS:
        return None
    return f"unknown item type {kind!r}"


def input_message(role: str, text: str) -> dict[str, Any]:
    """An input message with one ``input_text`` part."""
    return {"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]}


def developer_message(text: str) -> dict[str, Any]:
    """The developer message overlay prepends and steering notes use (DECISIONS 14)."""
    return input_message("developer", text)


def tool_output(call_id: str, output: str | list[Any], *, custom: bool) -> dict[str, Any]:
    """A function or custom tool output item."""
    return {"type": "custom_tool_call_output" if custom else "function_call_output",
            "call_id": call_id, "output": output}


def is_tool_call(item: Mapping[str, Any]) -> bool:
    return item.get("type") in CALL_KINDS


def is_custom(item: Mapping[str, Any]) -> bool:
    return item.get("type") == "custom_tool_call"


def call_payload(item: Mapping[str, Any]) -> str:
    """A call's payload text: ``input`` of a custom call, ``arguments`` of a function call."""
    value = item.get("input" if is_custom(item) else "arguments")
    return value if isinstance(value, str) else ""


def with_call(item: Mapping[str, Any], name: str, payload: str) -> dict[str, Any]:
    """``item`` with another tool name and payload (call id and item id kept)."""
    changed = dict(item)
    changed["name"] = name
    changed["input" if is_custom(item) else "arguments"] = payload
    return changed


__all__ = ["CALL_KINDS", "OUTPUT_KINDS", "call_payload", "developer_message", "input_message",
           "is_custom", "is_tool_call", "item_problem", "tool_output", "with_call"]
