"""``<script>`` declarations (spec §4.9) and the checks over all scripts of a prompt.

Strict attributes ``id language kind src wall_time fuel max_tasks max_value
max_output max_array_items max_depth``. Checked, each independently so that
all problems are reported: ``language`` is ``chatml``; ``kind`` is one of
:data:`~chatmd.ir.SCRIPT_KINDS`; exactly one of ``src`` and a body (the body
is the children rendered as text, untrimmed, so whitespace counts); ``src`` is
loaded now, relative to the folder of the *declaring* file (DECISIONS 9), and
confined to the prompt folder when pinning; limits parse; ``id`` defaults to
``main`` for a moderator, is required for shell kinds, and is qualified with
the import namespace. :func:`check_script_registry` then rejects a second
moderator and any id used twice (across kinds).

Each script keeps its text and where it sits: an inline body's first
character's line and column in the declaring file, or the ``src`` file's path.
"""

from __future__ import annotations

import math
import os
import re
from typing import Any

from chatcommon.diagnostics import Related
from chatcommon.numbers import parse_int
from chatmd.ast import Element, Text
from chatmd.declarations.attributes import StrictAttributes
from chatmd.declarations.context import LoweringContext
from chatmd.declarations.text import render_nodes
from chatmd.ir import SCRIPT_KINDS, InlineSource, Script, ScriptLimits, ScriptSource, SrcSource
from chatmd.loading import UnreadableFile, read_text, resolve, sha256_hex
from chatmd.provenance import Provenance, qualify
from chatmd.references import INVALID_PATH, invalid_message, reference_problem
from chatmd.vocabulary import is_blank

LIMIT_ATTRIBUTES = ("wall_time", "fuel", "max_tasks", "max_value", "max_output",
                    "max_array_items", "max_depth")
SCRIPT_ATTRIBUTES = ("id", "language", "kind", "src", *LIMIT_ATTRIBUTES)
_SHELL_KINDS = frozenset(SCRIPT_KINDS) - {"moderator"}
_DURATION = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ms|s|m|h)\Z")
_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_SIZE = re.compile(r"([0-9]+)(GiB|MiB|KiB|B)?\Z")
_SIZE_UNITS = {"GiB": 1 << 30, "MiB": 1 << 20, "KiB": 1 << 10, "B": 1, None: 1}
_COUNT = re.compile(r"[0-9]+\Z")
_MAX_INT64 = 2**63 - 1


class LimitError(ValueError):
    """A limit value that does not parse; the message says what was expected."""


def parse_duration(text: str) -> float:
    """Seconds from ``2s``, ``1500ms``, ``2.5m``, ``1h`` (positive, finite)."""
    match = _DURATION.match(text)
    if match is None:
        raise LimitError("expected a positive duration with a unit: ms, s, m or h (e.g. 2s)")
    seconds = float(match.group(1)) * _DURATION_UNITS[match.group(2)]
    if not seconds > 0 or not math.isfinite(seconds):
        raise LimitError("expected a duration greater than zero")
    return seconds


def parse_positive_count(text: str) -> int:
    """A positive decimal integer (within 64-bit range)."""
    if not _COUNT.match(text):
        raise LimitError("expected a positive whole number")
    value = parse_int(text)
    if value is None or value <= 0 or value > _MAX_INT64:
        raise LimitError("expected a whole number greater than zero")
    return value


def parse_byte_size(text: str) -> int:
    """Bytes from ``512``, ``16KiB``, ``2MiB``, ``1GiB``, ``10B``; must be greater than zero."""
    match = _SIZE.match(text)
    if match is None:
        raise LimitError("expected a size in bytes, optionally with GiB, MiB, KiB or B (e.g. 16KiB)")
    number = parse_int(match.group(1))
    value = _MAX_INT64 + 1 if number is None else number * _SIZE_UNITS[match.group(2)]
    if value <= 0 or value > _MAX_INT64:
        raise LimitError("expected a size greater than zero")
    return value


_LIMIT_PARSERS = {
    "wall_time": parse_duration,
    "fuel": parse_positive_count,
    "max_tasks": parse_positive_count,
    "max_value": parse_byte_size,
    "max_output": parse_byte_size,
    "max_array_items": parse_positive_count,
    "max_depth": parse_positive_count,
}


def _body_start(element: Element) -> tuple[str, int, int]:
    """Display file, line and column of the first character of an inline body."""
    first = element.children[0]
    span = first.span
    start = span.start
    if type(first) is Text and span.source.text.startswith("RAW|", start):
        start += 4
    line, column = span.source.position(start)
    return span.file, line, column


def lower_script(element: Element, provenance: Provenance, ctx: LoweringContext) -> Script | None:
    """The :class:`~chatmd.ir.Script`; None after any reported problem."""
    attributes = StrictAttributes(element, SCRIPT_ATTRIBUTES, ctx, ("script",))
    language = attributes.required("language")
    if language is not None and language != "chatml":
        attributes.ok = False
        ctx.error(ctx.attribute_span(element, "language", first=True),
                  "chatmd.script_invalid_language",
                  f"unsupported script language \"{language}\": expected language=\"chatml\"",
                  path=("script", "language"))
    kind = attributes.required("kind")
    if kind is not None and kind not in SCRIPT_KINDS:
        attributes.ok = False
        ctx.error(ctx.attribute_span(element, "kind", first=True), "chatmd.script_invalid_kind",
                  f"unknown script kind \"{kind}\": expected one of {', '.join(SCRIPT_KINDS)}",
                  path=("script", "kind"))
    source = _source(element, attributes, ctx)
    limits = _limits(element, attributes, ctx)
    script_id = _script_id(element, attributes, kind, ctx)
    if not attributes.ok or source is None or limits is None or script_id is None:
        return None
    assert language is not None and kind is not None
    return Script(qualify(provenance.namespace, script_id), kind, language, source,
                  sha256_hex(source.text), limits, provenance)


