"""Lowering of a top-level ``<shell_access>`` element into a :class:`ShellAccessDecl`.

Spec §3.1: the root attributes (``id`` qualified by the import namespace and
checked against the runtime id syntax, ``extends``, ``cwd``, ``pipefail``) and
at most one of each of the twelve sections, in any order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chatmd.ast import Element
from chatmd.provenance import Provenance
from chatmd.shell.declare.lower_extensions import (
    lower_audit,
    lower_effect_analysis,
    lower_interceptors,
    lower_reviewers,
)
from chatmd.shell.declare.lower_policy import lower_policy
from chatmd.shell.declare.lower_sections import (
    lower_approvals,
    lower_backends,
    lower_capabilities,
    lower_environment,
    lower_limits,
    lower_resolver,
    lower_secrets,
)
from chatmd.shell.declare.lowering import Attributes, Lowered, Lowering, Path, child_elements
from chatmd.shell.declare.sections import SECTION_NAMES
from chatmd.shell.declare.typed_declarations import ShellAccessDecl
from chatmd.shell.declare.values import is_runtime_id

_SECTION_LOWERERS: dict[str, Callable[[Lowering, Element], Any]] = {
    "capabilities": lower_capabilities,
    "resolver": lower_resolver,
    "environment": lower_environment,
    "limits": lower_limits,
    "backends": lower_backends,
    "policy": lower_policy,
    "approvals": lower_approvals,
    "reviewers": lower_reviewers,
    "interceptors": lower_interceptors,
    "effect_analysis": lower_effect_analysis,
    "secrets": lower_secrets,
    "audit": lower_audit,
}
assert tuple(_SECTION_LOWERERS) == SECTION_NAMES

_SECTIONS_TEXT = "only the sections " + ", ".join(f"<{name}>" for name in SECTION_NAMES)


def lower_shell_access(element: Element, provenance: Provenance) -> Lowered[ShellAccessDecl]:
    """Validate a ``<shell_access>`` element and build its typed declaration."""
    lowering = Lowering(provenance)
    path: Path = ("shell_access",)
    attributes = Attributes(lowering, element, path, ("id", "extends", "cwd", "pipefail"))
    written_id = attributes.text("id", required=True)
    runtime_id = lowering.qualify(written_id) if written_id else None
    if runtime_id is not None and not is_runtime_id(runtime_id):
        lowering.error(attributes.span("id"), "shell.invalid_runtime_id",
                       f"invalid runtime id {runtime_id!r}: expected a letter or _ followed by "
                       "letters, digits, _ . : or -",
                       hint="runtime ids look like readonly, dev-tools or team:build")
    lowering.origin = runtime_id or "<runtime>"
    extends = attributes.ref("extends")
    cwd = attributes.setting_path("cwd")
    pipefail = attributes.setting_bool("pipefail")
    sections: dict[str, Any] = {}
    for child in child_elements(lowering, element, path, _SECTIONS_TEXT):
        lower = _SECTION_LOWERERS.get(child.tag)
        if lower is None:
            lowering.error(child.span, "shell.unknown_element",
                           f"<{child.tag}> is not a section of <shell_access>; expected one of "
                           + ", ".join(SECTION_NAMES), path,
                           hint=f"<{child.tag}> belongs inside one of the sections"
                           if child.tag in ("read", "write", "rule", "set", "pass") else None)
            continue
        if child.tag in sections:
            lowering.error(child.span, "shell.duplicate_section",
                           f"duplicate section: {child.tag} (each section may appear once in "
                           "<shell_access>)", path + (child.tag,),
                           hint=f"merge the two <{child.tag}> sections into one")
            continue
        sections[child.tag] = lower(lowering, child)
    spans = {name: attributes.span(name) for name in ("id", "extends", "cwd", "pipefail")
             if attributes.has(name)}
    declaration = ShellAccessDecl(
        id=runtime_id or "", extends=extends, cwd=cwd, pipefail=pipefail,
        provenance=provenance, span=element.span, extent=element.full_span,
        attribute_spans=spans, **sections)
    return lowering.finish(declaration if runtime_id else None)
