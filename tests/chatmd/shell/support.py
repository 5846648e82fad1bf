"""Standalone drivers for the shell tests: parse a document and lower/compile its declarations.

These exercise the :mod:`chatmd.shell` library API on its own, without the
frontend: they route top-level elements themselves (``<shell_access>``, shell
tools, legacy tools, ``<moderator_runtime>``, and a minimal reading of shell
``<script>`` elements). Tests of the integrated pipeline use
:mod:`chatmd.frontend` instead (test_integration.py, test_conformance.py).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import attrs

from chatcommon.diagnostics import Diagnostic
from chatcommon.sources import SourceFile
from chatmd.ast import Element, Text
from chatmd.parser import parse
from chatmd.provenance import Provenance
from chatmd.shell import (
    CompiledShell,
    LegacyToolDecl,
    ShellScript,
    compile_runtimes,
    lower_moderator_runtime,
    lower_shell_access,
    lower_shell_tool,
)


@attrs.define
class Declarations:
    runtimes: list[Any] = attrs.Factory(list)
    tools: list[Any] = attrs.Factory(list)
    legacy_tools: list[LegacyToolDecl] = attrs.Factory(list)
    scripts: list[ShellScript] = attrs.Factory(list)
    moderator: Any = None
    diagnostics: list[Diagnostic] = attrs.Factory(list)


def provenance_for(source: SourceFile, namespace: str | None = None,
                   source_dir: str = "/prompts", sha256: str | None = None) -> Provenance:
    digest = sha256 if sha256 is not None else hashlib.sha256(
        source.text.encode("utf-8")).hexdigest()
    return Provenance(source.name, 1, 1, source_dir, "/prompts", namespace, digest)


def _script(element: Element, provenance: Provenance) -> ShellScript | None:
    kind = element.get("kind") or ""
    ident = element.get("id")
    if ident is None:
        return None
    body = "".join(child.text for child in element.children if isinstance(child, Text))
    qualified = ident if ":" in ident or not provenance.namespace else (
        f"{provenance.namespace}:{ident}")
    return ShellScript(qualified, kind, hashlib.sha256(body.encode()).hexdigest(),
                       provenance=provenance, span=element.span)


def declarations_of(text: str, name: str = "prompt.chatmd", *, namespace: str | None = None,
                    sha256: str | None = None) -> Declarations:
    source = SourceFile(name, text)
    result = parse(source)
    found = Declarations(diagnostics=list(result.diagnostics))
    provenance = provenance_for(source, namespace, sha256=sha256)
    for node in result.document.nodes:
        if not isinstance(node, Element):
            continue
        if node.tag == "shell_access":
            lowered: Any = lower_shell_access(node, provenance)
            target = found.runtimes
        elif node.tag == "tool" and (node.get("type") == "shell" or node.has("runtime")):
            lowered = lower_shell_tool(node, provenance)
            target = found.tools
        elif node.tag == "tool" and node.has("command"):
            found.legacy_tools.append(LegacyToolDecl(
                (node.get("name") or "").strip(), (node.get("command") or "").strip(),
                node.get("description"), provenance=provenance, span=node.span,
                extent=node.full_span))
            continue
        elif node.tag == "moderator_runtime":
            lowered = lower_moderator_runtime(node, provenance)
            found.diagnostics += lowered.diagnostics
            found.moderator = lowered.value
            continue
        elif node.tag == "script":
            script = _script(node, provenance)
            if script is not None:
                found.scripts.append(script)
            continue
        else:
            continue
        found.diagnostics += lowered.diagnostics
        if lowered.value is not None:
            target.append(lowered.value)
    return found


def compile_text(text: str, name: str = "prompt.chatmd", *, platform: str = "linux",
                 features: Any = None, sha256: str | None = None) -> CompiledShell:
    from chatmd.shell.compile.features import ALL_FEATURES

    found = declarations_of(text, name, sha256=sha256)
    assert not found.diagnostics, [str(d) for d in found.diagnostics]
    return compile_runtimes(found.runtimes, found.tools, legacy_tools=found.legacy_tools,
                            scripts=found.scripts, moderator=found.moderator,
                            platform=platform,
                            features=ALL_FEATURES if features is None else features)


def diagnostics_of(text: str, name: str = "prompt.chatmd", **options: Any) -> list[Diagnostic]:
    """Declaration diagnostics, or (when there are none) compile diagnostics."""
    found = declarations_of(text, name)
    if found.diagnostics:
        return found.diagnostics
    from chatmd.shell.compile.features import ALL_FEATURES

    compiled = compile_runtimes(found.runtimes, found.tools, legacy_tools=found.legacy_tools,
                                scripts=found.scripts, moderator=found.moderator,
                                platform=options.get("platform", "linux"),
                                features=options.get("features", ALL_FEATURES))
    return list(compiled.diagnostics)


def codes(text: str, **options: Any) -> list[str]:
    return [d.code for d in diagnostics_of(text, **options)]


TESTDATA = Path(__file__).resolve().parents[1] / "testdata" / "shell"
