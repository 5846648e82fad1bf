"""The typed prompt model (IR): one fully expanded, namespace-resolved ChatMD prompt.

This module owns the attrs classes that the frontend (:mod:`chatmd.frontend`)
produces and every later phase consumes: request conversion, the transcript
writer, tool construction, the shell runtime compiler and the ChatML checker.
It holds no behaviour beyond small derived views; JSON conversion lives in
:mod:`chatmd.ir_json` (kept apart so that ``chatmdc check`` never imports cattrs).

Shape (spec §5)::

    Prompt(name, prompt_dir, config, tools, scripts, shell_runtimes,
           moderator_runtime, items)
      config            Config (the first <config/>, or the default one)
      tools             ReadFileTool | BuiltinTool | CustomTool | AgentTool
                        | McpTool | ShellTool, in declaration order
      scripts           Script (top-level <script>s, ids qualified)
      shell_runtimes    ShellRuntime (top-level <shell_access>, ids qualified; then
                        the synthetic legacy:custom when a legacy command tool exists)
      moderator_runtime ModeratorRuntime | None (the last one declared)
      items             Message | Reasoning, in document order

Content of a message (``Message.content``) follows the reference's model:
``None`` (no children), a ``str`` (exactly one text child), or a tuple of
:data:`ContentItem` (``TextItem``, ``ImageItem``, ``DocItem``, ``AgentItem``).
Documents, images and agents are kept *unresolved*: fetching them is request
conversion's job.

Equality compares meaning, not origin: every :class:`~chatmd.provenance.Provenance`
and :class:`Location` field, and every other field that only says where something
was written (``source_file``, script positions and paths, the prompt's ``name``
and ``prompt_dir``), is declared ``eq=False``, so a prompt written back
to text and loaded again (from another file, with another layout) compares
equal. Compare JSON (``chatmd.ir_json.ir_to_json``) when origins matter.

Strings are kept exactly as the attribute or text had them (entities in
attribute values decoded, text verbatim) unless a field says it is stripped.
"""

from __future__ import annotations

from typing import Any, TypeAlias

import attrs

from chatcommon.records import SharedMethods, frozen_record, lean_record, record_builder
from chatmd.ast import Element
from chatmd.provenance import Provenance

__all__ = [
    "ASSISTANT",
    "DEVELOPER",
    "MESSAGE_KINDS",
    "MSG",
    "SCRIPT_KINDS",
    "SYSTEM",
    "TOOL_CALL",
    "TOOL_RESPONSE",
    "USER",
    "AgentItem",
    "AgentTool",
    "BuiltinTool",
    "Config",
    "Content",
    "ContentItem",
    "ConversationItem",
    "CustomTool",
    "DocItem",
    "ImageItem",
    "InlineSource",
    "Location",
    "McpTool",
    "Message",
    "ModeratorRuntime",
    "PathExpr",
    "Prompt",
    "Provenance",
    "ReadFileTool",
    "ReadRoot",
    "Reasoning",
    "Script",
    "ScriptLimits",
    "ScriptSource",
    "ShellRuntime",
    "ShellTool",
    "SrcSource",
    "SummaryPart",
    "TextItem",
    "Tool",
    "ToolCallRef",
]


def _provenance_field() -> Provenance | None:
    """A provenance field: defaults to None, excluded from equality and repr."""
    return attrs.field(default=None, eq=False, repr=False)


@frozen_record
class Location(SharedMethods):
    """Where something is written: display file name, 1-based line and column.

    Used for content helpers and read roots, which sit inside a top-level
    element, so that later phases (request conversion, tool construction) can
    position their diagnostics at the exact ``<doc>``/``<img>``/``<read>`` tag.
    """

    file: str
    line: int
    column: int


# --------------------------------------------------------------------------- content


@frozen_record
class TextItem(SharedMethods):
    """A run of message text, verbatim (RAW contents included, no entity decoding)."""

    text: str


@frozen_record
class ImageItem(SharedMethods):
    """``<img src=... [local]/>``: ``url`` is ``src`` ('' when absent); not fetched yet."""

    url: str
    local: bool = False
    location: Location | None = attrs.field(default=None, eq=False, repr=False)


@frozen_record
class DocItem(SharedMethods):
    """``<doc src=... [local] [strip] [markdown]/>``: flags are presence tests; not fetched yet."""

    url: str
    local: bool = False
    strip: bool = False
    markdown: bool = False
    location: Location | None = attrs.field(default=None, eq=False, repr=False)


@frozen_record
class AgentItem(SharedMethods):
    """``<agent src=... [local]>children</agent>``: a nested prompt run, with its input items.

    ``url`` is the *first* ``src`` attribute (reference behaviour).
    """

    url: str
    local: bool = False
    items: tuple[ContentItem, ...] = ()
    location: Location | None = attrs.field(default=None, eq=False, repr=False)


