"""Model-visible definition of agent-backed tools: ``<tool name="t" agent="p.chatmd"/>``.

Calling such a tool runs the agent prompt with the model's ``input`` string as
its single user message and returns the final answer (spec §6); this module
only builds the definition.
"""

from __future__ import annotations

from chatmd.tools.schema import STRING, JsonObject, function_tool, object_schema


def agent_tool_schema() -> JsonObject:
    return object_schema({"input": STRING}, ["input"])


def default_agent_description(agent: str) -> str:
    return (f"Run the agent prompt `{agent}` with `input` as its user message and return "
            "the agent's final answer.")


def agent_tool_definition(name: str, agent: str, description: str | None) -> JsonObject:
    """The strict function definition of an agent tool."""
    text = (description or "").strip() or default_agent_description(agent)
    return function_tool(name, text, agent_tool_schema(), strict=True)
