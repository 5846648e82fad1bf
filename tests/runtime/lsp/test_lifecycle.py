"""``chatmdc lsp`` as a process: pygls's own client starts it, and shutdown + exit end it (status 0)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

from tests.runtime.lsp.helpers import uri, write


@pytest.mark.asyncio
async def test_initialize_open_shutdown_exit(tmp_path: Path) -> None:
    client = LanguageClient("test", "1")
    published: list[lsp.PublishDiagnosticsParams] = []

    @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(params: lsp.PublishDiagnosticsParams) -> None:
        published.append(params)

    await client.start_io(sys.executable, "-m", "runtime.commands.chatmdc", "lsp")
    server = client._server
    assert server is not None
    result = await asyncio.wait_for(client.initialize_async(lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities())), 60)
    capabilities = result.capabilities
    assert capabilities.hover_provider and capabilities.definition_provider
    assert capabilities.document_symbol_provider and capabilities.completion_provider
    assert result.server_info is not None and result.server_info.name == "chatmdc"
    client.initialized(lsp.InitializedParams())
    path = write(tmp_path, "p.chatmd", "<user>x</assistant>")
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=lsp.TextDocumentItem(
        uri=uri(path), language_id="chatmd", version=1, text=path.read_text())))
    await asyncio.wait_for(client.text_document_document_symbol_async(lsp.DocumentSymbolParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri(path)))), 60)
    assert [d.code for p in published for d in p.diagnostics] == ["chatmd.mismatched_tag"]
    await asyncio.wait_for(client.shutdown_async(None), 60)
    client.exit(None)
    assert await asyncio.wait_for(server.wait(), 60) == 0
    await client.stop()
