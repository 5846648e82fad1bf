"""Typed top-level shell declarations: runtimes, shell tools, legacy tools, scripts, binding.

These are the output of lowering (phase 1, spec §0) and the input of the
compiler (phase 2). Ids and references are already qualified with the import
namespace of the declaring file (spec §2, ``ref``).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from chatcommon.sources import Span
from chatmd.provenance import Provenance
from chatmd.shell.declare.sections import (
    Approvals,
    Audit,
    Backends,
    Capabilities,
    EffectAnalysis,
    Environment,
    Interceptors,
    Limits,
    Policy,
    Resolver,
    Reviewers,
    Secrets,
)
from chatmd.shell.declare.settings import Setting, meta, span_field
from chatmd.shell.declare.values import PathExpr


@attrs.frozen
class ShellAccessDecl:
    """A ``<shell_access>`` runtime, declared (sections None when absent) or resolved.

    ``requested_profile``/``resolved_profile`` are set on a resolved runtime
    that descends from a built-in profile; ``extends`` is None once resolved.
    """

    id: str
    extends: str | None = None
    cwd: Setting[PathExpr] = Setting.inherit()
    pipefail: Setting[bool] = Setting.inherit()
    capabilities: Capabilities | None = None
    resolver: Resolver | None = None
    environment: Environment | None = None
    limits: Limits | None = None
    backends: Backends | None = None
    policy: Policy | None = None
    approvals: Approvals | None = None
    reviewers: Reviewers | None = None
    interceptors: Interceptors | None = None
    effect_analysis: EffectAnalysis | None = None
    secrets: Secrets | None = None
    audit: Audit | None = None
    requested_profile: str | None = None
    resolved_profile: str | None = None
    provenance: Provenance | None = meta(None)
    span: Span | None = span_field()
    extent: Span | None = span_field()
    attribute_spans: Mapping[str, Span] = meta(attrs.Factory(dict))


# --------------------------------------------------------------------- tools


@attrs.frozen
class LiteralArg:
    TAG = "literal"
    value: str
    span: Span | None = span_field()


@attrs.frozen
class SecretArg:
    """``prefix`` + the value of ``env`` from the runtime's effective environment."""

    TAG = "secret"
    env: str
    prefix: str = ""
    span: Span | None = span_field()


@attrs.frozen
class PathArg:
    """A path argument: ``base`` (a path variable) joined with ``path``, or ``path`` alone."""

    TAG = "path"
    path: str
    base: str | None = None
    span: Span | None = span_field()


FixedArg = LiteralArg | SecretArg | PathArg


@attrs.frozen
class CompactCommand:
    """A fixed command given as one command line (``command="rg --json"``)."""

    TAG = "compact"
    text: str


@attrs.frozen
class ArgvCommand:
    """A fixed command given as ``program`` or ``executable_ref`` plus fixed arguments."""

    TAG = "argv"
    program: str | None = None
    executable_ref: str | None = None
    arguments: tuple[FixedArg, ...] = ()
    span: Span | None = span_field()


@attrs.frozen
class ArgumentsSpec:
    """What the model may pass as ``arguments`` to a fixed tool."""

    mode: str = "optional"
    min_count: int | None = None
    max_count: int | None = None
    max_item_bytes: int | None = None
    span: Span | None = span_field()


@attrs.frozen
class FixedMode:
    TAG = "fixed"
    command: CompactCommand | ArgvCommand
    arguments: ArgumentsSpec = ArgumentsSpec()


@attrs.frozen
class StructuredMode:
    TAG = "structured"


@attrs.frozen
class ChainMode:
    TAG = "chain"


@attrs.frozen
class RawMode:
    TAG = "raw"
    executable: PathExpr
    arguments_before_script: tuple[str, ...] = ("-c",)


@attrs.frozen
class ScriptMode:
    TAG = "script"
    script: PathExpr
    interpreter: PathExpr | None = None
    executable: bool = True
    fixed_arguments: tuple[str, ...] = ()
    verification: str = "sha256"
    max_source_bytes: int = 1048576


ToolMode = FixedMode | StructuredMode | ChainMode | RawMode | ScriptMode


@attrs.frozen
class ShellToolDecl:
    """A model-visible shell tool bound to a runtime (``runtime``: qualified id).

    ``legacy`` marks a desugared ``<tool name command/>`` (spec §5.3).
    """

    name: str
    mode: ToolMode
    runtime: str
    description: str | None = None
    stdin: str = "none"
    rationale: str = "none"
    result: str = "combined"
    stream: str = "finalized"
    nonzero: str = "result"
    legacy: bool = False
    provenance: Provenance | None = meta(None)
    span: Span | None = span_field()
    extent: Span | None = span_field()
    attribute_spans: Mapping[str, Span] = meta(attrs.Factory(dict))

    @property
    def mode_name(self) -> str:
        return self.mode.TAG


@attrs.frozen
class LegacyToolDecl:
    """A legacy ``<tool name command/>`` (no ``type``, no ``runtime``), before desugaring."""

    name: str
    command: str
    description: str | None = None
    provenance: Provenance | None = meta(None)
    span: Span | None = span_field()
    extent: Span | None = span_field()


@attrs.frozen
class ModeratorRuntimeDecl:
    """``<moderator_runtime shell_runtime=REF/>``; ``runtime`` is qualified."""

    runtime: str
    provenance: Provenance | None = meta(None)
    span: Span | None = span_field()


#: Script kinds that shell runtimes reference, with the entrypoint each one runs.
SHELL_SCRIPT_ENTRYPOINTS: Mapping[str, str] = {
    "shell_matcher": "match_command",
    "shell_reviewer": "review",
    "shell_before_interceptor": "before",
    "shell_after_interceptor": "after",
    "shell_effect_analyzer": "analyze",
    "shell_audit_filter": "filter",
}


@attrs.frozen
class ShellScript:
    """What the compiler needs of a top-level ``<script>`` (id already qualified)."""

    id: str
    kind: str
    source_sha256: str
    limits: Mapping[str, float | int] = attrs.field(factory=dict)
    provenance: Provenance | None = meta(None)
    span: Span | None = span_field()
