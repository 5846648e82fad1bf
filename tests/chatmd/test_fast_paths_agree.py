"""Every fast path of the frontend gives what the general path gives, diagnostics and IR alike.

The fast paths for element-dense transcripts: runs of text-only elements read
at once (:mod:`chatmd.element_runs`), files without ``<import`` placed without
expansion work (:func:`chatmd.imports.may_import`), and a message without
attributes lowered in short (:func:`chatmd.declarations.messages.lower_message`).
Each document here is checked twice -- as it is, and with all three switched
off -- and the two results must be identical: every diagnostic (code,
position, message, hint, notes) and the whole best-effort prompt, every field
including positions and provenance. The documents are the project's testdata,
the conformance corpus (its prompts and the documents of its cases), the
examples, the dense benchmark shape, and generated documents. The parse's note
that it read no ``<import>`` (which lets expansion skip the scan) is checked
against the tree.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import chatmd.declarations as declarations
import chatmd.imports as imports
import chatmd.lexer as lexer
from chatcommon.sources import SourceFile, Span
from chatmd.ast import Element
from chatmd.declarations.messages import lower_message_fully
from chatmd.parser import parse
from runtime.prompt_checks import check_prompt_text
from tests.chatmd.prompt_files import write_files
from tests.chatmd.test_dense_fast_path import documents
from tests.support import CONFORMANCE, REPO_ROOT, load_cases

TESTDATA = REPO_ROOT / "tests" / "chatmd" / "testdata"


@contextmanager
def general_paths() -> Iterator[None]:
    """Switch every fast path off (the general path reads everything)."""
    saved = (lexer.read_run, imports.may_import, declarations.lower_message,
             dict(declarations._LOWERINGS))
    lexer.read_run = lambda source, i, cache, first=None: ([], [], i)  # type: ignore[assignment]  # no runs
    imports.may_import = lambda text, import_tags=True: True
    declarations.lower_message = lower_message_fully
    for tag, lowering in list(declarations._LOWERINGS.items()):
        if lowering is saved[2]:
            declarations._LOWERINGS[tag] = lower_message_fully
    try:
        yield
    finally:
        lexer.read_run, imports.may_import, declarations.lower_message = saved[:3]
        declarations._LOWERINGS.clear()
        declarations._LOWERINGS.update(saved[3])


def _dump(value: Any, seen: set[int] | None = None) -> Any:
    """``value`` as plain data, every field of every attrs class (``eq=False`` ones too)."""
    if isinstance(value, Span):
        return ("span", value.source.name, value.start, value.end)
    if isinstance(value, SourceFile):
        return ("source", value.name, len(value.text))
    if isinstance(value, Enum):
        return value.name
    if attrs.has(type(value)):
        return (type(value).__name__,
                tuple(_dump(getattr(value, field.name)) for field in attrs.fields(type(value))))
    if isinstance(value, (list, tuple)):
        return tuple(_dump(item) for item in value)
    if isinstance(value, dict):
        return tuple((key, _dump(item)) for key, item in value.items())
    if isinstance(value, (frozenset, set)):
        return tuple(sorted(repr(item) for item in value))
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return (type(value).__name__, _dump(getattr(value, "__dict__", repr(value))))


def _check(text: str, folder: Path, name: str) -> Any:
    result = check_prompt_text(text, name=name, prompt_dir=str(folder))
    return (_dump(result.diagnostics), _dump(result.partial), _dump(result.syntax),
            result.prompt is None)


def _agree(text: str, folder: Path, name: str = "p.chatmd") -> Any:
    fast = _check(text, folder, name)
    with general_paths():
        general = _check(text, folder, name)
    assert fast == general
    return fast


def test_the_switch_really_turns_the_fast_paths_off() -> None:
    text = "<user>a</user>\n<assistant>b</assistant>\n"
    kinds = [token[0] for token in lexer.iter_tokens(SourceFile("d", text), [], elements=True)]
    with general_paths():
        general = [token[0] for token in lexer.iter_tokens(SourceFile("d", text), [],
                                                           elements=True)]
    assert kinds == [lexer.ELEMENTS, lexer.TEXT] and lexer.ELEMENTS not in general
    assert imports.may_import(text) is False


@pytest.mark.parametrize("path", sorted(TESTDATA.rglob("*.chatmd")), ids=lambda p: p.name)
def test_testdata_agrees(path: Path) -> None:
    _agree(path.read_text(encoding="utf-8"), path.parent, path.name)


def _conformance_prompts() -> list[Path]:
    return sorted(path for path in (CONFORMANCE / "chatmd" / "prompts").rglob("*.md"))


def test_the_conformance_prompts_are_there() -> None:
    assert len(_conformance_prompts()) >= 10


@pytest.mark.parametrize("path", _conformance_prompts(), ids=lambda p: p.name)
def test_conformance_prompts_agree(path: Path) -> None:
    _agree(path.read_text(encoding="utf-8"), path.parent, path.name)


def test_conformance_case_documents_agree(tmp_path: Path) -> None:
    cases = load_cases("chatmd/cases.jsonl")
    assert len(cases) >= 40
    for index, case in enumerate(cases):
        folder = tmp_path / str(index)
        folder.mkdir()
        write_files(folder, case["files"] or {})
        _agree(case["document"], folder, case["source_name"] or "<prompt>")


def test_examples_agree() -> None:
    for path in sorted((REPO_ROOT / "examples").glob("*.chatmd")):
        _agree(path.read_text(encoding="utf-8"), path.parent, path.name)


def test_the_dense_shape_agrees(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO_ROOT / "benchmarks"))
    from chatmd_parse import generate_dense

    text, _ = generate_dense(60)
    diagnostics, prompt, _, _ = _agree(text, tmp_path)
    assert diagnostics == () and prompt is not None
    # the same transcript with imports, errors and nesting among its messages
    (tmp_path / "part.md").write_text("<user>imported</user>\n", encoding="utf-8")
    rounds = text.split("<user>")
    mixed = "<user>".join(rounds[:20]) + '<import src="part.md"/>\n<user>' + "<user>".join(
        rounds[20:40]) + "<tool_call>no attributes</tool_call>\n<msg>no role</msg>\n" \
        '<agent src="a.chatmd"><user>nested</user></agent>\n<user id="u" role="x">' \
        + "<user>".join(rounds[40:])
    diagnostics, _, _, _ = _agree(mixed, tmp_path)
    assert "chatmd.missing_attribute" in {diagnostic[1][0] for diagnostic in diagnostics}


imported_files = st.sampled_from(["", "<user>i</user>", "<user>x</user><system>y</system>",
                                  "text <b>bold</b>", "<user>"])


@settings(max_examples=300, deadline=None)
@given(documents, imported_files)
def test_generated_documents_agree(text: str, imported: str) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "i.md").write_text(imported, encoding="utf-8")
        _agree(text.replace("<import", '<import src="i.md"'), Path(folder))


def _tags(nodes: tuple[Any, ...]) -> set[str]:
    """Every element tag in ``nodes``, at any depth."""
    tags: set[str] = set()
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if isinstance(node, Element):
            tags.add(node.tag)
            stack.extend(node.children)
    return tags


@settings(max_examples=400, deadline=None)
@given(documents, st.booleans())
def test_a_parse_that_reads_no_import_says_so(text: str, content_mode: bool) -> None:
    """``import_tags`` (what lets expansion skip a file unscanned) is never False for a
    document holding an ``<import>`` element, and is False for one that names none."""
    result = parse(SourceFile("d.chatmd", text), content_mode=content_mode)
    if "import" in _tags(result.document.nodes):
        assert result.import_tags
    if "import" not in text:
        assert not result.import_tags


def test_the_dense_shape_reads_no_import() -> None:
    sys.path.insert(0, str(REPO_ROOT / "benchmarks"))
    from chatmd_parse import generate_dense

    text, _ = generate_dense(20)
    assert not parse(SourceFile("d.chatmd", text)).import_tags
    assert parse(SourceFile("d.chatmd", text + '<import src="x.md"></import>\n')).import_tags
