"""Document symbols: messages, tools, scripts, shell runtimes; ChatML top-level bindings.

A ``.chatmd`` buffer lists its top-level elements (messages and tool calls,
``<config>``, ``<import>``, tools by name, scripts by id with the top-level
bindings of an inline ChatML body as children, ``<shell_access>`` runtimes by
id); a ``.chatml`` buffer its top-level ``let``/``let rec``/``type``
bindings and modules (with their members).
"""

from __future__ import annotations

from lsprotocol import types as lsp

from chatcommon.sources import Span
from chatmd.ast import Element, Text
from chatml import ast
from runtime.lsp.analysis import Analysis, ScriptInfo
from runtime.lsp.vocabulary_table import MESSAGE_LIKE

__all__ = ["symbols"]

_KINDS = {"tool": lsp.SymbolKind.Function, "script": lsp.SymbolKind.Module,
          "shell_access": lsp.SymbolKind.Namespace, "config": lsp.SymbolKind.Property,
          "import": lsp.SymbolKind.File, "moderator_runtime": lsp.SymbolKind.Property}


def _summary(element: Element) -> str | None:
    for child in element.children:
        if isinstance(child, Text):
            for line in child.text.splitlines():
                if line.strip():
                    text = line.strip()
                    return text if len(text) <= 60 else text[:57] + "..."
    return None


def _name(element: Element) -> str:
    tag = element.tag
    if tag == "tool":
        return element.get("name") or element.get("mcp_server") or "tool"
    if tag in ("script", "shell_access"):
        return element.get("id") or ("main" if element.get("kind") == "moderator" else tag)
    if tag == "msg":
        return f"msg ({element.get('role') or '?'})"
    if tag == "import":
        return element.get("src") or "import"
    if tag == "tool_call":
        return f"tool_call {element.get('function_name') or ''}".rstrip()
    return tag


def _chatml_range(analysis: Analysis, script: ScriptInfo, span: Span) -> lsp.Range:
    start = script.source.position(span.start)
    end = script.source.position(span.end)
    return lsp.Range(start=analysis.index.from_line_column(*start),
                     end=analysis.index.from_line_column(*end))


def _binding(analysis: Analysis, script: ScriptInfo, name: str, name_span: Span | None,
             span: Span, kind: lsp.SymbolKind,
             children: list[lsp.DocumentSymbol] | None = None) -> lsp.DocumentSymbol:
    from chatml.typecheck.types import show_signature

    detail = None
    types = script.result.types
    if types is not None and name_span is not None:
        found = types.binder_types.get(name_span)
        detail = None if found is None else show_signature(found)
    selection = _chatml_range(analysis, script, name_span or span)
    whole = _chatml_range(analysis, script, span)
    return lsp.DocumentSymbol(name=name, kind=kind, range=whole, selection_range=selection,
                              detail=detail, children=children)


def _statements(analysis: Analysis, script: ScriptInfo,
                statements: tuple[ast.Stmt, ...]) -> list[lsp.DocumentSymbol]:
    found: list[lsp.DocumentSymbol] = []
    for stmt in statements:
        if isinstance(stmt, ast.LetStmt):
            kind = (lsp.SymbolKind.Function if isinstance(stmt.rhs, ast.Lambda)
                    else lsp.SymbolKind.Variable)
            found.append(_binding(analysis, script, stmt.name, stmt.name_span, stmt.span, kind))
        elif isinstance(stmt, ast.LetRecStmt):
            found += [_binding(analysis, script, b.name, b.name_span, b.span,
                               lsp.SymbolKind.Function) for b in stmt.bindings]
        elif isinstance(stmt, ast.ModuleStmt):
            members = _statements(analysis, script, stmt.body)
            found.append(_binding(analysis, script, stmt.name, stmt.name_span, stmt.span,
                                  lsp.SymbolKind.Module, members))
        elif isinstance(stmt, ast.TypeStmt):
            found.append(_binding(analysis, script, stmt.name, stmt.name_span, stmt.span,
                                  lsp.SymbolKind.Struct))
    return found


def _script_bindings(analysis: Analysis, script: ScriptInfo | None) -> list[lsp.DocumentSymbol]:
    if script is None or script.result.program is None:
        return []
    return _statements(analysis, script, script.result.program.statements)


def _element_symbol(analysis: Analysis, element: Element) -> lsp.DocumentSymbol:
    index = analysis.index
    children = None
    if element.tag == "script" and element.end_span is not None:
        first, last = element.span.start_position, element.end_span.end_position
        script = next((s for s in analysis.scripts if s.inline and s.path == analysis.path
                       and first <= s.source.position(0) <= last), None)
        children = _script_bindings(analysis, script) or None
    kind = _KINDS.get(element.tag, lsp.SymbolKind.String if element.tag in MESSAGE_LIKE
                      else lsp.SymbolKind.Object)
    full = element.full_span
    return lsp.DocumentSymbol(
        name=_name(element), kind=kind, detail=_summary(element),
        range=index.range(full.start, full.end),
        selection_range=index.range(element.span.start, element.span.end), children=children)


def symbols(analysis: Analysis) -> list[lsp.DocumentSymbol]:
    """The outline of the analysed buffer."""
    if analysis.language == "chatml":
        return _script_bindings(analysis, analysis.scripts[0] if analysis.scripts else None)
    return [_element_symbol(analysis, node) for node in analysis.document.nodes
            if isinstance(node, Element)]
