"""Properties of the shell layer: mutated declarations never crash, digests are deterministic.

The mutations start from ``_full_vocabulary.chatmd`` (every element of the
vocabulary, valid) and edit its text: drop, rename, duplicate or garble one
attribute of one element, or drop or duplicate one child element.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator

from hypothesis import given, settings
from hypothesis import strategies as st

from chatcommon.sources import SourceFile
from chatmd.ast import Element
from chatmd.frontend import check_prompt_text
from chatmd.lexer import attribute_spans
from chatmd.parser import parse
from chatmd.vocabulary import SHELL_TAGS
from tests.chatmd.shell.support import TESTDATA, compile_text, declarations_of, diagnostics_of
from tests.support import REPO_ROOT

FULL = (TESTDATA / "_full_vocabulary.chatmd").read_text(encoding="utf-8")
SHELL_TOP_LEVEL = {"shell_access", "tool", "moderator_runtime"}


def shell_elements(text: str) -> list[tuple[Element, int]]:
    """Every element inside a shell declaration, with its depth (0 = top level)."""
    document = parse(SourceFile("full.chatmd", text)).document

    def walk(element: Element, depth: int) -> Iterator[tuple[Element, int]]:
        yield element, depth
        for child in element.elements():
            yield from walk(child, depth + 1)

    found: list[tuple[Element, int]] = []
    for node in document.nodes:
        if isinstance(node, Element) and node.tag in SHELL_TOP_LEVEL:
            found += walk(node, 0)
    return found


ELEMENTS = shell_elements(FULL)


def test_the_full_vocabulary_is_valid_and_compiles() -> None:
    assert diagnostics_of(FULL) == []
    compiled = compile_text(FULL)
    assert compiled.ok and compiled.manifest is not None
    assert len(compiled.manifest.payload["runtimes"]) == 3  # full, worker, legacy:custom
    assert len(compiled.manifest.payload["tools"]) == 8


def test_the_full_vocabulary_uses_every_element() -> None:
    used = {element.tag for element, _ in ELEMENTS}
    assert used >= SHELL_TAGS | SHELL_TOP_LEVEL
    assert len(SHELL_TAGS) == 64


def _mutate(data: st.DataObject) -> tuple[str, str, Element, int, int]:
    """A mutated copy of FULL: (text, mutation, element, depth, line of the edit)."""
    element, depth = data.draw(st.sampled_from(ELEMENTS), label="element")
    spans = attribute_spans(element)
    children = list(element.elements())
    kinds = ["garble", "drop", "rename", "duplicate"] if spans else []
    kinds += ["drop_child", "duplicate_child"] if children else []
    if not kinds:
        kinds = ["rename_tag"]
    kind = data.draw(st.sampled_from(kinds), label="mutation")
    text = FULL
    if kind == "rename_tag":
        start = element.span.start + 1
        return (text[:start] + "zz_" + text[start:], kind, element, depth,
                element.span.start_position[0])
    if kind in ("drop_child", "duplicate_child"):
        child = data.draw(st.sampled_from(children), label="child")
        span = child.full_span
        piece = text[span.start:span.end]
        replacement = "" if kind == "drop_child" else piece + piece
        return (text[:span.start] + replacement + text[span.end:], kind, element, depth,
                span.start_position[0])
    index = data.draw(st.integers(0, len(spans) - 1), label="attribute")
    span = spans[index]
    attribute = text[span.start:span.end]
    name = element.attrs[index].name
    line = span.start_position[0]
    if kind == "drop":
        edited = ""
    elif kind == "rename":
        edited = "zz_" + attribute
    elif kind == "duplicate":
        edited = attribute + " " + attribute
    else:
        garbage = data.draw(st.lists(st.sampled_from(
            list("abc019 -_.:/${}@;&") + ["&amp;", "&quot;", "\x00", "é"]), max_size=12)
            .map("".join), label="garbage")
        edited = f'{name}="{garbage.replace(chr(34), "")}"'
    return text[:span.start] + edited + text[span.end:], kind, element, depth, line


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_mutations_give_positioned_diagnostics_never_exceptions(data: st.DataObject) -> None:
    text, kind, element, depth, line = _mutate(data)
    diagnostics = diagnostics_of(text, "full.chatmd")
    for diagnostic in diagnostics:
        assert diagnostic.file == "full.chatmd"
        assert diagnostic.line >= 1 and diagnostic.column >= 1
        assert diagnostic.code and diagnostic.message
    if depth == 0:
        return  # a top-level edit may legitimately change what the element is
    found = {(d.code, d.line) for d in diagnostics}
    if kind == "duplicate":
        assert ("shell.duplicate_attribute", line) in found, found
    elif kind == "rename":
        assert ("shell.unknown_attribute", line) in found, found
    elif kind == "rename_tag":
        assert ("shell.unexpected_text", line) in found, found


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_mutations_through_the_whole_frontend_never_raise(data: st.DataObject) -> None:
    text = _mutate(data)[0]
    result = check_prompt_text(text, name="full.chatmd", prompt_dir=str(TESTDATA))
    for diagnostic in result.diagnostics:
        assert diagnostic.line >= 1 and diagnostic.column >= 1 and diagnostic.code


def _boolean_attributes() -> list[tuple[Element, int]]:
    found = []
    for element, depth in ELEMENTS:
        for index, attribute in enumerate(element.attrs):
            if depth > 0 and attribute.value in ("true", "false"):
                found.append((element, index))
    return found


BOOLEANS = _boolean_attributes()


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(BOOLEANS), st.sampled_from(["yes", "1", "TRUE", "", "on"]))
def test_a_garbled_boolean_is_an_invalid_attribute_at_its_position(
        target: tuple[Element, int], garbage: str) -> None:
    element, index = target
    span = attribute_spans(element)[index]
    name = element.attrs[index].name
    text = FULL[:span.start] + f'{name}="{garbage}"' + FULL[span.end:]
    diagnostics = diagnostics_of(text, "full.chatmd")
    line, column = span.start_position
    assert any(d.code in ("shell.invalid_attribute", "shell.tool_invalid_attribute")
               and (d.line, d.column) == (line, column) for d in diagnostics), diagnostics


# ------------------------------------------------------------------ digests

def _digest(text: str) -> str:
    compiled = compile_text(text, "full.chatmd", sha256="a" * 64)
    assert compiled.ok, [str(d) for d in compiled.diagnostics]
    assert compiled.manifest is not None
    return compiled.manifest.sha256


FULL_DIGEST = _digest(FULL)


def _permuted(text: str, order: st.DataObject) -> str:
    """``text`` with the attributes of every shell element reordered (same length)."""
    pieces: list[tuple[int, int, str]] = []
    for element, _ in shell_elements(text):
        spans = attribute_spans(element)
        if len(spans) < 2:
            continue
        texts = [text[s.start:s.end] for s in spans]
        shuffled = order.draw(st.permutations(texts), label=f"order of <{element.tag}>")
        for span, piece in zip(spans, shuffled, strict=True):
            pieces.append((span.start, span.end, piece))
    out = []
    cursor = 0
    for start, end, piece in sorted(pieces):
        out.append(text[cursor:start])
        out.append(piece)
        cursor = end
    out.append(text[cursor:])
    return "".join(out)


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_the_digest_does_not_depend_on_attribute_order(data: st.DataObject) -> None:
    permuted = _permuted(FULL, data)
    assert len(permuted) == len(FULL)
    assert _digest(permuted) == FULL_DIGEST


def test_the_digest_is_stable_across_processes() -> None:
    program = ("from tests.chatmd.shell.test_properties import FULL_DIGEST; "
               "print(FULL_DIGEST)")
    digests = set()
    for seed in ("0", "12345"):
        environment = dict(os.environ, PYTHONHASHSEED=seed)
        output = subprocess.run([sys.executable, "-c", program], cwd=REPO_ROOT,
                                env=environment, capture_output=True, text=True, check=True)
        digests.add(output.stdout.strip())
    assert digests == {FULL_DIGEST}
    assert re.fullmatch(r"[0-9a-f]{64}", FULL_DIGEST)


def test_the_digest_ignores_the_order_runtimes_are_declared_in() -> None:
    found = declarations_of(FULL, "full.chatmd", sha256="a" * 64)
    from chatmd.shell import ALL_FEATURES, compile_runtimes

    def compiled(runtimes: list[object]) -> str:
        result = compile_runtimes(runtimes, found.tools, legacy_tools=found.legacy_tools,  # type: ignore[arg-type]
                                  scripts=list(reversed(found.scripts)), moderator=found.moderator,
                                  platform="linux", features=ALL_FEATURES)
        assert result.manifest is not None
        return result.manifest.sha256

    assert compiled(found.runtimes) == compiled(list(reversed(found.runtimes))) == FULL_DIGEST
