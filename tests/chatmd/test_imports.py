"""Import expansion (spec §3, checklist 68-82; DECISIONS 9, 10, 10a): facts about the result.

Diagnostic codes and positions of import errors are also covered by the
data-driven cases in testdata/imports/; these tests check what expansion
produces (order, content, provenance, qualification, chains, confinement).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from chatcommon.diagnostics import DiagnosticError
from chatmd.imports import MAX_IMPORT_DEPTH
from chatmd.ir import BuiltinTool, CustomTool, Message, ShellRuntime, ShellTool, TextItem
from tests.chatmd.prompt_files import check, codes, load, write_files

TOOLS = '<tool name="rg" command="rg"/>\n<tool name="read_dir"/>\n'


def test_top_level_import_splices_declarations_in_place(tmp_path: Path) -> None:
    prompt = load(tmp_path, '<tool name="apply_patch"/><import src="tools.chatmd"/>'
                  '<tool name="fork"/>', files={"tools.chatmd": TOOLS})
    assert [getattr(t, "name", None) for t in prompt.tools] == [
        "apply_patch", "rg", "read_dir", "fork"]
    assert isinstance(prompt.tools[1], CustomTool) and isinstance(prompt.tools[2], BuiltinTool)


def test_import_in_system_body_reads_plain_markdown_in_content_mode(tmp_path: Path) -> None:
    policy = "# Policy\nNo top-level rule here: plain text is fine.\n"
    prompt = load(tmp_path, '<system><import src="policy.md"/></system>',
                  files={"policy.md": policy})
    (system,) = prompt.items
    assert isinstance(system, Message) and system.content == policy


def test_content_mode_keeps_blank_text_between_imported_elements(tmp_path: Path) -> None:
    prompt = load(tmp_path, '<user><import src="part.md"/></user>',
                  files={"part.md": 'see <img src="a.png"/>\n<doc src="b.txt" local/>\n'})
    (user,) = prompt.items
    assert isinstance(user, Message) and isinstance(user.content, tuple)
    assert [type(item).__name__ for item in user.content] == [
        "TextItem", "ImageItem", "TextItem", "DocItem", "TextItem"]
    assert user.content[2] == TextItem("\n")


@pytest.mark.parametrize("wrapper", [
    '<user>{}</user>', '<developer>{}</developer>', '<msg role="system">{}</msg>',
    '<user><agent src="a.chatmd" local>{}</agent></user>'])
def test_imports_expand_in_every_expanding_parent(tmp_path: Path, wrapper: str) -> None:
    prompt = load(tmp_path, wrapper.format('<import src="p.md"/>'), files={"p.md": "TEXT"})
    text = repr(prompt.items)
    assert "TEXT" in text and "import" not in text


@pytest.mark.parametrize("wrapper", [
    '<assistant id="a">a {}</assistant>', '<msg role="assistant">a {}</msg>',
    '<msg role="User">a {}</msg>', '<msg role=" user">a {}</msg>',
    '<tool_call function_name="f" tool_call_id="c">a {}</tool_call>',
    '<tool_response tool_call_id="c">a {}</tool_response>'])
def test_imports_elsewhere_stay_literal_and_read_nothing(tmp_path: Path, wrapper: str) -> None:
    prompt = load(tmp_path, wrapper.format('<import src="missing.md"/>'))
    (message,) = prompt.items
    assert isinstance(message, Message)
    assert message.content == (TextItem("a "), TextItem('<import src="missing.md"/>'))


def test_literal_import_rendering_of_flags_and_no_attributes(tmp_path: Path) -> None:
    prompt = load(tmp_path, '<assistant><import/></assistant><assistant><import src="a" x/></assistant>')
    assert [m.content for m in prompt.items] == [  # type: ignore[union-attr]
        "<import />", '<import src="a" x=""/>']


def test_reasoning_keeps_import_as_summary_text(tmp_path: Path) -> None:
    prompt = load(tmp_path, '<reasoning id="r"><import src="x.md"/></reasoning>')
    (reasoning,) = prompt.items
    assert [part.text for part in reasoning.summary] == ['<import src="x.md"/>']  # type: ignore[union-attr]


def test_nested_imports_resolve_against_the_importing_file(tmp_path: Path) -> None:
    prompt = load(tmp_path, '<import src="sub/a.chatmd"/>', files={
        "sub/a.chatmd": '<import src="b.chatmd"/>',
        "sub/b.chatmd": '<tool name="from_sub_b"/>',
        "b.chatmd": '<tool name="from_root_b"/>'})
    assert [t.name for t in prompt.tools] == ["from_sub_b"]  # type: ignore[union-attr]


def test_local_flag_on_import_is_a_warning_and_the_file_still_loads(tmp_path: Path) -> None:
    result = check(tmp_path, '<import src="tools.chatmd" local/>', files={"tools.chatmd": TOOLS})
    assert codes(result) == ["chatmd.import_local_ignored"]
    assert not result.has_errors and result.prompt is not None
    assert len(result.prompt.tools) == 2


def test_cycle_is_reported_in_the_importing_file(tmp_path: Path) -> None:
    # conformance case "import cycles and duplicate namespace aliases fail explicitly [1]"
    files = {"root.chatmd": '<import src="definitions/child.chatmd" namespace="child"/>',
             "definitions/child.chatmd": '<import src="../root.chatmd" namespace="root"/>'}
    result = check(tmp_path, files["root.chatmd"], files=files)
    (diagnostic,) = result.diagnostics
    assert diagnostic.code == "chatmd.import_cycle"
    assert (diagnostic.file, diagnostic.line, diagnostic.column) == (
        "definitions/child.chatmd", 1, 1)
    assert '"../root.chatmd"' in diagnostic.message
    assert [(r.message, r.file, r.line) for r in diagnostic.related] == [
        ("imported from", "root.chatmd", 1)]


def test_self_import_is_a_cycle_and_unnamed_root_is_not_on_the_chain(tmp_path: Path) -> None:
    assert codes(check(tmp_path, '<import src="root.chatmd"/>',
                       files={"root.chatmd": "<user>x</user>"})) == ["chatmd.import_cycle"]
    prompt = load(tmp_path, '<import src="root.chatmd"/>', name="<prompt>")
    assert len(prompt.items) == 1


def test_diamond_and_same_file_under_two_namespaces_are_allowed(tmp_path: Path) -> None:
    files = {"a.chatmd": '<import src="d.chatmd"/>', "b.chatmd": '<import src="d.chatmd"/>',
             "d.chatmd": '<tool name="fork"/>'}
    prompt = load(tmp_path, '<import src="a.chatmd"/><import src="b.chatmd"/>'
                  '<import src="d.chatmd" namespace="x"/><import src="d.chatmd" namespace="y"/>',
                  files=files)
    assert len(prompt.tools) == 4


def test_duplicate_namespace_fires_before_either_sibling_is_expanded(tmp_path: Path) -> None:
    # conformance case [2]: expanding would also find the cycle; only the alias is reported
    files = {"root.chatmd": '<import src="definitions/child.chatmd" namespace="child"/>',
             "definitions/child.chatmd": '<import src="../root.chatmd" namespace="root"/>'}
    result = check(tmp_path, '<import src="definitions/child.chatmd" namespace="shared"/>\n'
                   '<import src="definitions/child.chatmd" namespace="shared"/>', files=files)
    (diagnostic,) = result.diagnostics
    assert diagnostic.code == "chatmd.import_duplicate_namespace"
    assert (diagnostic.line, "shared" in diagnostic.message) == (2, True)


def test_namespaces_in_different_lists_do_not_clash(tmp_path: Path) -> None:
    result = check(tmp_path, '<import src="p.md" namespace="n"/>'
                   '<user><import src="p.md" namespace="n"/></user>',
                   files={"p.md": "<user>x</user>"})
    assert codes(result) == []


SCRIPTS = ('<script language="chatml" kind="shell_matcher" id="guard">RAW|1|RAW</script>\n'
           '<script language="chatml" kind="moderator">RAW|2|RAW</script>\n'
           '<script language="chatml" kind="shell_reviewer" id="x:y">RAW|3|RAW</script>\n')


def test_imported_script_ids_are_qualified(tmp_path: Path) -> None:
    prompt = load(tmp_path, '<import src="s.chatmd" namespace="team"/>',
                  files={"s.chatmd": SCRIPTS})
    assert [s.id for s in prompt.scripts] == ["team:guard", "team:main", "x:y"]
    assert prompt.moderator is not None and prompt.moderator.id == "team:main"


def test_nested_namespaces_compose(tmp_path: Path) -> None:
    prompt = load(tmp_path, '<import src="o.chatmd" namespace="outer"/>', files={
        "o.chatmd": '<import src="i.chatmd" namespace="inner"/>', "i.chatmd": SCRIPTS})
    assert [s.id for s in prompt.scripts] == ["outer:inner:guard", "outer:inner:main", "x:y"]
    prompt = load(tmp_path, '<import src="o2.chatmd" namespace="outer"/>', files={
        "o2.chatmd": '<import src="i.chatmd"/>'})
    assert [s.id for s in prompt.scripts][0] == "outer:guard"


def test_shell_declarations_are_qualified(tmp_path: Path) -> None:
    prompt = load(tmp_path, '<import src="r.chatmd" namespace="team"/>', files={"r.chatmd": (
        '<shell_access id="dev" extends="base"/>\n'
        '<shell_access id="ro" extends="builtin:workspace-readonly@1"/>\n'
        '<tool name="sh" type="shell" mode="structured" runtime="dev"/>\n'
        '<tool name="b" type="shell" mode="structured" runtime="builtin:x@1"/>\n'
        '<moderator_runtime shell_runtime="dev"/>\n')})
    runtimes = prompt.shell_runtimes
    assert [(r.id, r.extends) for r in runtimes] == [
        ("team:dev", "team:base"), ("team:ro", "builtin:workspace-readonly@1")]
    assert all(isinstance(r, ShellRuntime) and r.element.tag == "shell_access" for r in runtimes)
    assert [(t.name, t.runtime) for t in prompt.tools if isinstance(t, ShellTool)] == [
        ("sh", "team:dev"), ("b", "builtin:x@1")]
    assert prompt.moderator_runtime is not None
    assert (prompt.moderator_runtime.shell_runtime, prompt.moderator_runtime.qualified) == (
        "dev", "team:dev")


def test_provenance_of_imported_and_root_elements(tmp_path: Path) -> None:
    # conformance case "imports retain namespace and source provenance"
    imported = ('<shell_access id="readonly" cwd="${source_dir}"/>\n'
                '      <tool name="imported-search" type="shell" mode="fixed"\n'
                '          runtime="readonly" command="pwd"/>\n'
                '      <user>imported message</user>')
    root_text = '<user>root</user>\n<import src="definitions/runtime.chatmd" namespace="common"/>'
    prompt = load(tmp_path, root_text, name="agent.chatmd",
                  files={"definitions/runtime.chatmd": imported})
    runtime = prompt.shell_runtimes[0]
    provenance = runtime.provenance
    assert provenance is not None
    assert runtime.id == "common:readonly"
    assert provenance.file == "definitions/runtime.chatmd"
    assert provenance.namespace == "common"
    assert Path(provenance.source_dir).samefile(tmp_path / "definitions")
    assert provenance.prompt_dir == str(tmp_path)
    assert provenance.source_sha256 == hashlib.sha256(imported.encode()).hexdigest()
    assert (provenance.line, provenance.column) == (1, 1)
    tool = prompt.tools[0]
    assert isinstance(tool, ShellTool) and tool.runtime == "common:readonly"
    assert tool.provenance is not None and (tool.provenance.line, tool.provenance.column) == (2, 7)
    root_user, imported_user = prompt.items
    assert isinstance(root_user, Message) and isinstance(imported_user, Message)
    assert imported_user.source_file == "definitions/runtime.chatmd"
    assert root_user.source_file == "agent.chatmd"
    assert root_user.provenance is not None and root_user.provenance.namespace is None
    assert root_user.provenance.source_sha256 == hashlib.sha256(root_text.encode()).hexdigest()
    unnamed = load(tmp_path, "<user>x</user>", name="<prompt>")
    assert unnamed.items[0].source_file == "<prompt>"  # type: ignore[union-attr]


def test_spliced_body_nodes_take_the_enclosing_elements_provenance(tmp_path: Path) -> None:
    prompt = load(tmp_path, '\n\n  <user><import src="p.md"/></user>', files={"p.md": "x"})
    (user,) = prompt.items
    assert user.provenance is not None
    assert (user.provenance.file, user.provenance.line, user.provenance.column) == (
        "root.chatmd", 3, 3)


def test_error_in_imported_file_is_positioned_there_with_the_chain(tmp_path: Path) -> None:
    files = {"a.chatmd": '\n<import src="sub/b.chatmd"/>',
             "sub/b.chatmd": "<tool name='x'/>\n\n<user>x</assistant>"}
    result = check(tmp_path, '<user>ok</user>\n<import src="a.chatmd"/>', files=files)
    (diagnostic,) = result.diagnostics
    assert (diagnostic.code, diagnostic.file, diagnostic.line, diagnostic.column) == (
        "chatmd.mismatched_tag", "sub/b.chatmd", 3, 8)
    notes = [(r.message, r.file, r.line, r.column) for r in diagnostic.related]
    assert notes[-2:] == [("imported from", "a.chatmd", 2, 1),
                          ("imported from", "root.chatmd", 2, 1)]
    assert result.sources.get("sub/b.chatmd") is not None


def test_unreadable_import_names_the_resolved_path(tmp_path: Path) -> None:
    result = check(tmp_path, '<import src="nope/x.chatmd"/>')
    (diagnostic,) = result.diagnostics
    assert diagnostic.code == "chatmd.import_unreadable"
    assert str(tmp_path / "nope" / "x.chatmd") in diagnostic.message
    assert diagnostic.column == 9  # the src attribute


def test_non_utf8_import_is_unreadable(tmp_path: Path) -> None:
    (tmp_path / "bin.chatmd").write_bytes(b"<user>\xff</user>")
    assert codes(check(tmp_path, '<import src="bin.chatmd"/>')) == ["chatmd.import_unreadable"]


def test_bom_and_crlf_in_imported_files(tmp_path: Path) -> None:
    (tmp_path / "w.chatmd").write_bytes("\ufeff<tool name=\"a\"/>\r\n<tool\r\n name=\"b\"/>".encode())
    prompt = load(tmp_path, '<import src="w.chatmd"/>')
    assert [(t.name, t.provenance.line, t.provenance.column) for t in prompt.tools] == [  # type: ignore[union-attr]
        ("a", 1, 1), ("b", 2, 1)]


def test_depth_limit(tmp_path: Path) -> None:
    count = MAX_IMPORT_DEPTH + 2
    files = {f"f{i}.chatmd": f'<import src="f{i + 1}.chatmd"/>' for i in range(count)}
    files[f"f{count}.chatmd"] = '<tool name="deep"/>'
    result = check(tmp_path, '<import src="f0.chatmd"/>', files=files)
    (diagnostic,) = result.diagnostics
    assert diagnostic.code == "chatmd.import_too_deep"
    # f0 is at depth 1, so the import inside f127 (depth 128) is refused
    assert diagnostic.file == f"f{MAX_IMPORT_DEPTH - 1}.chatmd"
    assert len(diagnostic.related) == MAX_IMPORT_DEPTH
    shallow = {f"g{i}.chatmd": f'<import src="g{i + 1}.chatmd"/>' for i in range(MAX_IMPORT_DEPTH - 1)}
    shallow[f"g{MAX_IMPORT_DEPTH - 1}.chatmd"] = '<tool name="deep"/>'
    prompt = load(tmp_path, '<import src="g0.chatmd"/>', files=shallow)
    assert [t.name for t in prompt.tools] == ["deep"]  # type: ignore[union-attr]


def test_load_raises_with_every_diagnostic(tmp_path: Path) -> None:
    with pytest.raises(DiagnosticError) as raised:
        load(tmp_path, '<import/><import src=""/><config max_tokens="x"/>')
    assert [d.code for d in raised.value.diagnostics] == [
        "chatmd.import_missing_src", "chatmd.import_empty_attribute",
        "chatmd.invalid_attribute_value"]


# ----------------------------------------------------------------------------- confinement


def _tree(tmp_path: Path) -> Path:
    prompt_dir = tmp_path / "prompt"
    write_files(tmp_path, {"outside.chatmd": '<tool name="outside"/>',
                           "outside.chatml": "let x = 1",
                           "prompt/inside.chatmd": '<tool name="inside"/>',
                           "prompt/sub/m.chatml": "let y = 2"})
    return prompt_dir


@pytest.mark.parametrize("src", ["../outside.chatmd", "sub/../../outside.chatmd"])
def test_confined_import_escaping_by_dotdot(tmp_path: Path, src: str) -> None:
    prompt_dir = _tree(tmp_path)
    text = f'<import src="{src}"/>'
    assert len(load(prompt_dir, text).tools) == 1  # standalone parsing allows it
    result = check(prompt_dir, text, confine=True)
    (diagnostic,) = result.diagnostics
    assert diagnostic.code == "chatmd.path_outside_prompt_dir"
    assert diagnostic.column == 9


def test_confined_import_refuses_absolute_paths_even_inside(tmp_path: Path) -> None:
    prompt_dir = _tree(tmp_path)
    text = f'<import src="{prompt_dir / "inside.chatmd"}"/>'
    assert len(load(prompt_dir, text).tools) == 1
    assert codes(check(prompt_dir, text, confine=True)) == ["chatmd.path_outside_prompt_dir"]


def test_confined_import_resolves_symlinks_before_checking(tmp_path: Path) -> None:
    prompt_dir = _tree(tmp_path)
    os.symlink(tmp_path / "outside.chatmd", prompt_dir / "link.chatmd")
    os.symlink(tmp_path, prompt_dir / "up")
    for src in ("link.chatmd", "up/outside.chatmd"):
        assert codes(check(prompt_dir, f'<import src="{src}"/>', confine=True)) == [
            "chatmd.path_outside_prompt_dir"]
    os.symlink(prompt_dir / "inside.chatmd", prompt_dir / "ok.chatmd")
    prompt = load(prompt_dir, '<import src="ok.chatmd"/><import src="sub/../inside.chatmd"/>',
                  confine=True)
    assert len(prompt.tools) == 2


def test_confinement_applies_to_nested_imports_and_script_src(tmp_path: Path) -> None:
    prompt_dir = _tree(tmp_path)
    write_files(prompt_dir, {"sub/n.chatmd": '<import src="../../outside.chatmd"/>'})
    assert codes(check(prompt_dir, '<import src="sub/n.chatmd"/>', confine=True)) == [
        "chatmd.path_outside_prompt_dir"]
    script = '<script language="chatml" kind="moderator" src="{}"/>'
    assert codes(check(prompt_dir, script.format("../outside.chatml"), confine=True)) == [
        "chatmd.path_outside_prompt_dir"]
    assert codes(check(prompt_dir, script.format(tmp_path / "outside.chatml"), confine=True)) == [
        "chatmd.path_outside_prompt_dir"]
    assert codes(check(prompt_dir, script.format("sub/m.chatml"), confine=True)) == []
    assert codes(check(prompt_dir, script.format("../outside.chatml"))) == []


def test_spliced_content_may_not_nest_too_deep(tmp_path: Path) -> None:
    from chatmd.parser import MAX_NESTING

    half = MAX_NESTING // 2
    deep = "<agent>" * half + "x" + "</agent>" * half
    files = {"deep.md": deep}
    inside = half - 1  # <user>, then agents, then the imported ones: MAX_NESTING in all
    shallow_host = "<user>" + "<agent>" * inside + '<import src="deep.md"/>' \
        + "</agent>" * inside + "</user>"
    assert codes(check(tmp_path, shallow_host, files=files)) == []
    deeper = half + 10
    deep_host = "<user>" + "<agent>" * deeper + '<import src="deep.md"/>' \
        + "</agent>" * deeper + "</user>"
    result = check(tmp_path, deep_host, files=files)
    (diagnostic,) = result.diagnostics
    assert (diagnostic.code, diagnostic.column) == ("chatmd.nesting_too_deep",
                                                    1 + 6 + 7 * deeper)


def test_number_of_imported_files_is_capped(tmp_path: Path) -> None:
    from chatmd.imports import MAX_IMPORTS

    result = check(tmp_path, '<import src="t.chatmd"/>\n' * (MAX_IMPORTS + 5),
                   files={"t.chatmd": '<tool name="fork"/>'})
    (diagnostic,) = result.diagnostics
    assert (diagnostic.code, diagnostic.line) == ("chatmd.import_too_many", MAX_IMPORTS + 1)


def test_only_regular_files_of_bounded_size_are_read(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    os.mkfifo(tmp_path / "pipe.chatmd")  # opening it must not wait for a writer
    for src in ("pipe.chatmd", "/dev/zero"):
        result = check(tmp_path, f'<import src="{src}"/>')
        assert codes(result) == ["chatmd.import_unreadable"]
        assert "not a regular file" in result.diagnostics[0].message
    import chatmd.loading

    monkeypatch.setattr(chatmd.loading, "MAX_FILE_BYTES", 10)
    result = check(tmp_path, '<import src="big.chatmd"/>', files={"big.chatmd": "<user>" + "x" * 20})
    assert codes(result) == ["chatmd.import_unreadable"]
    assert "larger than" in result.diagnostics[0].message
