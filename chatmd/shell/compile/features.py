"""Feature gating (spec §6.7): what a prompt needs, and what this project supports.

Every mode, backend kind, resource limit, literal secret and hook kind a
compiled manifest uses requires a feature id. The project advertises exactly
:data:`SUPPORTED_FEATURES`; a prompt that needs anything else fails closed
with ``shell.unsupported_feature`` instead of being silently ignored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from chatmd.shell.compile.references import script_references
from chatmd.shell.compile.reporting import Where, where_of
from chatmd.shell.compile.validate import runtime_hooks
from chatmd.shell.declare.sections import RESOURCE_LIMITS
from chatmd.shell.declare.typed_declarations import ShellAccessDecl, ShellToolDecl

#: The features this implementation advertises: everything the executor in
#: ``runtime.shell`` runs -- every tool mode, the direct and bubblewrap backends,
#: external wrapper backends, OS resource limits (setrlimit in the child),
#: literal secrets, the six ChatML hook kinds, executable hooks (run through
#: their worker runtimes) and model reviewers (through the host's model
#: recipes). Seatbelt (macOS) is not executed, so declarations that need it
#: fail closed.
SUPPORTED_FEATURES: frozenset[str] = frozenset({
    "shell.tool.fixed.v1",
    "shell.tool.structured.v1",
    "shell.tool.chain.v1",
    "shell.tool.raw.v1",
    "shell.tool.script.v1",
    "shell.backend.direct.v1",
    "shell.backend.bubblewrap.v1",
    "shell.resource_limits.v1",
    "shell.secret.literal.v1",
    "shell.chatml.matcher.v1",
    "shell.chatml.reviewer.v1",
    "shell.chatml.before_interceptor.v1",
    "shell.chatml.after_interceptor.v1",
    "shell.chatml.effect_analyzer.v1",
    "shell.chatml.audit_filter.v1",
    "shell.executable_hooks.v1",
    "shell.model_reviewer.v1",
    "shell.external_backend.v1",
})

#: Every feature id the spec defines.
ALL_FEATURES: frozenset[str] = frozenset({
    "shell.tool.fixed.v1", "shell.tool.structured.v1", "shell.tool.chain.v1",
    "shell.tool.raw.v1", "shell.tool.script.v1",
    "shell.backend.seatbelt.v1", "shell.backend.bubblewrap.v1", "shell.backend.direct.v1",
    "shell.external_backend.v1", "shell.resource_limits.v1", "shell.secret.literal.v1",
    "shell.chatml.matcher.v1", "shell.chatml.reviewer.v1",
    "shell.chatml.before_interceptor.v1", "shell.chatml.after_interceptor.v1",
    "shell.chatml.effect_analyzer.v1", "shell.chatml.audit_filter.v1",
    "shell.model_reviewer.v1", "shell.executable_hooks.v1",
})

_BACKEND_FEATURES = {"seatbelt": "shell.backend.seatbelt.v1",
                     "bubblewrap": "shell.backend.bubblewrap.v1",
                     "direct": "shell.backend.direct.v1",
                     "external_backend": "shell.external_backend.v1"}


class Requirement:
    """Why a feature is needed: the first declaration that needs it."""

    __slots__ = ("feature", "reason", "span")

    def __init__(self, feature: str, reason: str, span: Where) -> None:
        self.feature = feature
        self.reason = reason
        self.span = span


def required_features(runtimes: Iterable[ShellAccessDecl], tools: Iterable[ShellToolDecl],
                      platform: str) -> Mapping[str, Requirement]:
    """Every feature the runtimes and tools need, with its first requirement."""
    found: dict[str, Requirement] = {}

    def need(feature: str, reason: str, *spans: Where | None) -> None:
        if feature not in found:
            span = next(s for s in spans if s is not None)
            found[feature] = Requirement(feature, reason, span)

    for tool in tools:
        need(f"shell.tool.{tool.mode_name}.v1", f"tool {tool.name} uses {tool.mode_name} mode",
             tool.attribute_spans.get("mode"), where_of(tool))
    for runtime in runtimes:
        where = f"runtime {runtime.id}"
        assert runtime.backends is not None and runtime.limits is not None
        for backend in runtime.backends.backends:
            if backend.matches(platform):
                label = backend.id or backend.kind
                need(_BACKEND_FEATURES[backend.kind],
                     f"{where} has the {backend.kind} backend {label} for {platform}"
                     + ("" if backend.origin == runtime.id else f" (from {backend.origin})"),
                     backend.span if backend.origin == runtime.id else None, where_of(runtime))
        for name in RESOURCE_LIMITS:
            setting = getattr(runtime.limits, name)
            if setting.state == "set":
                need("shell.resource_limits.v1", f"{where} sets the {name} limit",
                     setting.span, where_of(runtime))
        if runtime.secrets is not None:
            for source in runtime.secrets.sources:
                if source.kind == "literal":
                    need("shell.secret.literal.v1", f"{where} has a <literal> secret",
                         source.span, where_of(runtime))
        for reference in script_references(runtime):
            kind = reference.expected_kind.removeprefix("shell_")
            need(f"shell.chatml.{kind}.v1", f"{where} uses a ChatML {kind} "
                 f"({reference.script})", reference.span, where_of(runtime))
        if runtime.reviewers is not None:
            for reviewer in runtime.reviewers.reviewers:
                if reviewer.kind == "model":
                    need("shell.model_reviewer.v1", f"{where} has the model reviewer "
                         f"{reviewer.id}", reviewer.span, where_of(runtime))
        for kind, _hook, entry in runtime_hooks(runtime):
            need("shell.executable_hooks.v1", f"{where} has an executable {kind}",
                 getattr(entry, "span", None), where_of(runtime))
    return found
