"""Units of the language server: positions, the ChatML index, the vocabulary table, analysis."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as lsp

from chatmd.vocabulary import CORE_TAGS, SHELL_TAGS
from chatml.check import check_source
from runtime.lsp.analysis import analyse, surface_names
from runtime.lsp.chatml_index import Binder, ScriptIndex, index_program
from runtime.lsp.positions import TextIndex
from runtime.lsp.vocabulary_table import TAGS, TOP_LEVEL, children_of


def test_positions_in_every_encoding() -> None:
    text = "a\U0001F600é b\nsecond"
    for encoding, character in (("utf-16", 5), ("utf-8", 8), ("utf-32", 4)):
        index = TextIndex(text, encoding)
        position = index.position(4)  # the space
        assert position == lsp.Position(line=0, character=character)
        assert index.offset(position) == 4
        assert index.to_line_column(position) == (1, 5)
        assert index.from_line_column(1, 5) == position
    index = TextIndex(text)
    assert index.offset(lsp.Position(line=9, character=0)) == len(text)  # clamped
    assert index.offset(lsp.Position(line=1, character=99)) == len(text)
    assert index.from_line_column(0, 0) == lsp.Position(line=0, character=0)


def _index(text: str, surface: str = "core") -> ScriptIndex:
    result = check_source(text, surface=surface)
    assert result.program is not None and result.ok, result.diagnostics
    modules, globals_ = surface_names(surface)
    return index_program(result.program, modules, globals_)


def test_index_resolves_uses_to_binders_with_shadowing() -> None:
    text = "let x = 1\nlet f x = x + 1\nlet g = f(x)\n"
    index = _index(text)
    uses = [(u.span.start, u.binder.span.start if u.binder else None)
            for u in index.uses if u.name == "x"]
    assert uses == [(text.index("x + 1"), text.index("x =", 10)), (text.rindex("x"), 4)]


def test_index_modules_open_and_builtins() -> None:
    text = ("module M = struct let y = 1 end\nopen M\nlet z = y + M.y\n"
            "let n = String.length(\"a\")\n")
    index = _index(text)
    by_name = {(u.name, u.span.start): u for u in index.uses}
    y_use = by_name[("y", text.index("y + M"))]
    member = by_name[("y", text.index("M.y") + 2)]
    assert y_use.binder is not None and y_use.binder.qualified == "M.y"
    assert member.binder == y_use.binder
    length = by_name[("length", text.index("length"))]
    assert length.binder is None and length.builtin == "String.length"
    assert index.members("M") == ["y"]
    assert "length" in index.members("String")


def test_index_scopes_for_completion() -> None:
    text = "let a = 1\nlet f p = match p with | `Some(q) -> q | _ -> a\n"
    index = _index(text)
    inside_arm = text.index("q |") + 1
    assert set(index.in_scope(inside_arm)) == {"a", "p", "q"}
    assert set(index.in_scope(len(text))) == {"a", "f"}
    at_binder = index.at(text.index("f p"))
    assert isinstance(at_binder, Binder) and at_binder.kind == "let"


def test_vocabulary_table_covers_the_closed_vocabulary() -> None:
    assert set(TAGS) == CORE_TAGS | SHELL_TAGS
    assert len(SHELL_TAGS) == 64
    for tag in TAGS.values():
        assert tag.description and all(child in TAGS for child in tag.children)
        assert all(attribute.description for attribute in tag.attributes.values())
    reachable = set(TOP_LEVEL)
    frontier = list(TOP_LEVEL)
    while frontier:
        for child in children_of(frontier.pop()):
            if child not in reachable:
                reachable.add(child)
                frontier.append(child)
    assert reachable >= SHELL_TAGS  # every shell element can be completed somewhere
    assert TAGS["script"].attributes["kind"].values[0] == "moderator"


def test_analysis_of_an_unreadable_root_folder_and_odd_text(tmp_path: Path) -> None:
    for text in ["", "\x00\x01<", "<user>" * 300, "RAW|", "<!--", '<script language="chatml" '
                 'kind="moderator">let x = (* open</script>']:
        analysis = analyse(str(tmp_path / "p.chatmd"), text)
        assert analysis.path in analysis.published
    chatml = analyse(str(tmp_path / "m.chatml"), "let x = \"open")
    codes = [d.code for d in chatml.published[chatml.path]]
    assert codes == ["chatml.unterminated_string"]


@pytest.mark.parametrize("surface", ["core", "moderator", "shell_matcher"])
def test_surface_names(surface: str) -> None:
    modules, globals_ = surface_names(surface)
    assert "String" in modules and "to_string" in globals_
    assert ("print" in globals_) == (surface != "shell_matcher")  # hooks cannot print
