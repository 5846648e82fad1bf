"""Writing Responses API items back to ChatMD transcript text (spec §8).

The writer appends what happened in a turn — input and output messages,
function and custom tool calls and their outputs, reasoning — as ChatMD
elements, so that reading the transcript again gives back the same items
(the round-trip property of spec §8.5).

* Attribute values are double-quoted and escaped (``&`` first, then ``<``,
  ``>``, ``"``); free text always goes inside RAW blocks (:func:`frame`).
* Two persistence modes for tool payloads: *inline* (``show_tool_call``),
  where arguments and outputs are framed inside the elements, and
  *externalised* (the default), where each payload goes to a file
  ``SEQ.tool-call.CALL.json`` / ``SEQ.tool-call-result.CALL.json`` in the
  payload folder (``./.chatmd``) referenced by a self-closing
  ``<doc src="..." local/>`` (DECISIONS 11).

:func:`render_items` is pure (text plus the payload files to write);
:func:`serialise_items` and :class:`TranscriptWriter` also write the payload
files; :func:`append_to_transcript` appends to a transcript file. Every file
is written atomically (:mod:`chatcommon.atomic`), payloads before the transcript
that refers to them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from chatcommon.atomic import atomic_write_bytes, atomic_write_text

Item = Mapping[str, Any]

RAW_OPEN = "RAW|"
RAW_CLOSE = "|RAW"
#: The empty user message a host may leave after a turn for the next human input.
USER_PLACEHOLDER = "<user>\n\n</user>"
PAYLOAD_FOLDER = ".chatmd"

_SHORTHAND_ROLES = ("user", "system", "developer")
_TEXT_PARTS = ("input_text", "output_text", "text")
_SAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]")
_MAX_NAME_CHARS = 80
_PAYLOAD_FILE = re.compile(r"^(\d+)\.tool-call(?:-result)?\.")


class TranscriptItemError(ValueError):
    """An item the writer cannot represent (unknown type, missing field)."""


def escape_attribute(value: str) -> str:
    """Escape an attribute value for double quotes; the lexer's entity decoding undoes it."""
    return (value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


def frame(text: str) -> str:
    """``text`` as back-to-back RAW blocks whose merged content is exactly ``text``.

    ``text`` is split between the ``|`` and the ``RAW`` of every ``|RAW`` it
    contains, so no block contains its own terminator.
    """
    pieces = text.split(RAW_CLOSE)
    if len(pieces) == 1:
        return RAW_OPEN + text + RAW_CLOSE
    out = [RAW_OPEN + pieces[0] + "|" + RAW_CLOSE]
    for piece in pieces[1:-1]:
        out.append(RAW_OPEN + "RAW" + piece + "|" + RAW_CLOSE)
    out.append(RAW_OPEN + "RAW" + pieces[-1] + RAW_CLOSE)
    return "".join(out)


_UNQUOTABLE = re.compile(r"[ \t\n\r\x0b\x0c>]")


def attribute(name: str, value: str | None) -> str:
    """`` name="value"`` (escaped), or `` name`` for a flag (None).

    A value ending in a backslash cannot be quoted (the backslash would escape
    the closing quote); it is written unquoted, which is exact when it has no
    blank, no ``>`` and does not start with a quote — otherwise it cannot be
    written at all and :class:`TranscriptItemError` is raised.
    """
    if value is None:
        return f" {name}"
    if not value.endswith("\\"):
        return f' {name}="{escape_attribute(value)}"'
    if value[0] not in "\"'" and not _UNQUOTABLE.search(value):
        return f" {name}={value}"
    raise TranscriptItemError(f"the value of {name} ends with a backslash and contains a "
                              f"blank, '>' or a leading quote, so no ChatMD attribute can "
                              f"hold it: {value!r}")


def _attrs(pairs: Iterable[tuple[str, str | None]]) -> str:
    return "".join(attribute(name, value) for name, value in pairs if value is not None)


def _image_tag(url: str) -> str:
    return f"<img{attribute('src', url)}/>"


def payload_file_component(call_id: str) -> str:
    """A call id made safe for a file name: no separators, bounded length."""
    safe = _SAFE_NAME.sub("_", call_id)[:_MAX_NAME_CHARS]
    return safe or "call"


@attrs.frozen
class Payload:
    """A payload file of externalised mode: its name in the payload folder and its text."""

    name: str
    text: str


@attrs.frozen
class Rendered:
    """The ChatMD text for some items, the payload files it refers to, and the next SEQ."""

    text: str
    payloads: tuple[Payload, ...]
    next_seq: int


# --- content parts ----------------------------------------------------------------------------


def _parts(item: Item, what: str) -> list[tuple[str, str]]:
    """``("text", s)`` / ``("image", url)`` parts of a message content or tool output."""
    content = item.get("content") if what == "content" else item.get("output")
    if content is None:
        return []
    if isinstance(content, str):
        return [("text", content)]
    if not isinstance(content, list):
        raise TranscriptItemError(f"{what} must be a string or a list of parts, got {content!r}")
    parts: list[tuple[str, str]] = []
    for part in content:
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind in _TEXT_PARTS and isinstance(part.get("text"), str):
            parts.append(("text", part["text"]))
        elif kind == "refusal" and isinstance(part.get("refusal"), str):
            parts.append(("text", part["refusal"]))
        elif kind == "input_image" and isinstance(part.get("image_url"), str):
            parts.append(("image", part["image_url"]))
        else:
            raise TranscriptItemError(f"cannot write the {what} part {part!r}: expected a text "
                                      "part or an input_image with an image_url")
    return parts


def _framed_parts(parts: Sequence[tuple[str, str]]) -> str:
    """Parts as element content: an LF then RAW blocks for text, ``<img/>`` for images.

    The LF before the first RAW block is dropped by the lexer; an image first
    gets no LF (it would become text).
    """
    out = []
    for kind, value in parts:
        out.append(frame(value) if kind == "text" else _image_tag(value))
    body = "".join(out)
    return ("\n" + body) if parts and parts[0][0] == "text" else body


def _text_rendering(parts: Sequence[tuple[str, str]]) -> str:
    """A tool output as one text: adjacent text parts concatenated, images as markers.

    Markers are separated from their neighbours by LF; adjacent text parts are
    concatenated as the reader merges them, so text-only outputs round-trip.
    """
    segments: list[str] = []
    previous_text = False
    for kind, value in parts:
        if kind == "text" and previous_text:
            segments[-1] += value
        else:
            segments.append(value if kind == "text" else _image_tag(value))
        previous_text = kind == "text"
    return "\n".join(segments)


def _required_str(item: Item, key: str) -> str:
    value = item.get(key)
    if not isinstance(value, str):
        raise TranscriptItemError(f"{item.get('type', 'item')} item needs a string {key!r}, "
                                  f"got {value!r}")
    return value


def _optional_str(item: Item, key: str) -> str | None:
    value = item.get(key)
    return value if isinstance(value, str) else None


# --- the writer -------------------------------------------------------------------------------


class TranscriptWriter:
    """Renders items for one writer session; the payload SEQ counter persists across calls."""

    def __init__(self, *, show_tool_call: bool, seq_start: int = 0,
                 payload_src: str = "./" + PAYLOAD_FOLDER) -> None:
        self.show_tool_call = show_tool_call
        self.seq = seq_start
        self.payload_src = payload_src.rstrip("/") or "."
        self._call_seq: dict[str, int] = {}

    def render(self, items: Iterable[Item]) -> Rendered:
        """The text for ``items`` (each element followed by one LF) and the payloads."""
        out: list[str] = []
        payloads: list[Payload] = []
        for index, item in enumerate(items):
            if not isinstance(item, Mapping):
                raise TranscriptItemError(f"item {index} is not an object: {item!r}")
            try:
                out.append(self._item(item, payloads))
            except TranscriptItemError as error:
                raise TranscriptItemError(f"item {index}: {error}") from None
            out.append("\n")
        return Rendered("".join(out), tuple(payloads), self.seq)

    def _item(self, item: Item, payloads: list[Payload]) -> str:
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "message":
            return self._message(item)
        if kind in ("function_call", "custom_tool_call"):
            return self._call(item, payloads, custom=kind == "custom_tool_call")
        if kind in ("function_call_output", "custom_tool_call_output"):
            return self._output(item, payloads, custom=kind == "custom_tool_call_output")
        if kind == "reasoning":
            return self._reasoning(item)
        raise TranscriptItemError(f"cannot write an item of type {kind!r}")

    def _message(self, item: Item) -> str:
        role = item.get("role")
        if role in _SHORTHAND_ROLES:
            return f"<{role}>{_framed_parts(_parts(item, 'content'))}</{role}>"
        if role != "assistant":
            raise TranscriptItemError(f"cannot write a message with role {role!r}")
        parts = _parts(item, "content")
        if any(kind != "text" for kind, _ in parts):
            raise TranscriptItemError("an assistant message can only hold text parts")
        text = " ".join(value for _, value in parts)
        item_id = _optional_str(item, "id")
        if item_id is None:  # an assistant-role input message
            return f"<assistant>\n{frame(text)}</assistant>" if parts else "<assistant></assistant>"
        status = _optional_str(item, "status") or "completed"
        attributes = _attrs([("id", item_id), ("status", status),
                             ("phase", _optional_str(item, "phase"))])
        return f"<assistant{attributes}>\n{frame(text)}</assistant>"

    def _call(self, item: Item, payloads: list[Payload], *, custom: bool) -> str:
        name = _required_str(item, "name")
        call_id = _required_str(item, "call_id")
        payload = _required_str(item, "input" if custom else "arguments")
        item_id = _optional_str(item, "id")
        kind = "custom_tool_call" if custom else None
        if self.show_tool_call:
            attributes = _attrs([("function_name", name), ("tool_call_id", call_id),
                                 ("id", item_id), ("type", kind)])
            return f"<tool_call{attributes}>\n{frame(payload)}</tool_call>"
        seq = self.seq
        self.seq += 1
        self._call_seq[call_id] = seq
        file_name = f"{seq}.tool-call.{payload_file_component(call_id)}.json"
        payloads.append(Payload(file_name, payload))
        attributes = _attrs([("function_name", name), ("tool_call_id", call_id),
                             ("id", item_id if item_id is not None else call_id),
                             ("type", kind)])
        return f"<tool_call{attributes}>{self._doc(file_name)}</tool_call>"

    def _output(self, item: Item, payloads: list[Payload], *, custom: bool) -> str:
        call_id = _required_str(item, "call_id")
        parts = _parts(item, "output")
        kind = "custom_tool_call" if custom else None
        if self.show_tool_call:
            attributes = _attrs([("tool_call_id", call_id), ("type", kind)])
            output = item.get("output")
            body = ("\n" + frame(output)) if isinstance(output, str) else _framed_parts(parts)
            return f"<tool_response{attributes}>{body}</tool_response>"
        seq = self._call_seq.pop(call_id, None)
        if seq is None:  # call written earlier (or already answered): take a fresh number
            seq = self.seq
            self.seq += 1
        file_name = f"{seq}.tool-call-result.{payload_file_component(call_id)}.json"
        payloads.append(Payload(file_name, _text_rendering(parts)))
        attributes = _attrs([("tool_call_id", call_id), ("id", str(seq)), ("type", kind)])
        return f"<tool_response{attributes}>{self._doc(file_name)}</tool_response>"

    def _doc(self, file_name: str) -> str:
        return f"<doc{attribute('src', self.payload_src + '/' + file_name)} local/>"

    def _reasoning(self, item: Item) -> str:
        item_id = _required_str(item, "id")
        attributes = _attrs([("id", item_id), ("status", _optional_str(item, "status"))])
        lines = [f"<reasoning{attributes}>"]
        summary = item.get("summary") or []
        if not isinstance(summary, list):
            raise TranscriptItemError(f"reasoning summary must be a list, got {summary!r}")
        for entry in summary:
            text = entry.get("text") if isinstance(entry, Mapping) else None
            if not isinstance(text, str):
                raise TranscriptItemError(f"cannot write the reasoning summary {entry!r}")
            kind = entry.get("type") if isinstance(entry.get("type"), str) else "summary_text"
            lines.append(f"<summary{attribute('type', kind)}>{frame(text)}</summary>")
        lines.append("</reasoning>")
        return "\n".join(lines)


# --- files ------------------------------------------------------------------------------------


def payload_src_for(payload_dir: str | os.PathLike[str], base: str | os.PathLike[str] | None = None
                    ) -> str:
    """How ``<doc src>`` refers to ``payload_dir``: ``./rel`` under ``base`` (cwd), else absolute."""
    folder = Path(os.path.abspath(payload_dir))
    anchor = Path(os.path.abspath(base if base is not None else os.getcwd()))
    try:
        relative = folder.relative_to(anchor)
    except ValueError:
        return folder.as_posix()
    return "./" + relative.as_posix() if relative.parts else "."


def write_payloads(payload_dir: str | os.PathLike[str], payloads: Iterable[Payload]) -> None:
    """Write each payload file exactly (UTF-8, no newline added), atomically."""
    folder = Path(payload_dir)
    for payload in payloads:
        atomic_write_bytes(folder / payload.name, payload.text.encode("utf-8"))


def next_payload_seq(payload_dir: str | os.PathLike[str]) -> int:
    """One more than the highest SEQ among the payload files in ``payload_dir`` (0 if none)."""
    try:
        names = os.listdir(payload_dir)
    except OSError:
        return 0
    numbers = [int(match.group(1)) for name in names if (match := _PAYLOAD_FILE.match(name))]
    return max(numbers) + 1 if numbers else 0


def render_items(items: Iterable[Item], *, show_tool_call: bool, seq_start: int = 0,
                 payload_src: str = "./" + PAYLOAD_FOLDER) -> Rendered:
    """Pure rendering: the transcript text and the payload files it needs (nothing written)."""
    writer = TranscriptWriter(show_tool_call=show_tool_call, seq_start=seq_start,
                              payload_src=payload_src)
    return writer.render(items)


def serialise_items(items: Iterable[Item], *, show_tool_call: bool,
                    payload_dir: str | os.PathLike[str] | None = None, seq_start: int = 0,
                    payload_src: str | None = None) -> str:
    """ChatMD text for ``items``; in externalised mode the payload files are written too.

    ``payload_dir`` defaults to ``./.chatmd`` under the working directory;
    ``payload_src`` (how ``<doc src>`` names that folder) defaults to
    :func:`payload_src_for` it.
    """
    folder = Path(payload_dir) if payload_dir is not None else Path.cwd() / PAYLOAD_FOLDER
    src = payload_src if payload_src is not None else payload_src_for(folder)
    rendered = render_items(items, show_tool_call=show_tool_call, seq_start=seq_start,
                            payload_src=src)
    write_payloads(folder, rendered.payloads)
    return rendered.text


def _starts_with_user_message(items: Sequence[Item]) -> bool:
    if not items:
        return False
    first = items[0]
    return first.get("type", "message") == "message" and first.get("role") == "user"


def append_to_transcript(path: str | os.PathLike[str], items: Iterable[Item], *,
                         show_tool_call: bool, payload_dir: str | os.PathLike[str] | None = None,
                         seq_start: int | None = None, payload_src: str | None = None,
                         placeholder: bool = False) -> int:
    """Append ``items`` to the transcript at ``path`` atomically; return the next payload SEQ.

    The existing text is never rewritten, except that a trailing empty
    placeholder (:data:`USER_PLACEHOLDER`) is replaced when the first appended
    item is a user message. ``seq_start`` None continues after the highest
    payload number already in ``payload_dir``. With ``placeholder``, an empty
    user message is appended after the items for the next human input.
    """
    items = list(items)
    target = Path(path)
    folder = Path(payload_dir) if payload_dir is not None else Path.cwd() / PAYLOAD_FOLDER
    src = payload_src if payload_src is not None else payload_src_for(folder)
    start = next_payload_seq(folder) if seq_start is None else seq_start
    rendered = render_items(items, show_tool_call=show_tool_call, seq_start=start,
                            payload_src=src)
    try:
        existing = target.read_bytes().decode("utf-8")
    except FileNotFoundError:
        existing = ""
    if _starts_with_user_message(items):
        trimmed = existing.rstrip("\n")
        if trimmed.endswith(USER_PLACEHOLDER) and len(existing) - len(trimmed) <= 1:
            existing = trimmed[: -len(USER_PLACEHOLDER)]
    if existing and not existing.endswith("\n"):
        existing += "\n"
    addition = rendered.text + (USER_PLACEHOLDER + "\n" if placeholder else "")
    write_payloads(folder, rendered.payloads)
    atomic_write_text(target, existing + addition)
    return rendered.next_seq
