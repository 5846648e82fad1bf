"""Export of a moderated session to readable ChatMD (moderator-runtime spec 2.5; seed 3.6).

:func:`export_chatmd` renders the canonical entries with :mod:`chatmd.transcript_writer`
(payloads inline), each element carrying ``ochat-history-id="<entry id>"``,
then an explicit annex that materialises the overlay, in this order:

1. each prepended item as a message element (user -> ``<user>``, assistant ->
   ``<msg role="assistant" id=...>``, other roles -> ``<msg role="...">``);
2. each appended item, rendered the same way;
3. per replacement, a ``<msg role="developer" id="moderation-replacement-<target>">``
   note followed by the rendered replacement;
4. per tombstone, a ``<msg role="developer" id="moderation-deletion-<target>">`` note;
5. when halted, ``<msg role="developer" id="moderation-halt">`` with
   ``Session ended by moderator: <reason>``.

An overlay item the writer cannot render becomes the developer note
``Invalid moderation item``. Canonical history is never rewritten; a session
without an overlay exports just its canonical entries.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from chatmd.transcript_writer import TranscriptItemError, attribute, frame, render_items
from runtime.ids import Entry
from runtime.overlay import Overlay

HISTORY_ID = "ochat-history-id"
_OPEN_TAG = re.compile(r"<([A-Za-z_][A-Za-z0-9_-]*)")
_TEXT_PARTS = ("input_text", "output_text", "text")


def _render(item: Mapping[str, Any]) -> str:
    return render_items([item], show_tool_call=True).text.rstrip("\n")


def _with_history_id(rendered: str, entry_id: str) -> str:
    match = _OPEN_TAG.match(rendered)
    if match is None:
        return rendered
    return rendered[:match.end()] + attribute(HISTORY_ID, entry_id) + rendered[match.end():]


def _note(note_id: str | None, text: str) -> str:
    return f'<msg role="developer"{attribute("id", note_id) if note_id else ""}>\n{frame(text)}</msg>'


def _message_text(item: Mapping[str, Any]) -> str | None:
    content = item.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    texts = []
    for part in content:
        if not isinstance(part, Mapping) or part.get("type") not in _TEXT_PARTS or \
                not isinstance(part.get("text"), str):
            return None
        texts.append(part["text"])
    return " ".join(texts) if item.get("role") == "assistant" else "".join(texts)


def render_overlay_item(item: Mapping[str, Any], entry_id: str | None = None) -> str:
    """An overlay item as a ChatMD element (the annex's rendering)."""
    kind = item.get("type", "message" if "role" in item else None)
    if kind == "message":
        role = item.get("role")
        text = _message_text(item)
        if isinstance(role, str) and text is not None:
            if role == "user":
                return f"<user>\n{frame(text)}</user>"
            if role == "assistant":
                item_id = item.get("id") if isinstance(item.get("id"), str) else entry_id
                return (f'<msg role="assistant"{attribute("id", item_id) if item_id else ""}>'
                        f"\n{frame(text)}</msg>")
            return f"<msg{attribute('role', role)}>\n{frame(text)}</msg>"
    try:
        return _render(item)
    except TranscriptItemError:
        return _note(None, "Invalid moderation item")


def export_chatmd(history: Sequence[Entry], overlay: Overlay | None = None) -> str:
    """Canonical entries as ChatMD, then the overlay annex (nothing when the overlay is empty)."""
    blocks: list[str] = []
    for entry in history:
        try:
            blocks.append(_with_history_id(_render(entry.item), entry.entry_id))
        except TranscriptItemError:
            blocks.append(_note(None, f"Unrenderable history entry {entry.entry_id}"))
    if overlay is not None:
        for inserted in (*overlay.prepended, *overlay.appended):
            blocks.append(render_overlay_item(inserted.item, inserted.entry_id))
        for replacement in overlay.replacements:
            target = replacement.target_id
            blocks.append(_note(f"moderation-replacement-{target}",
                                f"The moderator replaced entry {target} in the effective "
                                "transcript with the next element."))
            blocks.append(render_overlay_item(replacement.item, target))
        for tombstone in overlay.tombstones:
            target = tombstone.target_id
            blocks.append(_note(f"moderation-deletion-{target}",
                                f"The moderator deleted entry {target} from the effective "
                                "transcript."))
        if overlay.halted_reason is not None:
            blocks.append(_note("moderation-halt",
                                f"Session ended by moderator: {overlay.halted_reason}"))
    return "".join(block + "\n" for block in blocks)


__all__ = ["HISTORY_ID", "export_chatmd", "render_overlay_item"]
