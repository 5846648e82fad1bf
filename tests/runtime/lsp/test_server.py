"""``chatmdc lsp`` through a real LSP client over stdio: every feature, and hard documents."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from tests.runtime.lsp.helpers import (
    codes,
    completion_labels,
    definition_of,
    hover_text,
    open_document,
    replace_text,
    settle,
    uri,
    write,
)

MODERATOR = """let initial_state = { count = 0 }
let helper n = n + 1
let on_event ctx st ev = Task.pure(st)
"""

PROMPT = """<config model="gpt-4o" temperature="0.2"/>
<import src="lib/shared.chatmd"/>
<script language="chatml" kind="moderator" src="moderator.chatml"/>
<tool name="read_file"/>
<shell_access id="ro">
  <capabilities sandbox="preferred" network="false"/>
  <backends merge="replace"><direct/></backends>
</shell_access>
<system>Be brief.</system>
<user>
Look at <doc src="notes.txt" local/> please.
</user>
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write(tmp_path, "lib/shared.chatmd", "<developer>shared rules</developer>\n")
    write(tmp_path, "moderator.chatml", MODERATOR)
    write(tmp_path, "notes.txt", "notes\n")
    write(tmp_path, "prompt.chatmd", PROMPT)
    return tmp_path


@pytest.mark.asyncio
async def test_open_clean_prompt_publishes_no_problems(client: LanguageClient,
                                                       project: Path) -> None:
    document = await open_document(client, project / "prompt.chatmd")
    assert codes(client, document) == []
    assert codes(client, uri(project / "moderator.chatml")) == []


@pytest.mark.asyncio
async def test_edits_update_diagnostics_on_the_unsaved_text(client: LanguageClient,
                                                            project: Path) -> None:
    document = await open_document(client, project / "prompt.chatmd")
    broken = PROMPT.replace("<system>Be brief.</system>", "<system>Be brief.</user>")
    await replace_text(client, document, broken, 2)
    (diagnostic,) = client.diagnostics[document]
    assert diagnostic.code == "chatmd.mismatched_tag"
    assert diagnostic.severity == lsp.DiagnosticSeverity.Error
    assert diagnostic.range.start == lsp.Position(line=8, character=17)
    messages = [r.message for r in diagnostic.related_information or []]
    assert any(m.startswith("hint: ") for m in messages)
    assert (project / "prompt.chatmd").read_text() == PROMPT  # only the buffer changed
    await replace_text(client, document, PROMPT, 3)
    assert codes(client, document) == []


@pytest.mark.asyncio
async def test_save_reanalyses(client: LanguageClient, project: Path) -> None:
    document = await open_document(client, project / "prompt.chatmd")
    write(project, "lib/shared.chatmd", "<developer>shared</user>")
    client.text_document_did_save(lsp.DidSaveTextDocumentParams(
        text_document=lsp.TextDocumentIdentifier(uri=document)))
    await settle(client, document)
    assert codes(client, uri(project / "lib/shared.chatmd")) == ["chatmd.mismatched_tag"]
    assert codes(client, document) == ["chatmd.problems_in_chain"]


@pytest.mark.asyncio
async def test_problems_of_imported_files_are_published_there(client: LanguageClient,
                                                              project: Path) -> None:
    write(project, "lib/shared.chatmd", '<import src="deeper.chatmd"/>\n')
    write(project, "lib/deeper.chatmd", "<user>x</assistant>\n")
    write(project, "moderator.chatml", MODERATOR + "let broken = 1 + true\n")
    document = await open_document(client, project / "prompt.chatmd")
    deeper = client.diagnostics[uri(project / "lib/deeper.chatmd")]
    assert [d.code for d in deeper] == ["chatmd.mismatched_tag"]
    chain = [r.message for r in deeper[0].related_information or []]
    assert chain.count("imported from") == 2
    script = client.diagnostics[uri(project / "moderator.chatml")]
    assert [d.code for d in script] == ["chatml.type_mismatch"]
    assert script[0].range.start.line == 3
    starts = sorted((d.range.start.line, d.message.split(":")[0])
                    for d in client.diagnostics[document])
    assert starts == [(1, "1 error in lib/deeper.chatmd (reached from here)"),
                      (2, "1 error in moderator.chatml (reached from here)")]
    # fixing the importer's buffer clears what it published on the other files
    await replace_text(client, document, "<user>hi</user>\n", 2)
    assert codes(client, uri(project / "lib/deeper.chatmd")) == []
    assert codes(client, document) == []


