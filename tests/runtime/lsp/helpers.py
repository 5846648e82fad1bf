"""Small helpers for driving the language server from tests."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types as lsp
from pygls.uris import from_fs_path
from pytest_lsp import LanguageClient


def uri(path: Path) -> str:
    found = from_fs_path(str(path))
    assert found is not None
    return found


def write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


async def settle(client: LanguageClient, document: str) -> None:
    """Wait until the server has handled everything sent so far (it answers in order)."""
    await client.text_document_document_symbol_async(lsp.DocumentSymbolParams(
        text_document=lsp.TextDocumentIdentifier(uri=document)))


async def open_document(client: LanguageClient, path: Path, text: str | None = None) -> str:
    document = uri(path)
    language = "chatml" if path.suffix == ".chatml" else "chatmd"
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=lsp.TextDocumentItem(
        uri=document, language_id=language, version=1,
        text=path.read_text(encoding="utf-8") if text is None else text)))
    await settle(client, document)
    return document


async def replace_text(client: LanguageClient, document: str, text: str, version: int) -> None:
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri=document, version=version),
        content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)]))
    await settle(client, document)


def codes(client: LanguageClient, document: str) -> list[str]:
    return sorted(str(d.code) for d in client.diagnostics.get(document, []))


def at(line: int, character: int) -> lsp.Position:
    return lsp.Position(line=line, character=character)


async def hover_text(client: LanguageClient, document: str, line: int, character: int
                     ) -> str | None:
    found = await client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=document), position=at(line, character)))
    if found is None:
        return None
    assert isinstance(found.contents, lsp.MarkupContent)
    return found.contents.value


async def completion_labels(client: LanguageClient, document: str, line: int,
                            character: int) -> list[str]:
    found = await client.text_document_completion_async(lsp.CompletionParams(
        text_document=lsp.TextDocumentIdentifier(uri=document), position=at(line, character)))
    assert isinstance(found, lsp.CompletionList)
    return [item.label for item in found.items]


async def definition_of(client: LanguageClient, document: str, line: int, character: int
                        ) -> lsp.Location | None:
    found = await client.text_document_definition_async(lsp.DefinitionParams(
        text_document=lsp.TextDocumentIdentifier(uri=document), position=at(line, character)))
    assert found is None or isinstance(found, lsp.Location)
    return found