ContentItem: TypeAlias = TextItem | ImageItem | DocItem | AgentItem
#: None (no items), a string (exactly one text item), or the items in order.
Content: TypeAlias = str | tuple[ContentItem, ...] | None


# --------------------------------------------------------------------------- conversation

MSG = "msg"
USER = "user"
ASSISTANT = "assistant"
SYSTEM = "system"
DEVELOPER = "developer"
TOOL_CALL = "tool_call"
TOOL_RESPONSE = "tool_response"
#: The values of :attr:`Message.kind` (the tag the message was written with).
MESSAGE_KINDS = (MSG, USER, ASSISTANT, SYSTEM, DEVELOPER, TOOL_CALL, TOOL_RESPONSE)


@frozen_record
class ToolCallRef(SharedMethods):
    """The call a ``<tool_call>`` (or legacy ``<msg role="tool" tool_call>``) records.

    ``arguments`` is the content when it is a string, else ``''``: a list
    content (the externalised ``<doc src="./.chatmd/..." local/>`` form) is
    rendered to the arguments string at request conversion.
    """

    call_id: str
    name: str
    arguments: str


@lean_record
class Message(SharedMethods):
    """Any message-like element: ``msg``, the four shorthands, ``tool_call``, ``tool_response``.

    ``kind`` is the tag (one of :data:`MESSAGE_KINDS`). ``role`` is the role the
    element stands for: the tag's fixed role for shorthands (``tool_call`` →
    ``assistant``, ``tool_response`` → ``tool``), and the ``role`` attribute *as
    written* for ``msg`` (request conversion lower-cases and validates it).
    ``role_attribute`` records a ``role`` attribute on a shorthand (no effect).
    The optional string fields are the attributes of the same name (last
    occurrence; a flag reads as ``''``). ``history_id`` is a validated canonical
    ``ochat-history-id``. ``source_file`` is the provenance file unless an
    ``ochat-source-context`` attribute overrides it.
    """

    kind: str
    role: str
    content: Content = None
    id: str | None = None
    status: str | None = None
    phase: str | None = None
    name: str | None = None
    type: str | None = None
    tool_call_id: str | None = None
    tool_call: ToolCallRef | None = None
    history_id: str | None = None
    role_attribute: str | None = None
    source_file: str = attrs.field(default="", eq=False)
    provenance: Provenance | None = _provenance_field()


class _MessageBuilder(SharedMethods):
    """``_MessageBuilder(*fields)`` is ``Message(*fields)``, made at half the cost: every field
    positionally, in declaration order (:func:`chatcommon.records.record_builder`)."""

    __slots__ = ("kind", "role", "content", "id", "status", "phase", "name", "type",
                 "tool_call_id", "tool_call", "history_id", "role_attribute", "source_file",
                 "provenance")

    def __init__(self, kind: str, role: str, content: Content, id: str | None,  # noqa: A002
                 status: str | None, phase: str | None, name: str | None, type: str | None,
                 tool_call_id: str | None, tool_call: ToolCallRef | None,
                 history_id: str | None, role_attribute: str | None, source_file: str,
                 provenance: Provenance | None) -> None:
        self.kind = kind
        self.role = role
        self.content = content
        self.id = id
        self.status = status
        self.phase = phase
        self.name = name
        self.type = type
        self.tool_call_id = tool_call_id
        self.tool_call = tool_call
        self.history_id = history_id
        self.role_attribute = role_attribute
        self.source_file = source_file
        self.provenance = provenance
        self.__class__ = Message  # type: ignore[assignment]  # the record it builds (same layout)


#: ``new_message(*fields)`` is ``Message(*fields)``, made cheaper (:func:`chatcommon.records.record_builder`).
new_message = record_builder(Message, _MessageBuilder)


@frozen_record
class SummaryPart(SharedMethods):
    """One reasoning summary entry: stripped text and its ``type`` (default ``summary_text``)."""

    text: str
    type: str = "summary_text"


@frozen_record
class Reasoning(SharedMethods):
    """``<reasoning id=... [status]>``: summaries from ``<summary>`` children and bare text."""

    id: str
    status: str | None = None
    summary: tuple[SummaryPart, ...] = ()
    history_id: str | None = None
    source_file: str = attrs.field(default="", eq=False)
    provenance: Provenance | None = _provenance_field()


ConversationItem: TypeAlias = Message | Reasoning


# --------------------------------------------------------------------------- config


