"""The canonical ChatMD text of a whole prompt (IR → ChatMD), for ``chatmdc compile --emit chatmd``.

:func:`write_prompt` renders a :class:`~chatmd.ir.Prompt` — declarations and
conversation — so that loading the text again (under the same display name,
from the same folder) gives an equal prompt. The layout is fixed:

1. the effective ``<config/>`` (when it sets anything);
2. ``<moderator_runtime/>``, ``<shell_access>`` runtimes, ``<script>``s, ``<tool>``s;
3. the conversation items, in order.

Each element is followed by one LF and free text always goes in RAW blocks
(:func:`chatmd.transcript_writer.frame`). Imports are already expanded in the IR, so the
canonical text is self-contained except for ``src`` files (scripts, documents,
images, agents), which keep their references. Where an imported message came
from is kept with ``ochat-source-context``.

Two things cannot survive flattening exactly, and are written by meaning
instead: declarations from a namespaced import keep their *qualified* ids and
references (``team:guard``), and a script ``src`` from another folder than the
root prompt's is rewritten relative to the root prompt's folder.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from decimal import Decimal
from typing import Any

from chatmd.ast import Attribute, Element, Node, Text
from chatmd.ir import (
    MSG,
    TOOL_CALL,
    AgentItem,
    AgentTool,
    BuiltinTool,
    Config,
    Content,
    ContentItem,
    CustomTool,
    DocItem,
    ImageItem,
    InlineSource,
    McpTool,
    Message,
    ModeratorRuntime,
    PathExpr,
    Prompt,
    ReadFileTool,
    ReadRoot,
    Reasoning,
    Script,
    ScriptLimits,
    ShellRuntime,
    ShellTool,
    TextItem,
    Tool,
)
from chatmd.transcript_writer import attribute, frame
from chatmd.vocabulary import is_blank

#: Separates two adjacent text items: an element the content model drops, so
#: the texts on either side stay two items instead of merging into one.
TEXT_ITEM_SEPARATOR = "<summary/>"

_DEFAULT_LIMITS = ScriptLimits()
#: The root a ``<tool name="read_file"/>`` without ``<read>`` children gets.
DEFAULT_READ_ROOT = ReadRoot("cwd", PathExpr("tool_dir", ""), "ochat launch directory")


def _attrs(pairs: Sequence[tuple[str, str | None]]) -> str:
    return "".join(attribute(name, value) for name, value in pairs)


def _optional(pairs: Sequence[tuple[str, str | None]]) -> list[tuple[str, str | None]]:
    return [(name, value) for name, value in pairs if value is not None]


# --- syntax trees (shell declarations are kept as elements) -----------------------------------


def render_node(node: Node) -> str:
    """A syntax node as ChatMD that parses back to an equal node (inside the same scope).

    Walked with an explicit stack: elements may nest as deep as the parser allows.
    """
    out: list[str] = []
    stack: list[Iterator[Node]] = [iter((node,))]
    closings: list[str] = []
    while stack:
        child = next(stack[-1], None)
        if child is None:
            stack.pop()
            if closings:
                out.append(closings.pop())
            continue
        if isinstance(child, Text):
            text = child.text
            out.append(text if text and is_blank(text) else frame(text))
            continue
        attributes = _attrs([(a.name, a.value) for a in child.attrs])
        if not child.children and child.self_closing:
            out.append(f"<{child.tag}{attributes}/>")
            continue
        out.append(f"<{child.tag}{attributes}>")
        stack.append(iter(child.children))
        closings.append(f"</{child.tag}>")
    return "".join(out)


def _with_attribute(element: Element, name: str, value: str | None) -> Element:
    """``element`` with the last ``name`` attribute set to ``value`` (unchanged when equal)."""
    if value is None or element.get(name) == value:
        return element
    attrs = list(element.attrs)
    for index in range(len(attrs) - 1, -1, -1):
        if attrs[index].name == name:
            attrs[index] = Attribute(name, value)
            break
    else:
        attrs.append(Attribute(name, value))
    return Element(element.tag, tuple(attrs), element.children, element.span,
                   element.end_span, element.self_closing)


# --- declarations -----------------------------------------------------------------------------


def _number(value: float) -> str:
    return format(Decimal(repr(value)), "f") if "e" in repr(value) else repr(value)


def config_text(config: Config) -> str | None:
    if config == Config():
        return None
    pairs = _optional([
        ("model", config.model),
        ("max_tokens", None if config.max_tokens is None else str(config.max_tokens)),
        ("temperature", None if config.temperature is None else _number(config.temperature)),
        ("reasoning_effort", config.reasoning_effort),
        ("id", config.id),
    ])
    flag = " show_tool_call" if config.show_tool_call else ""
    return f"<config{_attrs(pairs)}{flag}/>"


def moderator_runtime_text(runtime: ModeratorRuntime) -> str:
    return f"<moderator_runtime{attribute('shell_runtime', runtime.qualified)}/>"


def shell_runtime_text(runtime: ShellRuntime) -> str:
    """The ``<shell_access>`` element of a declared runtime (never called for a synthetic one)."""
    assert runtime.element is not None, "a synthetic runtime has no text"
    element = _with_attribute(runtime.element, "id", runtime.id or None)
    element = _with_attribute(element, "extends", runtime.extends)
    return render_node(element)


def _limit_values(limits: ScriptLimits) -> list[tuple[str, str | None]]:
    pairs: list[tuple[str, str | None]] = []
    if limits.wall_time != _DEFAULT_LIMITS.wall_time:
        pairs.append(("wall_time", _number(limits.wall_time) + "s"))
    for name in ("fuel", "max_tasks", "max_value", "max_output", "max_array_items", "max_depth"):
        value = getattr(limits, name)
        if value != getattr(_DEFAULT_LIMITS, name):
            pairs.append((name, str(value)))
    return pairs


def script_text(script: Script, prompt_dir: str) -> str:
    head: list[tuple[str, str | None]] = [
        ("language", script.language), ("kind", script.kind), ("id", script.id)]
    head += _limit_values(script.limits)
    source = script.source
    if isinstance(source, InlineSource):
        return f"<script{_attrs(head)}>\n{frame(source.text)}</script>"
    src = source.src
    declaring = script.provenance.source_dir if script.provenance else prompt_dir
    if source.path and prompt_dir and os.path.abspath(declaring) != os.path.abspath(prompt_dir):
        src = os.path.relpath(source.path, prompt_dir)
    return f"<script{_attrs(head + [('src', src)])}/>"


def _selection(names: tuple[str, ...]) -> str:
    joined = ",".join(names)
    return joined if joined else " "  # (" ",) splits back to one empty name


def tool_text(tool: Tool) -> str:
    if isinstance(tool, BuiltinTool):
        return f"<tool{attribute('name', tool.name)}/>"
    if isinstance(tool, ReadFileTool):
        if tool.roots == (DEFAULT_READ_ROOT,) and tool.description is None:
            return f"<tool{attribute('name', tool.name)}/>"
        head = _attrs(_optional([("name", tool.name), ("description", tool.description)]))
        roots = "".join(
            "\n" + f"<read{_attrs(_optional([('id', r.id), ('path', str(r.path)), ('description', r.description)]))}/>"
            for r in tool.roots)
        return f"<tool{head}>{roots}\n</tool>"
    if isinstance(tool, CustomTool):
        pairs = [("name", tool.name), ("command", tool.command), ("description", tool.description)]
        return f"<tool{_attrs(_optional(pairs))}/>"
    if isinstance(tool, AgentTool):
        pairs = [("name", tool.name), ("agent", tool.agent), ("description", tool.description)]
        local = " local" if tool.local else ""
        return f"<tool{_attrs(_optional(pairs))}{local}/>"
    if isinstance(tool, McpTool):
        pairs = [("mcp_server", tool.mcp_server),
                 ("include", None if tool.names is None else _selection(tool.names)),
                 ("description", tool.description), ("client_id_env", tool.client_id_env),
                 ("client_secret_env", tool.client_secret_env)]
        strict = " strict" if tool.strict else ""
        return f"<tool{_attrs(_optional(pairs))}{strict}/>"
    assert isinstance(tool, ShellTool)
    return render_node(_with_attribute(tool.element, "runtime", tool.runtime))


# --- conversation -----------------------------------------------------------------------------


def _item_text(item: ImageItem | DocItem) -> str:
    if isinstance(item, ImageItem):
        return f"<img{attribute('src', item.url)}{' local' if item.local else ''}/>"
    flags = "".join(f" {name}" for name, on in (("local", item.local), ("strip", item.strip),
                                                 ("markdown", item.markdown)) if on)
    return f"<doc{attribute('src', item.url)}{flags}/>"


def _items_text(items: tuple[ContentItem, ...]) -> str:
    """The items in order; ``<agent>`` items with theirs inside, walked with an explicit
    stack (they nest as deep as the parser allows)."""
    out: list[str] = []
    # (the items left, the index of the next one, whether the previous one was text)
    stack: list[list[Any]] = [[items, 0, False]]
    while stack:
        level = stack[-1]
        level_items, index, previous_text = level
        if index == len(level_items):
            stack.pop()
            if stack:
                out.append("</agent>")
            continue
        item = level_items[index]
        level[1] = index + 1
        level[2] = isinstance(item, TextItem)
        if isinstance(item, TextItem):
            if previous_text:
                out.append(TEXT_ITEM_SEPARATOR)
            out.append(("\n" if index == 0 else "") + frame(item.text))
        elif isinstance(item, AgentItem):
            local = " local" if item.local else ""
            out.append(f"<agent{attribute('src', item.url)}{local}>")
            stack.append([item.items, 0, False])
        else:
            out.append(_item_text(item))
    return "".join(out)


def content_text(content: Content) -> str:
    """A message body: nothing, one framed string, or the items in order."""
    if content is None:
        return ""
    if isinstance(content, str):
        return "\n" + frame(content)
    return _items_text(content)


def message_text(message: Message, source_name: str) -> str:
    tag = message.kind
    pairs: list[tuple[str, str | None]] = []
    flag = ""
    if tag == MSG:
        pairs.append(("role", message.role))
    elif message.role_attribute is not None:
        pairs.append(("role", message.role_attribute))
    call = message.tool_call
    if call is not None:
        if tag != TOOL_CALL:
            flag = " tool_call"
        pairs += [("function_name", call.name), ("tool_call_id", call.call_id)]
    elif message.tool_call_id is not None:
        pairs.append(("tool_call_id", message.tool_call_id))
    pairs += [("id", message.id), ("status", message.status), ("phase", message.phase),
              ("name", message.name), ("type", message.type),
              ("ochat-history-id", message.history_id)]
    if message.source_file != source_name:
        pairs.append(("ochat-source-context", message.source_file))
    attributes = _attrs(_optional(pairs)) + flag
    return f"<{tag}{attributes}>{content_text(message.content)}</{tag}>"


def reasoning_text(reasoning: Reasoning, source_name: str) -> str:
    pairs = [("id", reasoning.id), ("status", reasoning.status),
             ("ochat-history-id", reasoning.history_id)]
    if reasoning.source_file != source_name:
        pairs.append(("ochat-source-context", reasoning.source_file))
    lines = [f"<reasoning{_attrs(_optional(pairs))}>"]
    lines += [f"<summary{attribute('type', part.type)}>{frame(part.text)}</summary>"
              for part in reasoning.summary]
    lines.append("</reasoning>")
    return "\n".join(lines)


# --- the prompt -------------------------------------------------------------------------------


def write_prompt(prompt: Prompt, *, source_name: str | None = None) -> str:
    """The canonical ChatMD text of ``prompt``.

    ``source_name`` is the display name the text will be loaded under
    (default: the prompt's own name); messages recorded from another file get
    an ``ochat-source-context`` naming it.
    """
    name = prompt.name if source_name is None else source_name
    blocks: list[str] = []
    config = config_text(prompt.config)
    if config is not None:
        blocks.append(config)
    if prompt.moderator_runtime is not None:
        blocks.append(moderator_runtime_text(prompt.moderator_runtime))
    blocks += [shell_runtime_text(runtime) for runtime in prompt.shell_runtimes
               if not runtime.synthetic]
    blocks += [script_text(script, prompt.prompt_dir) for script in prompt.scripts]
    blocks += [tool_text(tool) for tool in prompt.tools]
    for item in prompt.items:
        blocks.append(reasoning_text(item, name) if isinstance(item, Reasoning)
                      else message_text(item, name))
    return "".join(block + "\n" for block in blocks)
