"""Messages and reasoning (spec §4.2-§4.4): ``msg``, the shorthands, tool calls/results, ``reasoning``.

All are lenient elements (last occurrence of an attribute wins, a flag reads
as ``''``), except ``ochat-source-context`` and ``summary type``, where the
first occurrence wins. Checked here: ``msg`` needs ``role``; ``tool_call`` (and
a legacy ``<msg tool_call>``) needs ``function_name`` and ``tool_call_id``;
``reasoning`` needs ``id``; ``ochat-history-id`` must be canonical and given
once. Role values, ``tool_response`` call ids and assistant statuses are
checked by request conversion, as the spec places them there.

This module runs once per transcript item, so it avoids per-item overhead: one
pass over the attributes, no regular expressions on the common path.
"""

from __future__ import annotations

from chatcommon.numbers import parse_int
from chatcommon.records import fast_constructor
from chatmd.ast import Element, Node, Text
from chatmd.declarations.content import CONTENT, REASONING, lower_content, validate_nested
from chatmd.declarations.context import LoweringContext
from chatmd.declarations.text import render_import, render_nodes
from chatmd.ir import Content, Message, Reasoning, SummaryPart, ToolCallRef, new_message
from chatmd.provenance import Provenance
from chatmd.vocabulary import WS

#: Messages are made for every element of a transcript: without the generated __init__.
_new_message = new_message
_new_tool_call = fast_constructor(ToolCallRef)


#: The role each message tag stands for (``msg`` takes its ``role`` attribute).
TAG_ROLES = {
    "user": "user",
    "assistant": "assistant",
    "system": "system",
    "developer": "developer",
    "tool_call": "assistant",
    "tool_response": "tool",
}
MESSAGE_TAGS = frozenset(TAG_ROLES) | {"msg"}

HISTORY_ID = "ochat-history-id"
SOURCE_CONTEXT = "ochat-source-context"
_DIGITS = frozenset("0123456789")


def canonical_history_id(value: str) -> bool:
    """True for ``<len>:<namespace>:<seq>``: ``len`` = UTF-8 byte length of a non-empty
    namespace, both numbers decimal without leading zeros."""
    data = value.encode("utf-8", "surrogatepass")
    colon = data.find(b":")
    length_text = data[:colon]
    if colon <= 0 or not _is_number(length_text):
        return False
    length = parse_int(length_text)
    if length is None:  # longer than any message could be
        return False
    namespace_end = colon + 1 + length
    if length == 0 or namespace_end >= len(data) or data[namespace_end:namespace_end + 1] != b":":
        return False
    return _is_number(data[namespace_end + 1:])


def _is_number(text: bytes) -> bool:
    return (bool(text) and all(chr(byte) in _DIGITS for byte in text)
            and (text == b"0" or not text.startswith(b"0")))


class _Attributes:
    """One pass over a message's attributes: last-wins values plus the special ones."""

    __slots__ = ("values", "history_id", "history_count", "source_context")

    def __init__(self, element: Element) -> None:
        values: dict[str, str] = {}
        self.history_id: str | None = None
        self.history_count = 0
        self.source_context: str | None = None
        for attribute in element.attrs:
            name = attribute.name
            value = "" if attribute.value is None else attribute.value
            if name == HISTORY_ID:
                self.history_count += 1
                self.history_id = value
            elif name == SOURCE_CONTEXT and self.source_context is None:
                self.source_context = value
            values[name] = value
        self.values = values


def _history_id(element: Element, found: _Attributes, ctx: LoweringContext) -> str | None:
    """The validated history id, or None (absent or reported)."""
    value = found.history_id
    if value is None:
        return None
    if found.history_count > 1:
        ctx.error(ctx.attribute_span(element, HISTORY_ID), "chatmd.duplicate_attribute",
                  f"attribute `{HISTORY_ID}` is given more than once on <{element.tag}>")
        return None
    if not canonical_history_id(value):
        ctx.error(ctx.attribute_span(element, HISTORY_ID), "chatmd.invalid_attribute_value",
                  f"invalid {HISTORY_ID} \"{value}\": expected <length>:<namespace>:<sequence>, "
                  "e.g. 7:session:12",
                  hint="the length is the byte length of the non-empty namespace; both "
                  "numbers are decimal without leading zeros")
        return None
    return value


