"""The moderator and UI-moderator surfaces: structural aliases, helper and capability modules.

Stdlib spec 6 (aliases ``item``, ``tool_desc``, ``tool_call``, ``tool_result``,
``context``; helper modules ``Item``, ``Tool_call``, ``Context``) and 7
(capability modules, each export building a ``Perform``/``Spawn`` task node).
"""

from __future__ import annotations

from chatml.surfaces.core import CORE, OPTION
from chatml.surfaces.model import (
    PERFORM,
    SPAWN,
    AliasSpec,
    Effect,
    Export,
    ModuleSpec,
    Surface,
    merge,
)


def _opt(inner: str) -> str:
    return OPTION.format(inner)


def _perform(name: str, scheme: str, operation: str, adapter: str | None = None) -> Export:
    return Export(name, scheme, Effect(PERFORM, operation, adapter))


def _spawn(name: str, scheme: str, operation: str, adapter: str | None = None) -> Export:
    return Export(name, scheme, Effect(SPAWN, operation, adapter))


ALIASES = (
    AliasSpec("item", "{ id : string; value : json }"),
    AliasSpec("tool_desc", "{ name : string; description : string; input_schema : json }"),
    AliasSpec("tool_call", "{ id : string; name : string; args : json }"),
    AliasSpec("tool_result", "{ call_id : string; name : string; result : json }"),
    AliasSpec("context", "{ session_id : string; now_ms : int; phase : string; items : item array;"
                         " available_tools : tool_desc array; session_meta : json }"),
)

LOG = ModuleSpec("Log", tuple(
    _perform(level, "string -> unit task", f"Log.{level}")
    for level in ("debug", "info", "warn", "error")
))

ITEM = ModuleSpec("Item", (
    Export("create", "string -> json -> item"),
    Export("id", "item -> string"),
    Export("value", "item -> json"),
    Export("kind", "item -> " + _opt("string")),
    Export("role", "item -> " + _opt("string")),
    Export("text_parts", "item -> string array"),
    Export("text", "item -> " + _opt("string")),
    Export("input_text_message", "string -> string -> string -> item"),
    Export("output_text_message", "string -> string -> item"),
    Export("user_text", "string -> string -> item"),
    Export("assistant_text", "string -> string -> item"),
    Export("system_text", "string -> string -> item"),
    Export("notice", "string -> string -> item"),
    Export("is_user", "item -> bool"),
    Export("is_assistant", "item -> bool"),
    Export("is_system", "item -> bool"),
    Export("is_tool_call", "item -> bool"),
    Export("is_tool_result", "item -> bool"),
))

TOOL_CALL = ModuleSpec("Tool_call", (
    Export("arg", "tool_call -> string -> " + _opt("json")),
    Export("arg_string", "tool_call -> string -> " + _opt("string")),
    Export("arg_bool", "tool_call -> string -> " + _opt("bool")),
    Export("arg_array", "tool_call -> string -> " + _opt("json array")),
    Export("is_named", "tool_call -> string -> bool"),
    Export("is_one_of", "tool_call -> string array -> bool"),
))

CONTEXT = ModuleSpec("Context", (
    Export("last_item", "context -> " + _opt("item")),
    Export("last_user_item", "context -> " + _opt("item")),
    Export("last_assistant_item", "context -> " + _opt("item")),
    Export("last_system_item", "context -> " + _opt("item")),
    Export("last_tool_call", "context -> " + _opt("item")),
    Export("last_tool_result", "context -> " + _opt("item")),
    Export("find_item", "context -> string -> " + _opt("item")),
    Export("items_since_last_user_turn", "context -> item array"),
    Export("items_since_last_assistant_turn", "context -> item array"),
    Export("items_by_role", "context -> string -> item array"),
    Export("find_tool", "context -> string -> " + _opt("tool_desc")),
    Export("has_tool", "context -> string -> bool"),
))

TURN = ModuleSpec("Turn", (
    _perform("prepend_system", "string -> unit task", "Turn.prepend_system"),
    _perform("append_item", "item -> unit task", "Turn.append_message"),
    _perform("replace_item", "string -> item -> unit task", "Turn.replace_message"),
    _perform("delete_item", "string -> unit task", "Turn.delete_message"),
    _perform("replace_or_append", _opt("string") + " -> item -> unit task",
             "Turn.replace_message", "replace_or_append"),
    _perform("append_notice", "string -> unit task", "Turn.append_message", "append_notice"),
    _perform("append_message", "item -> unit task", "Turn.append_message"),
    _perform("replace_message", "string -> item -> unit task", "Turn.replace_message"),
    _perform("delete_message", "string -> unit task", "Turn.delete_message"),
    _perform("halt", "string -> unit task", "Turn.halt"),
))

_TOOL_OUTCOME = "[`Ok(json) | `Error(string)]"
_MODEL_OUTCOME = "[`Ok(json) | `Refused(string) | `Error(string)]"

TOOL = ModuleSpec("Tool", (
    _perform("approve", "unit -> unit task", "Tool.approve"),
    _perform("reject", "string -> unit task", "Tool.reject"),
    _perform("rewrite_args", "json -> unit task", "Tool.rewrite_args"),
    _perform("redirect", "string -> json -> unit task", "Tool.redirect"),
    _perform("call", f"string -> json -> {_TOOL_OUTCOME} task", "Tool.call"),
    _spawn("spawn", "string -> json -> string task", "Tool.spawn"),
))

MODEL = ModuleSpec("Model", (
    _perform("call", f"string -> json -> {_MODEL_OUTCOME} task", "Model.call"),
    _perform("call_text", f"string -> string -> {_MODEL_OUTCOME} task", "Model.call",
             "text_payload"),
    _perform("call_json", f"string -> json -> {_MODEL_OUTCOME} task", "Model.call"),
    _spawn("spawn", "string -> json -> string task", "Model.spawn"),
    _spawn("spawn_text", "string -> string -> string task", "Model.spawn", "text_payload"),
))

SCHEDULE = ModuleSpec("Schedule", (
    _spawn("after_ms", "int -> 'e -> string task", "Schedule.after_ms"),
    _perform("cancel", "string -> unit task", "Schedule.cancel"),
))

RUNTIME = ModuleSpec("Runtime", (
    _perform("emit", "'e -> unit task", "Runtime.emit"),
    _perform("request_compaction", "unit -> unit task", "Runtime.request_compaction"),
    _perform("request_turn", "unit -> unit task", "Runtime.request_turn"),
    _perform("end_session", "string -> unit task", "Runtime.end_session"),
))

PROCESS = ModuleSpec("Process", (
    _spawn("run", "string -> string array -> string task", "Process.run"),
))

UI = ModuleSpec("Ui", (
    _perform("notify", "string -> unit task", "Ui.notify"),
))

APPROVAL = ModuleSpec("Approval", (
    _perform("ask_text", "string -> string task", "Approval.ask_text"),
    _perform("ask_choice", "string -> string array -> string task", "Approval.ask_choice"),
))

MODERATOR = merge("moderator", CORE, Surface(
    name="moderator extras",
    globals=(),
    modules=(LOG, ITEM, TOOL_CALL, CONTEXT, TURN, TOOL, MODEL, SCHEDULE, RUNTIME, PROCESS),
    aliases=ALIASES,
))

UI_MODERATOR = merge("ui_moderator", MODERATOR, Surface(
    name="ui extras", globals=(), modules=(UI, APPROVAL), aliases=(),
))
