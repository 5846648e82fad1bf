"""Conversion of a prompt (IR) to an OpenAI Responses API request (spec §7).

* :func:`to_items` — the conversation as Responses input items, in document
  order (config, tools, runtimes and scripts produce none);
* :func:`build_request` — the request body: ``model``, ``input``,
  ``max_output_tokens``, ``temperature``, ``reasoning``, ``tools`` and the
  host's envelope flags;
* :func:`compile_request` — the same, returning warnings and errors together
  instead of raising (what ``chatmdc compile --emit request`` uses).

Everything outside the prompt comes from a
:class:`~chatmd.request_context.ConversionContext`. Every problem is a
positioned diagnostic; the raising functions raise
:class:`~chatcommon.diagnostics.DiagnosticError` carrying all of them (independent
errors in different messages are all reported).
"""

from __future__ import annotations

import math
from typing import Any

import attrs

from chatcommon.diagnostics import Diagnostic, DiagnosticError
from chatmd.ir import (
    ASSISTANT,
    DEVELOPER,
    MSG,
    SYSTEM,
    TOOL_CALL,
    TOOL_RESPONSE,
    USER,
    Config,
    Message,
    Prompt,
    Reasoning,
)
from chatmd.ir_diagnostics import diagnostic_at
from chatmd.request_content import ContentResolver
from chatmd.request_context import ConversionContext
from chatmd.tools.construct import build_tools

PHASE = "request"

Item = dict[str, Any]

INPUT_ROLES = (USER, SYSTEM, DEVELOPER)
KNOWN_ROLES = (USER, ASSISTANT, SYSTEM, DEVELOPER, "tool")
REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high")
CUSTOM_CALL = "custom_tool_call"
CUSTOM_OUTPUT = "custom_tool_call_output"


@attrs.frozen
class RequestResult:
    """A request body (None when there were errors) and every diagnostic reported."""

    request: dict[str, Any] | None
    diagnostics: tuple[Diagnostic, ...]

    @property
    def ok(self) -> bool:
        return not any(d.is_error for d in self.diagnostics)