@frozen_record
class Config(SharedMethods):
    """The effective ``<config/>`` (the first in expanded document order).

    Absent → every field unset and ``show_tool_call`` false, ``provenance`` None.
    ``reasoning_effort`` is kept as written; it is validated when a request is
    built (``chatmd.invalid_reasoning_effort``).
    """

    model: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    reasoning_effort: str | None = None
    id: str | None = None
    show_tool_call: bool = False
    provenance: Provenance | None = _provenance_field()


# --------------------------------------------------------------------------- tools


@frozen_record
class PathExpr(SharedMethods):
    """A parsed path expression (spec §4.8): ``${base}/rest`` or an absolute path.

    ``base`` is a variable name (``workspace source_dir prompt_dir tool_dir
    session_dir cache_dir home``) or None for an absolute path held in ``rest``.
    A relative read-root path is stored with its implicit base (``tool_dir``).
    ``str(expr)`` is the printed form: ``${tool_dir}/lib``, ``${workspace}``, ``/``.
    """

    base: str | None
    rest: str

    def __str__(self) -> str:
        if self.base is None:
            return self.rest
        return f"${{{self.base}}}/{self.rest}" if self.rest else f"${{{self.base}}}"


@frozen_record
class ReadRoot(SharedMethods):
    """One ``<read id path [description]/>`` root of a read_file tool (id and description stripped)."""

    id: str
    path: PathExpr
    description: str | None = None
    location: Location | None = attrs.field(default=None, eq=False, repr=False)


@frozen_record
class ReadFileTool(SharedMethods):
    """``<tool name="read_file|get_contents" [description]>`` with its roots.

    With no ``<read>`` children there is one default root
    ``cwd = ${tool_dir}`` ("ochat launch directory"). ``name`` is the declared
    name (the model-visible name is always ``read_file``).
    """

    name: str
    roots: tuple[ReadRoot, ...]
    description: str | None = None
    provenance: Provenance | None = _provenance_field()


@frozen_record
class BuiltinTool(SharedMethods):
    """``<tool name="..."/>`` naming a built-in; validated at tool construction."""

    name: str
    provenance: Provenance | None = _provenance_field()


@frozen_record
class CustomTool(SharedMethods):
    """The compact command form ``<tool name command [description]/>`` (legacy custom tool).

    ``command`` and ``description`` are stripped; the shell runtime compiler
    desugars it into a fixed-mode shell tool on runtime ``legacy:custom``.
    """

    name: str
    command: str
    description: str | None = None
    provenance: Provenance | None = _provenance_field()


@frozen_record
class AgentTool(SharedMethods):
    """``<tool name agent [local] [description]/>``: a prompt run as a tool (fields stripped)."""

    name: str
    agent: str
    local: bool = False
    description: str | None = None
    provenance: Provenance | None = _provenance_field()


@frozen_record
class McpTool(SharedMethods):
    """``<tool mcp_server [name|include|includes] [strict] ...>``: tools of an MCP server.

    ``names`` is ``(name,)`` when ``name`` is set, else the comma-split,
    per-item-stripped ``include`` (preferred) or ``includes``; None selects the
    whole catalogue.
    """

    mcp_server: str
    names: tuple[str, ...] | None = None
    description: str | None = None
    strict: bool = False
    client_id_env: str | None = None
    client_secret_env: str | None = None
    provenance: Provenance | None = _provenance_field()


@frozen_record
class ShellTool(SharedMethods):
    """A long-form shell tool (``type="shell"`` or a ``runtime`` attribute), not yet validated.

    ``runtime`` is the ``runtime`` reference qualified by the import namespace
    (None when absent). ``element`` is the declaration's syntax tree, handed to
    the shell validator (``chatmd/declarations/shell_validation.py`` is the seam).
    """

    name: str
    runtime: str | None
    element: Element
    provenance: Provenance | None = _provenance_field()
    #: Set by the shell compiler when the prompt compiles: the manifest's tool record,
    #: ``manifest_sha256`` and the model-visible ``definition`` (shell spec §6.8, §9).
    compiled: dict[str, Any] | None = attrs.field(default=None, eq=False, repr=False)


Tool: TypeAlias = ReadFileTool | BuiltinTool | CustomTool | AgentTool | McpTool | ShellTool


# --------------------------------------------------------------------------- runtimes