def _missing(element: Element, name: str, ctx: LoweringContext, why: str = "") -> None:
    ctx.error(element.span, "chatmd.missing_attribute",
              f"<{element.tag}> is missing the required attribute `{name}`{why}",
              hint=f"add {name}=\"...\"", path=(element.tag, name))


def lower_message(element: Element, provenance: Provenance, ctx: LoweringContext) -> Message | None:
    """The :class:`~chatmd.ir.Message` for a message-like element; None after an error."""
    tag = element.tag
    children = element.children
    if len(children) != 1 or type(children[0]) is not Text or tag == "msg":
        return lower_message_fully(element, provenance, ctx)
    # the common case of a transcript, in short: a shorthand tag whose body is one text
    text = children[0].text
    attributes = element.attrs
    if not attributes:
        if tag == "tool_call":  # (it needs attributes: reported by the general path)
            return lower_message_fully(element, provenance, ctx)
        return _new_message(tag, TAG_ROLES[tag], text, None, None, None, None, None, None,
                            None, None, None, provenance.file, provenance)
    # one pass, last occurrence wins, a flag reads as '' (no dict: most have one or two)
    id_: str | None = None
    status: str | None = None
    phase: str | None = None
    name: str | None = None
    type_: str | None = None
    call_id: str | None = None
    role: str | None = None
    function_name: str | None = None
    for attribute in attributes:
        key = attribute.name
        value = attribute.value
        if value is None:
            value = ""
        if key == "tool_call_id":
            call_id = value
        elif key == "function_name":
            function_name = value
        elif key == "id":
            id_ = value
        elif key == "name":
            name = value
        elif key == "status":
            status = value
        elif key == "type":
            type_ = value
        elif key == "phase":
            phase = value
        elif key == "role":
            role = value
        elif key in (HISTORY_ID, SOURCE_CONTEXT):
            return lower_message_fully(element, provenance, ctx)
    tool_call = None
    if tag == "tool_call":
        if call_id is None or function_name is None:
            return lower_message_fully(element, provenance, ctx)
        tool_call = _new_tool_call(call_id, function_name, text)
    return _new_message(tag, TAG_ROLES[tag], text, id_, status, phase, name, type_, call_id,
                        tool_call, None, role, provenance.file, provenance)


class _Checked:
    """What checking a message's attributes found (:func:`_check_message`)."""

    __slots__ = ("ok", "values", "found", "role", "role_attribute", "is_call", "history_id")

    def __init__(self, ok: bool, values: dict[str, str], found: _Attributes | None, role: str,
                 role_attribute: str | None, is_call: bool, history_id: str | None) -> None:
        self.ok = ok
        self.values = values
        self.found = found
        self.role = role
        self.role_attribute = role_attribute
        self.is_call = is_call
        self.history_id = history_id


def _check_message(element: Element, ctx: LoweringContext) -> _Checked:
    """Check a message's attributes (everything but its body), reporting what is wrong."""
    tag = element.tag
    values: dict[str, str] = {}
    for attribute in element.attrs:  # last wins; a flag reads as ''
        value = attribute.value
        values[attribute.name] = "" if value is None else value
    # (the special attributes need the full pass: repeated ids, the first context)
    found = _Attributes(element) if HISTORY_ID in values or SOURCE_CONTEXT in values else None
    ok = True
    role_attribute: str | None = values.get("role")
    if tag == "msg":
        if role_attribute is None:
            _missing(element, "role", ctx, ": expected role=\"user|assistant|system|developer|tool\"")
            ok = False
        role = role_attribute or ""
        role_attribute = None
        is_call = "tool_call" in values
        if is_call or "function_call" in values:
            for name in ("function_name", "tool_call_id") if is_call else ("function_name",):
                if name not in values:
                    _missing(element, name, ctx, " (a tool call record)")
                    ok = False
    else:
        role = TAG_ROLES[tag]
        is_call = tag == "tool_call"
        if is_call:
            for name in ("function_name", "tool_call_id"):
                if name not in values:
                    _missing(element, name, ctx)
                    ok = False
    history_id = None if found is None else _history_id(element, found, ctx)
    if found is not None and found.history_id is not None and history_id is None:
        ok = False
    return _Checked(ok, values, found, role, role_attribute, is_call, history_id)