class _Converter:
    def __init__(self, prompt: Prompt, ctx: ConversionContext) -> None:
        self.prompt = prompt
        self.content = ContentResolver(ctx, prompt.name)
        self.diagnostics = self.content.diagnostics

    def error(self, item: Message | Reasoning, code: str, message: str, *,
              hint: str | None = None) -> None:
        self.diagnostics.append(diagnostic_at(code, message, provenance=item.provenance,
                                              fallback_file=self.prompt.name, phase=PHASE,
                                              hint=hint))

    def items(self) -> list[Item]:
        out = []
        for item in self.prompt.items:
            converted = (self.reasoning(item) if isinstance(item, Reasoning)
                         else self.message(item))
            if converted is not None:
                out.append(converted)
        return out

    def reasoning(self, item: Reasoning) -> Item:
        converted: Item = {
            "type": "reasoning",
            "id": item.id,
            "summary": [{"type": part.type, "text": part.text} for part in item.summary],
        }
        if item.status is not None:
            converted["status"] = item.status
        return converted

    def message(self, message: Message) -> Item | None:
        kind = message.kind
        if kind in INPUT_ROLES:
            return self.input_message(message, kind)
        if kind == ASSISTANT:
            return self.assistant(message)
        if kind == TOOL_CALL:
            return self.call(message)
        if kind == TOOL_RESPONSE:
            return self.output(message)
        role = message.role.lower()
        if kind != MSG or role not in KNOWN_ROLES:
            self.error(message, "chatmd.unknown_role",
                       f"unknown message role \"{message.role}\": expected one of "
                       + ", ".join(KNOWN_ROLES),
                       hint="use <user>, <assistant>, <system> or <developer>, or "
                       "<msg role=\"user\"> with a supported role")
            return None
        if role in INPUT_ROLES:
            return self.input_message(message, role)
        if role == ASSISTANT:
            return self.output_message(message, message.id or "", phase=False)
        if message.tool_call is not None:
            return self.call(message)
        return self.output(message)

    def input_message(self, message: Message, role: str) -> Item:
        return {"type": "message", "role": role,
                "content": self.content.input_parts(message.content, message.provenance)}

    def assistant(self, message: Message) -> Item | None:
        if message.id is not None:
            return self.output_message(message, message.id, phase=True)
        if message.status is not None:
            self.error(message, "chatmd.assistant_status_without_id",
                       f"<assistant status=\"{message.status}\"> has no id: a status is only "
                       "meaningful on a recorded model output",
                       hint="add the output's id=\"...\", or remove status")
            return None
        content = []
        if message.content is not None:
            text = self.content.render_string(message.content, message.provenance)
            content.append({"type": "output_text", "text": text})
        return {"type": "message", "role": ASSISTANT, "content": content}

    def output_message(self, message: Message, item_id: str, *, phase: bool) -> Item:
        text = self.content.render_string(message.content, message.provenance)
        converted: Item = {
            "type": "message",
            "role": ASSISTANT,
            "id": item_id,
            "status": message.status or "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
        if phase and message.phase is not None:
            converted["phase"] = message.phase
        return converted

    def call(self, message: Message) -> Item:
        reference = message.tool_call
        name = reference.name if reference is not None else (message.name or "")
        call_id = reference.call_id if reference is not None else (message.tool_call_id or "")
        arguments = self.content.render_string(message.content, message.provenance)
        if message.type == CUSTOM_CALL:
            converted: Item = {"type": CUSTOM_CALL, "name": name, "input": arguments,
                               "call_id": call_id}
        else:
            converted = {"type": "function_call", "name": name, "arguments": arguments,
                         "call_id": call_id}
        if message.id is not None:
            converted["id"] = message.id
        return converted

    def output(self, message: Message) -> Item | None:
        if message.tool_call_id is None:
            self.error(message, "chatmd.missing_tool_call_id",
                       "tool output has no tool_call_id: expected the id of the call it "
                       "answers", hint="add tool_call_id=\"...\" matching the <tool_call>")
            return None
        content = message.content
        output: str | list[Item]
        if content is None:
            output = ""
        elif isinstance(content, str):
            output = content
        else:
            output = self.content.input_parts(content, message.provenance)
        custom = message.type in (CUSTOM_CALL, CUSTOM_OUTPUT)
        return {"type": CUSTOM_OUTPUT if custom else "function_call_output",
                "call_id": message.tool_call_id, "output": output}


def _raise_on_errors(diagnostics: list[Diagnostic]) -> None:
    if any(d.is_error for d in diagnostics):
        raise DiagnosticError(diagnostics)


def to_items(prompt: Prompt, ctx: ConversionContext) -> list[Item]:
    """The conversation as Responses input items; raises DiagnosticError on any error."""
    converter = _Converter(prompt, ctx)
    items = converter.items()
    _raise_on_errors(converter.diagnostics)
    return items


def _config_problems(prompt: Prompt) -> list[Diagnostic]:
    config: Config = prompt.config
    problems = []
    effort = config.reasoning_effort
    if effort is not None and effort not in REASONING_EFFORTS:
        problems.append(diagnostic_at(
            "chatmd.invalid_reasoning_effort",
            f"reasoning_effort=\"{effort}\" is not supported: expected one of "
            + ", ".join(REASONING_EFFORTS),
            provenance=config.provenance, fallback_file=prompt.name, phase=PHASE))
    if config.temperature is not None and not math.isfinite(config.temperature):
        problems.append(diagnostic_at(
            "chatmd.invalid_attribute_value",
            f"temperature={config.temperature} cannot be sent: expected a finite number",
            provenance=config.provenance, fallback_file=prompt.name, phase=PHASE))
    return problems


def compile_request(prompt: Prompt, ctx: ConversionContext) -> RequestResult:
    """The request body and every diagnostic (warnings included); body None on errors."""
    diagnostics = _config_problems(prompt)
    converter = _Converter(prompt, ctx)
    items = converter.items()
    diagnostics.extend(converter.diagnostics)
    tools = build_tools(prompt, ctx.tool_host())
    diagnostics.extend(tools.diagnostics)
    if any(d.is_error for d in diagnostics):
        return RequestResult(None, tuple(diagnostics))
    config = prompt.config
    request: dict[str, Any] = {
        "model": config.model if config.model is not None else ctx.default_model,
        "input": items,
        "max_output_tokens": (config.max_tokens if config.max_tokens is not None
                              else ctx.default_max_output_tokens),
    }
    if config.temperature is not None:
        request["temperature"] = config.temperature
    if config.reasoning_effort is not None:
        request["reasoning"] = {"effort": config.reasoning_effort, "summary": "detailed"}
    if tools.definitions:
        request["tools"] = list(tools.definitions)
    for key in ("parallel_tool_calls", "store", "stream"):
        value = getattr(ctx, key)
        if value is not None:
            request[key] = value
    return RequestResult(request, tuple(diagnostics))


def build_request(prompt: Prompt, ctx: ConversionContext) -> dict[str, Any]:
    """The Responses request body for ``prompt``; raises DiagnosticError on any error.

    Warnings (an unresolved MCP server, ...) do not stop the build; use
    :func:`compile_request` to see them.
    """
    result = compile_request(prompt, ctx)
    if result.request is None:
        raise DiagnosticError(result.diagnostics)
    return result.request