@pytest.mark.asyncio
async def test_import_cycle(client: LanguageClient, tmp_path: Path) -> None:
    write(tmp_path, "a.chatmd", '<import src="b.chatmd"/>\n<user>a</user>\n')
    write(tmp_path, "b.chatmd", '<import src="a.chatmd"/>\n')
    document = await open_document(client, tmp_path / "a.chatmd")
    assert codes(client, uri(tmp_path / "b.chatmd")) == ["chatmd.import_cycle"]
    assert codes(client, document) == ["chatmd.problems_in_chain"]
    labels = await completion_labels(client, document, 1, 1)
    assert "user" in labels  # the server still answers


@pytest.mark.asyncio
async def test_unreadable_imports(client: LanguageClient, tmp_path: Path) -> None:
    (tmp_path / "folder.chatmd").mkdir()
    (tmp_path / "binary.chatmd").write_bytes(b"<user>\xff\xfe</user>")
    text = ('<import src="folder.chatmd"/>\n<import src="binary.chatmd"/>\n'
            '<import src="missing.chatmd"/>\n<user>hi</user>\n')
    document = await open_document(client, write(tmp_path, "p.chatmd", text))
    found = client.diagnostics[document]
    assert [d.code for d in found] == ["chatmd.import_unreadable"] * 3
    assert [d.range.start.line for d in found] == [0, 1, 2]
    assert "not UTF-8" in found[1].message


@pytest.mark.asyncio
async def test_hover(client: LanguageClient, project: Path) -> None:
    document = await open_document(client, project / "prompt.chatmd")
    config = await hover_text(client, document, 0, 3)
    assert config is not None and "**<config>**" in config and "model settings" in config
    temperature = await hover_text(client, document, 0, 25)
    assert temperature is not None and "sampling temperature" in temperature
    kind = await hover_text(client, document, 2, 30)
    assert kind is not None and "`moderator` | `shell_matcher`" in kind
    network = await hover_text(client, document, 5, 38)
    assert network is not None and "`true` | `false`" in network
    assert await hover_text(client, document, 8, 12) is None  # message text


@pytest.mark.asyncio
async def test_hover_inside_an_inline_script(client: LanguageClient, tmp_path: Path) -> None:
    text = ('<config model="m"/>\n<script language="chatml" kind="moderator">\n'
            + MODERATOR + 'let shout s = String.to_upper(s)\n</script>\n')
    document = await open_document(client, write(tmp_path, "p.chatmd", text))
    assert codes(client, document) == []
    assert await hover_text(client, document, 3, 6) == "```chatml\nval helper : int -> int\n```"
    assert await hover_text(client, document, 3, 15) == "```chatml\nval n : int\n```"
    assert await hover_text(client, document, 5, 4) == (
        "```chatml\nval shout : string -> string\n```")
    builtin = await hover_text(client, document, 5, 24)
    assert builtin == "```chatml\nval String.to_upper : string -> string  (builtin)\n```"


@pytest.mark.asyncio
async def test_definition(client: LanguageClient, project: Path) -> None:
    document = await open_document(client, project / "prompt.chatmd")
    imported = await definition_of(client, document, 1, 16)
    assert imported is not None and imported.uri == uri(project / "lib/shared.chatmd")
    script = await definition_of(client, document, 2, 55)
    assert script is not None and script.uri == uri(project / "moderator.chatml")
    doc = await definition_of(client, document, 10, 20)
    assert doc is not None and doc.uri == uri(project / "notes.txt")
    assert await definition_of(client, document, 0, 18) is None  # model="gpt-4o"
    module = await open_document(client, project / "moderator.chatml")
    binding = await definition_of(client, module, 1, 15)  # the n of `n + 1`
    assert binding is not None and binding.uri == module
    assert binding.range.start == lsp.Position(line=1, character=11)


@pytest.mark.asyncio
async def test_completion(client: LanguageClient, tmp_path: Path) -> None:
    text = '<shell_access id="r">\n  <policy default="">\n    <rule id="x" action="allow">\n      <\n'
    document = await open_document(client, write(tmp_path, "p.chatmd", text))
    assert "any_command" in await completion_labels(client, document, 3, 7)
    assert await completion_labels(client, document, 1, 19) == ["allow", "ask", "deny"]
    await replace_text(client, document, '<config \n', 2)
    config = await completion_labels(client, document, 0, 8)
    assert {"model", "temperature", "reasoning_effort"} <= set(config)
    await replace_text(client, document, '<config/>\n<user>\n<', 3)
    assert await completion_labels(client, document, 2, 1) == ["doc", "img", "agent", "import"]
    await replace_text(client, document, "<", 4)
    top = await completion_labels(client, document, 0, 1)
    assert "shell_access" in top and "capabilities" not in top


