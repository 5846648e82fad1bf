"""Desugaring of legacy ``<tool name command/>`` declarations (spec §5.3).

A legacy tool becomes a fixed shell tool with a compact command bound to the
synthetic runtime ``legacy:custom`` (rationale optional, arguments optional).
That runtime is synthesised once, from the first legacy tool: the defaults
with a direct, unconfined backend, every power, ``/`` as read and write root
and the raw host environment. Its policy stays ``ask`` with UI approvals.
"""

from __future__ import annotations

from chatmd.shell.declare.sections import Backend, Backends, Capabilities, Environment, Root
from chatmd.shell.declare.settings import Setting
from chatmd.shell.declare.typed_declarations import (
    CompactCommand,
    FixedMode,
    LegacyToolDecl,
    ShellAccessDecl,
    ShellToolDecl,
)
from chatmd.shell.declare.values import PathExpr

LEGACY_RUNTIME_ID = "legacy:custom"


def desugar_legacy_tool(tool: LegacyToolDecl) -> ShellToolDecl:
    """The fixed shell tool a legacy declaration stands for."""
    return ShellToolDecl(
        name=tool.name, mode=FixedMode(CompactCommand(tool.command.strip())),
        runtime=LEGACY_RUNTIME_ID, description=tool.description, rationale="optional",
        legacy=True, provenance=tool.provenance, span=tool.span, extent=tool.extent)


def legacy_runtime(first: LegacyToolDecl) -> ShellAccessDecl:
    """The declared (unresolved) ``legacy:custom`` runtime, sourced at ``first``."""
    origin = LEGACY_RUNTIME_ID

    def on(value: bool) -> Setting[bool]:
        return Setting.of(value, origin=origin)

    everything = (Root(PathExpr(None, "/"), origin=origin),)
    return ShellAccessDecl(
        id=LEGACY_RUNTIME_ID,
        capabilities=Capabilities(sandbox=Setting.of("direct_unsafe", origin=origin),
                                  network=on(True), child_processes=on(True),
                                  arbitrary_code=on(True), privilege_change=on(True),
                                  reads=everything, writes=everything),
        environment=Environment(inherit=Setting.of("raw", origin=origin)),
        backends=Backends(merge="replace", origin=origin,
                          backends=(Backend("direct", "legacy-direct", "any", origin=origin),)),
        provenance=first.provenance, span=first.span, extent=first.extent)