def open_message(element: Element, provenance: Provenance,
                 ctx: LoweringContext) -> tuple[int, tuple[Node, ...]]:
    """Validate a message nested where it has no meaning: its attributes now; its body is
    returned, to be walked as content by the caller (:func:`~chatmd.declarations.content.validate_nested`)."""
    _check_message(element, ctx)
    return CONTENT, element.children


def lower_message_fully(element: Element, provenance: Provenance,
                        ctx: LoweringContext) -> Message | None:
    """:func:`lower_message` without its short path (the same result, by every rule)."""
    checked = _check_message(element, ctx)
    children = element.children
    if len(children) == 1 and type(children[0]) is Text:  # the common case, inline
        content: Content = children[0].text
    else:
        content = lower_content(children, provenance, ctx)
    if not checked.ok:
        return None
    values = checked.values
    tool_call = None
    if checked.is_call:
        arguments = content if isinstance(content, str) else ""
        tool_call = _new_tool_call(values["tool_call_id"], values["function_name"], arguments)
    source_file = provenance.file
    found = checked.found
    if found is not None and found.source_context is not None:
        source_file = found.source_context
    get = values.get
    return _new_message(element.tag, checked.role, content, get("id"), get("status"),
                        get("phase"), get("name"), get("type"), get("tool_call_id"), tool_call,
                        checked.history_id, checked.role_attribute, source_file, provenance)


def _summary_text(element: Element) -> str:
    """A ``<summary>``'s text: children concatenated (elements rendered as text), stripped."""
    children = element.children
    if len(children) == 1 and type(children[0]) is Text:
        return children[0].text.strip(WS)
    return render_nodes(children).strip(WS)


def _check_reasoning(element: Element, ctx: LoweringContext) -> tuple[_Attributes, bool,
                                                                      str | None]:
    """Check a ``<reasoning>``'s attributes: what was found, whether they are fine, the
    validated history id."""
    found = _Attributes(element)
    ok = True
    if "id" not in found.values:
        _missing(element, "id", ctx, " (the provider's reasoning item id)")
        ok = False
    history_id = _history_id(element, found, ctx)
    if found.history_id is not None and history_id is None:
        ok = False
    return found, ok, history_id


def open_reasoning(element: Element, provenance: Provenance,
                   ctx: LoweringContext) -> tuple[int, tuple[Node, ...]]:
    """Validate a ``<reasoning>`` nested where it has no meaning (see :func:`open_message`)."""
    _check_reasoning(element, ctx)
    return REASONING, element.children


def lower_reasoning(element: Element, provenance: Provenance,
                    ctx: LoweringContext) -> Reasoning | None:
    """The :class:`~chatmd.ir.Reasoning` for ``<reasoning>``; None after an error."""
    found, ok, history_id = _check_reasoning(element, ctx)
    values = found.values
    summary: list[SummaryPart] = []
    for child in element.children:
        if type(child) is Text:
            text = child.text.strip(WS)
            if text:
                summary.append(SummaryPart(text))
            continue
        assert isinstance(child, Element)
        if child.tag == "summary":
            kind = child.get_first("type")
            summary.append(SummaryPart(_summary_text(child),
                                       "summary_text" if kind is None else kind))
        elif child.tag == "import":
            summary.append(SummaryPart(render_import(child)))
        else:
            validate_nested(child, provenance, ctx)
    if not ok:
        return None
    source_file = found.source_context if found.source_context is not None else provenance.file
    return Reasoning(values["id"], values.get("status"), tuple(summary), history_id,
                     source_file, provenance)