def _source(element: Element, attributes: StrictAttributes,
            ctx: LoweringContext) -> ScriptSource | None:
    body = render_nodes(element.children)
    if not attributes.has("src"):
        if body == "":
            attributes.ok = False
            ctx.error(element.span, "chatmd.script_empty_source",
                      "<script> has no source: expected a body or src=\"file.chatml\"",
                      path=("script",))
            return None
        file, line, column = _body_start(element)
        return InlineSource(body, file, line, column)
    src = attributes.optional("src")
    if body != "":
        attributes.ok = False
        ctx.error(element.span, "chatmd.script_conflicting_source",
                  "<script> has both src and a body: expected one or the other",
                  path=("script",),
                  hint="a body made only of whitespace counts too; write <script ... src=\"x\"/>")
        return None
    if src is None:  # a bare flag, already reported
        return None
    src_span = ctx.attribute_span(element, "src", first=True)
    if is_blank(src):
        attributes.ok = False
        ctx.error(src_span, "chatmd.script_empty_source",
                  "<script> has an empty src: expected src=\"file.chatml\"", path=("script", "src"))
        return None
    problem = reference_problem(src)
    if problem is not None:  # before the file system sees it (NUL, encoding, length)
        attributes.ok = False
        ctx.error(src_span, INVALID_PATH, invalid_message("script src", src, problem),
                  path=("script", "src"))
        return None
    folder = ctx.folder_of(element)
    path = resolve(src, folder)
    if ctx.confinement is not None:
        violation = ctx.confinement.violation(src, path)
        if violation is not None:
            attributes.ok = False
            ctx.error(src_span, "chatmd.path_outside_prompt_dir", f"script src {violation}",
                      path=("script", "src"),
                      hint="pinned prompts may only load scripts beneath the root prompt's "
                      "folder, by relative path")
            return None
    try:
        text = read_text(path)
    except UnreadableFile as exc:
        attributes.ok = False
        ctx.error(src_span, "chatmd.script_source_unavailable",
                  f"cannot load script \"{src}\" from {folder}: {exc.reason}",
                  path=("script", "src"),
                  hint="src is relative to the folder of the file that declares the script")
        return None
    display = os.path.normpath(os.path.join(os.path.dirname(element.span.file), src))
    return SrcSource(src, text, os.path.abspath(path), display)


def _limits(element: Element, attributes: StrictAttributes,
            ctx: LoweringContext) -> ScriptLimits | None:
    values: dict[str, Any] = {}  # ScriptLimits' fields by name: float | int
    ok = True
    for name in LIMIT_ATTRIBUTES:
        text = attributes.optional(name)
        if text is None:
            continue
        try:
            values[name] = _LIMIT_PARSERS[name](text)
        except LimitError as exc:
            ok = False
            attributes.ok = False
            ctx.error(ctx.attribute_span(element, name, first=True), "chatmd.script_invalid_limit",
                      f"invalid {name} \"{text}\": {exc}", path=("script", name))
    return ScriptLimits(**values) if ok else None


def _script_id(element: Element, attributes: StrictAttributes, kind: str | None,
               ctx: LoweringContext) -> str | None:
    if not attributes.has("id"):
        if kind == "moderator":
            return "main"
        if kind in _SHELL_KINDS:
            attributes.ok = False
            ctx.error(element.span, "chatmd.script_id_required",
                      f"a {kind} script needs an id: expected id=\"...\"", path=("script", "id"))
        return None
    value = attributes.optional("id")
    if value is None:
        return None
    if is_blank(value):
        attributes.ok = False
        ctx.error(ctx.attribute_span(element, "id", first=True), "chatmd.script_invalid_id",
                  "script id is blank: expected a name such as id=\"guard\"",
                  path=("script", "id"))
        return None
    return value


def check_script_registry(scripts: list[tuple[Script, Element]], ctx: LoweringContext) -> None:
    """At most one moderator; every qualified id used once (each duplicate reported once)."""
    first_moderator: Element | None = None
    for script, element in scripts:
        if script.kind != "moderator":
            continue
        if first_moderator is None:
            first_moderator = element
            continue
        ctx.error(element.span, "chatmd.multiple_moderators",
                  "more than one moderator script: a prompt selects at most one",
                  path=("script",),
                  related=(Related.at(first_moderator.span, "first moderator declared here"),))
    first_by_id: dict[str, Element] = {}
    reported: set[str] = set()
    for script, element in scripts:
        first = first_by_id.get(script.id)
        if first is None:
            first_by_id[script.id] = element
            continue
        if script.id in reported:
            continue
        reported.add(script.id)
        ctx.error(element.span, "chatmd.duplicate_script",
                  f"duplicate script id `{script.id}`: ids are unique across all kinds",
                  path=("script", script.id),
                  hint="a moderator without an id is called main",
                  related=(Related.at(first.span, f"`{script.id}` first declared here"),))