@frozen_record
class ShellRuntime(SharedMethods):
    """A ``<shell_access>`` runtime declaration, not yet validated.

    ``id`` and ``extends`` are qualified by the import namespace; ``element`` is
    the declaration's syntax tree for the shell validator. ``element`` is None
    for a *synthetic* runtime, one the user did not write: ``legacy:custom``,
    which legacy ``<tool name command/>`` tools run on (shell spec §5.3); its
    provenance is the first legacy tool's. Writers never print a synthetic runtime.
    """

    id: str
    extends: str | None
    element: Element | None
    provenance: Provenance | None = _provenance_field()
    #: Set by the shell compiler when the prompt compiles: the fully resolved runtime
    #: record of the manifest plus its ``manifest_sha256`` (shell spec §6.8).
    compiled: dict[str, Any] | None = attrs.field(default=None, eq=False, repr=False)

    @property
    def synthetic(self) -> bool:
        """Whether the compiler, not the user, declared this runtime (``legacy:custom``)."""
        return self.element is None


#: The id of the synthetic runtime of legacy command tools (shell spec §5.3).
LEGACY_RUNTIME_ID = "legacy:custom"


@frozen_record
class ModeratorRuntime(SharedMethods):
    """``<moderator_runtime shell_runtime=REF/>``: ``shell_runtime`` as written, ``qualified`` per §3.5."""

    shell_runtime: str
    qualified: str
    provenance: Provenance | None = _provenance_field()


# --------------------------------------------------------------------------- scripts

#: The values of :attr:`Script.kind`.
SCRIPT_KINDS = (
    "moderator",
    "shell_matcher",
    "shell_reviewer",
    "shell_before_interceptor",
    "shell_after_interceptor",
    "shell_effect_analyzer",
    "shell_audit_filter",
)


@frozen_record
class ScriptLimits(SharedMethods):
    """Execution limits of a script (spec §4.9; defaults in brackets there).

    ``wall_time`` is in seconds; ``max_value``/``max_output`` in bytes.
    """

    wall_time: float = 2.0
    fuel: int = 100_000
    max_tasks: int = 256
    max_value: int = 256 * 1024
    max_output: int = 16 * 1024
    max_array_items: int = 256
    max_depth: int = 32


@frozen_record
class InlineSource(SharedMethods):
    """A script written inside its ``<script>`` element.

    ``file``/``line``/``column`` say where the first character of ``text`` sits
    in the declaring file (exact when the body is one plain text run or one RAW
    block; after a comment or a second RAW block inside the body, later
    positions drift). ``chatmd.frontend.script_source_file`` builds the
    :class:`~chatcommon.sources.SourceFile` a ChatML checker reports into.
    """

    text: str
    file: str = attrs.field(default="", eq=False)
    line: int = attrs.field(default=1, eq=False)
    column: int = attrs.field(default=1, eq=False)


@frozen_record
class SrcSource(SharedMethods):
    """A script loaded from ``src`` (relative to the declaring file's folder).

    ``src`` is the attribute as written, ``path`` the absolute file read,
    ``display_name`` the name diagnostics use (the declaring file's display
    folder joined with ``src``), ``text`` the loaded text (BOM stripped).
    """

    src: str
    text: str
    path: str = attrs.field(default="", eq=False)
    display_name: str = attrs.field(default="", eq=False)


ScriptSource: TypeAlias = InlineSource | SrcSource


@frozen_record
class Script(SharedMethods):
    """A host-managed ChatML ``<script>`` (never sent to the model).

    ``id`` is defaulted (``main`` for a moderator) and namespace-qualified.
    ``source_hash`` is the lower-hex SHA-256 of the source text (UTF-8).
    """

    id: str
    kind: str
    language: str
    source: ScriptSource
    source_hash: str
    limits: ScriptLimits = ScriptLimits()
    provenance: Provenance | None = _provenance_field()


# --------------------------------------------------------------------------- prompt


@frozen_record
class Prompt(SharedMethods):
    """A whole prompt: declarations and the conversation, all imports expanded.

    ``name`` is the root's display name (``<prompt>`` when it has none) and
    ``prompt_dir`` the root prompt's folder; neither takes part in equality.
    """

    config: Config = Config()
    tools: tuple[Tool, ...] = ()
    scripts: tuple[Script, ...] = ()
    shell_runtimes: tuple[ShellRuntime, ...] = ()
    moderator_runtime: ModeratorRuntime | None = None
    items: tuple[ConversationItem, ...] = ()
    name: str = attrs.field(default="<prompt>", eq=False)
    prompt_dir: str = attrs.field(default="", eq=False)

    @property
    def moderator(self) -> Script | None:
        """The moderator script, if exactly one is declared."""
        moderators = [script for script in self.scripts if script.kind == "moderator"]
        return moderators[0] if len(moderators) == 1 else None

    @property
    def messages(self) -> tuple[Message, ...]:
        """The conversation's messages (reasoning items left out)."""
        return tuple(item for item in self.items if isinstance(item, Message))

    @property
    def shell_tools(self) -> tuple[ShellTool, ...]:
        return tuple(tool for tool in self.tools if isinstance(tool, ShellTool))