@pytest.mark.asyncio
async def test_completion_covers_the_shell_vocabulary(client: LanguageClient,
                                                      tmp_path: Path) -> None:
    from chatmd.vocabulary import SHELL_TAGS
    from runtime.lsp.vocabulary_table import TAGS

    seen: set[str] = set()
    document = await open_document(client, write(tmp_path, "p.chatmd", ""))
    version = 2
    for parent in ["shell_access", *sorted(t for t in TAGS if TAGS[t].children)]:
        opener = '<tool type="shell" name="t" runtime="r">' if parent == "tool" else (
            f'<shell_access id="r"><{parent}>' if parent != "shell_access"
            else '<shell_access id="r">')
        await replace_text(client, document, opener + "<", version)
        version += 1
        seen |= set(await completion_labels(client, document, 0, len(opener) + 1))
    assert seen >= SHELL_TAGS and len(SHELL_TAGS) == 64


@pytest.mark.asyncio
async def test_chatml_completion_and_module_exports(client: LanguageClient,
                                                    tmp_path: Path) -> None:
    text = MODERATOR + "module Util = struct let twice x = x * 2 end\nlet probe = helper(1)\n"
    module = await open_document(client, write(tmp_path, "m.chatml", text))
    assert codes(client, module) == []
    names = await completion_labels(client, module, 4, 12)
    assert {"helper", "initial_state", "Util", "String", "print"} <= set(names)
    await replace_text(client, module, text + "let u = Util.\n", 2)
    assert await completion_labels(client, module, 5, 13) == ["twice"]
    await replace_text(client, module, text + "let u = String.\n", 3)
    exports = await completion_labels(client, module, 5, 15)
    assert {"length", "to_upper"} <= set(exports)


@pytest.mark.asyncio
async def test_document_symbols(client: LanguageClient, project: Path) -> None:
    document = await open_document(client, project / "prompt.chatmd")
    found = await client.text_document_document_symbol_async(lsp.DocumentSymbolParams(
        text_document=lsp.TextDocumentIdentifier(uri=document)))
    assert found is not None
    names = [(s.name, s.kind) for s in found if isinstance(s, lsp.DocumentSymbol)]
    assert names == [("config", lsp.SymbolKind.Property),
                     ("lib/shared.chatmd", lsp.SymbolKind.File),
                     ("main", lsp.SymbolKind.Module),
                     ("read_file", lsp.SymbolKind.Function),
                     ("ro", lsp.SymbolKind.Namespace),
                     ("system", lsp.SymbolKind.String),
                     ("user", lsp.SymbolKind.String)]
    module = await open_document(client, project / "moderator.chatml")
    bindings = await client.text_document_document_symbol_async(lsp.DocumentSymbolParams(
        text_document=lsp.TextDocumentIdentifier(uri=module)))
    assert bindings is not None
    assert [(s.name, s.detail) for s in bindings if isinstance(s, lsp.DocumentSymbol)] == [
        ("initial_state", "{count: int}"), ("helper", "int -> int"),
        ("on_event", "'a, 'b, 'c -> 'b task")]


@pytest.mark.asyncio
async def test_ten_thousand_line_transcript(client: LanguageClient, tmp_path: Path) -> None:
    lines = ['<config model="gpt-4o"/>']
    while len(lines) < 10_000:
        lines += ["<user>", f"question {len(lines)}", "</user>",
                  "<assistant>", "an answer", "</assistant>"]
    text = "\n".join(lines[:10_000 - (10_000 - 1) % 6]) + "\n"
    document = await open_document(client, write(tmp_path, "long.chatmd", text))
    assert codes(client, document) == []
    found = await client.text_document_document_symbol_async(lsp.DocumentSymbolParams(
        text_document=lsp.TextDocumentIdentifier(uri=document)))
    assert found is not None and len(found) == 1 + (text.count("\n") - 1) // 3
    last_line = text.count("\n") - 1
    assert (await hover_text(client, document, last_line, 3) or "").startswith("**<assistant>**")
    broken = text + "<user>unfinished\n"
    await replace_text(client, document, broken, 2)
    assert codes(client, document) == ["chatmd.unclosed_element"]


@pytest.mark.asyncio
async def test_positions_count_utf16_units(client: LanguageClient, tmp_path: Path) -> None:
    document = await open_document(client, write(tmp_path, "p.chatmd",
                                                 "<user>\U0001F600 x</assistant>"))
    (diagnostic,) = client.diagnostics[document]
    assert diagnostic.range.start == lsp.Position(line=0, character=10)


@pytest.mark.asyncio
async def test_close_clears_what_the_document_published(client: LanguageClient,
                                                        tmp_path: Path) -> None:
    document = await open_document(client, write(tmp_path, "p.chatmd", "<user>x</assistant>"))
    assert codes(client, document) == ["chatmd.mismatched_tag"]
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(
        text_document=lsp.TextDocumentIdentifier(uri=document)))
    other = await open_document(client, write(tmp_path, "q.chatmd", "<user>x</user>"))
    assert codes(client, other) == [] and codes(client, document) == []
    assert os.path.exists(tmp_path / "p.chatmd")


