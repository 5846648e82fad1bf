"""The moderator surface's helper modules (stdlib spec 6): data-driven cases run through
compiled ChatML, plus the argument checks hosts can hit with hand-made values."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatml.engine import Engine
from chatml.values import ChatMLFailure, Variant
from runtime.builtins import context, item, tool_call
from runtime.registry import ModeratorRegistry

CASES = Path(__file__).resolve().parent / "testdata" / "helpers.cases"

PRELUDE = r"""
let ctx = { session_id = "s"; now_ms = 0; phase = "p";
  items = [Item.system_text("system-0", "sys"), Item.user_text("user-1", "u"),
           Item.create("call-1", Json.parse("{\"type\":\"function_call\",\"name\":\"search\"}")),
           Item.assistant_text("assistant-1", "a"),
           Item.create("result-1", Json.parse("{\"type\":\"function_call_output\",\"output\":\"done\"}"))];
  available_tools = [{ name = "search"; description = ""; input_schema = `Null },
                     { name = "browse"; description = ""; input_schema = `Null }];
  session_meta = `Null }
let bare = { ctx with items = [Item.create("bare-1", `Null), Item.create("bare-2", Json.parse("{}"))] }
let call = { id = "c"; name = "search";
  args = Json.parse("{\"query\":\"cats\",\"stream\":true,\"tags\":[\"news\",\"tech\"]}") }
let id_of found = match found with | `Some(i) -> Item.id(i) | `None -> "none"
"""


def _cases() -> list[tuple[int, str, str]]:
    cases = []
    for number, line in enumerate(CASES.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip() and not line.startswith("#"):
            expression, _, expected = line.partition(" ==> ")
            cases.append((number, expression, expected))
    return cases


ModeratorRegistry()  # registers the helper implementations
ENGINE = Engine("moderator")


@pytest.mark.parametrize(("line", "expression", "expected"), _cases(),
                         ids=[f"line{c[0]}" for c in _cases()])
def test_helper_case(line: int, expression: str, expected: str) -> None:
    script = ENGINE.compile(PRELUDE + f"let result = to_string({expression})\n",
                            f"helpers.cases:{line}")
    script.run()
    assert script.value("result") == expected


def test_item_check_messages() -> None:
    with pytest.raises(ChatMLFailure, match="Item.id: expected a record argument"):
        item.id_(3)
    with pytest.raises(ChatMLFailure, match='Item.role: expected field "id"'):
        item.role({"value": Variant("Null")})
    with pytest.raises(ChatMLFailure, match=r"Item.kind.id: expected a string argument"):
        item.kind({"id": 1, "value": Variant("Null")})
    with pytest.raises(ChatMLFailure, match=r"Item.text.value: expected Json.t"):
        item.text({"id": "x", "value": 5})
    with pytest.raises(ChatMLFailure, match="Item.create: expected a string argument"):
        item.create(1, Variant("Null"))


def test_tool_call_and_context_check_messages() -> None:
    with pytest.raises(ChatMLFailure, match="Tool_call.arg: expected a string argument"):
        tool_call.arg({"args": Variant("Null")}, 1)
    with pytest.raises(ChatMLFailure, match='Tool_call.arg: expected field "args"'):
        tool_call.arg({}, "k")
    with pytest.raises(ChatMLFailure, match='Tool_call.is_named: expected field "name"'):
        tool_call.is_named({}, "x")
    with pytest.raises(ChatMLFailure, match='Context.last_item: expected field "items"'):
        context.last_item({})
    with pytest.raises(ChatMLFailure, match="Context.last_item.items: expected an array"):
        context.last_item({"items": 3})
    with pytest.raises(ChatMLFailure, match='Context.has_tool: expected field "available_tools"'):
        context.has_tool({"items": []}, "x")