@pytest.mark.asyncio
async def test_language_by_id_and_other_documents_left_alone(client: LanguageClient,
                                                             tmp_path: Path) -> None:
    readme = write(tmp_path, "README.md", "<user>x</assistant>")
    document = uri(readme)
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=lsp.TextDocumentItem(
        uri=document, language_id="markdown", version=1, text=readme.read_text())))
    await settle(client, document)
    assert document not in client.diagnostics
    prompt = write(tmp_path, "prompt.md", "<user>x</assistant>")
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=lsp.TextDocumentItem(
        uri=uri(prompt), language_id="chatmd", version=1, text=prompt.read_text())))
    await settle(client, uri(prompt))
    assert codes(client, uri(prompt)) == ["chatmd.mismatched_tag"]


@pytest.mark.asyncio
async def test_a_script_opened_first_takes_the_surface_of_its_prompt(client: LanguageClient,
                                                                     project: Path) -> None:
    write(project, "matcher.chatml", "let match_command ctx = true\n")
    script = await open_document(client, project / "matcher.chatml")
    assert codes(client, script) == []  # moderator surface (initializationOptions)
    assert "print" in await completion_labels(client, script, 1, 0)
    prompt = PROMPT.replace("</user>\n", '</user>\n<script language="chatml" '
                            'kind="shell_matcher" id="m" src="matcher.chatml"/>\n')
    await open_document(client, write(project, "p2.chatmd", prompt))
    names = await completion_labels(client, script, 1, 0)  # now the shell_matcher surface
    assert "print" not in names and "to_string" in names


@pytest.mark.asyncio
async def test_a_burst_of_edits_ends_on_the_last_text(client: LanguageClient,
                                                      tmp_path: Path) -> None:
    document = await open_document(client, write(tmp_path, "p.chatmd", "<user>a</user>\n"))
    texts = [f"<user>{'x' * n}</assistant>\n" for n in range(1, 8)] + ["<user>done</user>\n"]
    for version, text in enumerate(texts, start=2):
        client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=document, version=version),
            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)]))
    await settle(client, document)
    assert codes(client, document) == []
    symbols = await client.text_document_document_symbol_async(lsp.DocumentSymbolParams(
        text_document=lsp.TextDocumentIdentifier(uri=document)))
    assert symbols is not None and [s.detail for s in symbols
                                    if isinstance(s, lsp.DocumentSymbol)] == ["done"]
    await replace_text(client, document, "<user>again</assistant>\n", len(texts) + 2)
    assert codes(client, document) == ["chatmd.mismatched_tag"]


@pytest.mark.asyncio
async def test_definition_of_agents_images_and_missing_files(client: LanguageClient,
                                                             tmp_path: Path) -> None:
    write(tmp_path, "agents/helper.chatmd", "<user>help</user>")
    write(tmp_path, "pic.png", "png")
    text = ('<tool name="ask" agent="agents/helper.chatmd"/>\n'
            '<user><agent src="agents/helper.chatmd">x</agent> <img src="pic.png" local/>'
            ' <img src="pic.png"/> <doc src="gone.txt" local/></user>\n')
    document = await open_document(client, write(tmp_path, "p.chatmd", text))
    helper = uri(tmp_path / "agents/helper.chatmd")
    tool = await definition_of(client, document, 0, 30)
    assert tool is not None and tool.uri == helper
    agent = await definition_of(client, document, 1, 22)
    assert agent is not None and agent.uri == helper
    image = await definition_of(client, document, 1, 63)
    assert image is not None and image.uri == uri(tmp_path / "pic.png")
    line = text.splitlines()[1]
    assert await definition_of(client, document, 1, line.index('"pic.png"/>') + 2) is None
    assert await definition_of(client, document, 1, line.index("gone.txt") + 2) is None


@pytest.mark.asyncio
async def test_imports_through_dotdot_are_published_on_the_files_plain_uri(
        client: LanguageClient, tmp_path: Path) -> None:
    write(tmp_path, "shared/rules.chatmd", "<user>x</assistant>\n")
    document = await open_document(client, write(tmp_path, "prompts/p.chatmd",
                                                 '<import src="../shared/rules.chatmd"/>\n'))
    assert codes(client, uri(tmp_path / "shared" / "rules.chatmd")) == ["chatmd.mismatched_tag"]
    assert codes(client, document) == ["chatmd.problems_in_chain"]
    target = await definition_of(client, document, 0, 16)
    assert target is not None and target.uri == uri(tmp_path / "shared" / "rules.chatmd")
