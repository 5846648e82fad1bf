"""Lowering of the extension sections: reviewers, interceptors, effect analysis, audit.

Spec §3.9-§3.11 and §3.13. These sections name ChatML hook scripts and
executable hooks (run through a worker runtime); references are qualified
with the declaring file's namespace here and resolved by the compiler.
"""

from __future__ import annotations

from chatmd.ast import Element
from chatmd.shell.declare.lower_policy import lower_matcher_slot
from chatmd.shell.declare.lowering import Attributes, Lowering, Path, child_elements, expect_empty
from chatmd.shell.declare.matchers import FAILURE_MODES, Matcher
from chatmd.shell.declare.sections import (
    Analyzer,
    Audit,
    AuditFilter,
    EffectAnalysis,
    Hook,
    Interceptor,
    Interceptors,
    Reviewer,
    Reviewers,
)

MERGE = ("append", "replace")
HOOK_ATTRIBUTES = ("executable", "sha256", "runtime", "protocol", "timeout", "max_input",
                   "max_output")
LIFECYCLES = ("invocation", "session", "runtime")
REVIEWER_KINDS = ("ui", "chatml", "model", "executable")
AUDIT_FORMATS = ("none", "stderr", "jsonl", "session")


def _hook(attributes: Attributes) -> Hook | None:
    """The hook attributes of an executable extension (``executable`` and ``runtime`` required)."""
    executable = attributes.path_expr("executable", required=True)
    runtime = attributes.ref("runtime", required=True)
    sha256 = attributes.sha256()
    protocol = attributes.enum("protocol", ("shell-hook-json-v1",), default="shell-hook-json-v1")
    timeout = attributes.duration("timeout")
    max_input = attributes.byte_size("max_input", default=1024 * 1024)
    max_output = attributes.byte_size("max_output", default=256 * 1024)
    if executable is None or runtime is None:
        return None
    return Hook(executable, runtime, sha256, protocol or "shell-hook-json-v1", timeout,
                max_input if max_input is not None else 1024 * 1024,
                max_output if max_output is not None else 256 * 1024,
                runtime_span=attributes.span("runtime"))


def _script_or_hook(lowering: Lowering, element: Element, path: Path, attributes: Attributes
                    ) -> tuple[bool, str | None, Hook | None]:
    """Exactly one of ``script`` or ``executable`` (spec: ``shell.invalid_extension``)."""
    has_script = attributes.present("script")
    has_executable = attributes.present("executable")
    if has_script == has_executable:
        found = "both" if has_script else "neither"
        lowering.error(element.span, "shell.invalid_extension",
                       f"<{element.tag}> needs exactly one of script (a ChatML hook) or "
                       f"executable (an executable hook), found {found}", path)
        return False, None, None
    if has_script:
        return True, attributes.ref("script", required=True), None
    return True, None, _hook(attributes)


# ------------------------------------------------------------------- reviewers

def _reviewer(lowering: Lowering, element: Element, path: Path) -> Reviewer | None:
    attributes = Attributes(lowering, element, path,
                            ("id", "kind", "script", "lifecycle", "failure", "agent", "model")
                            + HOOK_ATTRIBUTES)
    ident = attributes.text("id", required=True)
    kind = attributes.enum("kind", REVIEWER_KINDS, required=True)
    expect_empty(lowering, element, path)
    if ident is None or kind is None:
        return None
    span, origin = element.span, lowering.origin
    failure = attributes.enum("failure", FAILURE_MODES, default="deny")
    if kind == "ui":
        return Reviewer(ident, kind, span=span, origin=origin)
    if kind == "chatml":
        script = attributes.ref("script", required=True)
        lifecycle = attributes.enum("lifecycle", LIFECYCLES, default="session")
        if script is None:
            return None
        return Reviewer(ident, kind, failure, script=script, lifecycle=lifecycle, span=span,
                        script_span=attributes.span("script"), origin=origin)
    if kind == "model":
        agent = attributes.text("agent", required=True)
        model = attributes.string("model")
        if agent is None:
            return None
        return Reviewer(ident, kind, failure, agent=agent, model=model, span=span, origin=origin)
    hook = _hook(attributes)
    if hook is None:
        return None
    return Reviewer(ident, kind, failure, hook=hook, span=span, origin=origin)


def lower_reviewers(lowering: Lowering, element: Element) -> Reviewers:
    path: Path = ("reviewers",)
    attributes = Attributes(lowering, element, path, ("strategy", "merge"))
    strategy = attributes.enum("strategy", ("first_terminal",), default="first_terminal")
    attributes.enum("merge", MERGE)
    reviewers: list[Reviewer] = []
    for child in child_elements(lowering, element, path, "only <reviewer> elements"):
        if child.tag == "reviewer":
            reviewer = _reviewer(lowering, child, path + ("reviewer",))
            if reviewer is not None:
                reviewers.append(reviewer)
        else:
            lowering.error(child.span, "shell.unknown_element",
                           f"<{child.tag}> is not allowed inside <reviewers>; expected "
                           "<reviewer>", path)
    return Reviewers(strategy or "first_terminal", tuple(reviewers), span=element.span,
                     origin=lowering.origin)


# ---------------------------------------------------------------- interceptors

def _match_block(lowering: Lowering, element: Element, path: Path) -> tuple[bool, Matcher | None]:
    """The optional single ``<match>`` child of an interceptor: (ok, matcher)."""
    blocks = []
    for child in child_elements(lowering, element, path, "at most one <match> element"):
        if child.tag == "match":
            blocks.append(child)
        else:
            lowering.error(child.span, "shell.unknown_element",
                           f"<{child.tag}> is not allowed inside <interceptor>; expected "
                           "<match>", path)
    if not blocks:
        return True, None
    if len(blocks) > 1:
        lowering.error(blocks[1].span, "shell.matcher_arity",
                       "<interceptor> may contain at most one <match>", path)
        return False, None
    block = blocks[0]
    match_path = path + ("match",)
    Attributes(lowering, block, match_path, ())
    matcher = lower_matcher_slot(lowering, block, match_path, "shell.matcher_arity")
    return matcher is not None, matcher


def _interceptor(lowering: Lowering, element: Element, path: Path) -> Interceptor | None:
    attributes = Attributes(lowering, element, path,
                            ("id", "phase", "script", "lifecycle", "failure") + HOOK_ATTRIBUTES)
    ident = attributes.text("id", required=True)
    phase = attributes.enum("phase", ("before", "after"), required=True)
    failure = attributes.enum("failure", FAILURE_MODES, default="deny") or "deny"
    ok, script, hook = _script_or_hook(lowering, element, path, attributes)
    lifecycle = attributes.enum("lifecycle", LIFECYCLES, default="session") if script else None
    match_ok, matcher = _match_block(lowering, element, path)
    if phase == "after" and matcher is not None:
        lowering.error(element.span, "shell.after_interceptor_match",
                       "an after-interceptor cannot have a <match>: it sees every result",
                       path, hint='remove <match>, or use phase="before"')
        return None
    if ident is None or phase is None or not ok or not match_ok or (script is None
                                                                      and hook is None):
        return None
    return Interceptor(ident, phase, failure, script, lifecycle, hook, matcher,
                       span=element.span, script_span=attributes.span("script"),
                       origin=lowering.origin)


def lower_interceptors(lowering: Lowering, element: Element) -> Interceptors:
    path: Path = ("interceptors",)
    attributes = Attributes(lowering, element, path, ("merge",))
    attributes.enum("merge", MERGE)
    interceptors: list[Interceptor] = []
    for child in child_elements(lowering, element, path, "only <interceptor> elements"):
        if child.tag == "interceptor":
            interceptor = _interceptor(lowering, child, path + ("interceptor",))
            if interceptor is not None:
                interceptors.append(interceptor)
        else:
            lowering.error(child.span, "shell.unknown_element",
                           f"<{child.tag}> is not allowed inside <interceptors>; expected "
                           "<interceptor>", path)
    return Interceptors(tuple(interceptors), span=element.span, origin=lowering.origin)


# ------------------------------------------------------------- effect analysis

def _analyzer(lowering: Lowering, element: Element, path: Path) -> Analyzer | None:
    attributes = Attributes(lowering, element, path,
                            ("id", "kind", "script", "lifecycle", "replace", "failure")
                            + HOOK_ATTRIBUTES)
    ident = attributes.text("id", required=True)
    kind = attributes.enum("kind", ("chatml", "executable"), default="chatml")
    replace = attributes.boolean("replace", False)
    failure = attributes.enum("failure", FAILURE_MODES, default="unknown") or "unknown"
    expect_empty(lowering, element, path)
    if kind is None:
        return None
    other = "executable" if kind == "chatml" else "script"
    if attributes.present(other):
        lowering.error(attributes.span(other), "shell.invalid_extension",
                       f"an analyzer of kind {kind} does not take {other}",
                       path, hint='use kind="executable" with executable=..., or '
                       'kind="chatml" with script=...')
        return None
    script = hook = lifecycle = None
    if kind == "chatml":
        script = attributes.ref("script", required=True)
        lifecycle = attributes.enum("lifecycle", LIFECYCLES, default="invocation")
        if script is None:
            return None
    else:
        hook = _hook(attributes)
        if hook is None:
            return None
    if ident is None:
        return None
    return Analyzer(ident, kind, failure, replace, script, lifecycle, hook, span=element.span,
                    script_span=attributes.span("script"), origin=lowering.origin)


def lower_effect_analysis(lowering: Lowering, element: Element) -> EffectAnalysis:
    path: Path = ("effect_analysis",)
    attributes = Attributes(lowering, element, path, ("merge",))
    attributes.enum("merge", MERGE)
    analyzers: list[Analyzer] = []
    for child in child_elements(lowering, element, path, "only <analyzer> elements"):
        if child.tag == "analyzer":
            analyzer = _analyzer(lowering, child, path + ("analyzer",))
            if analyzer is not None:
                analyzers.append(analyzer)
        else:
            lowering.error(child.span, "shell.unknown_element",
                           f"<{child.tag}> is not allowed inside <effect_analysis>; expected "
                           "<analyzer>", path)
    return EffectAnalysis(tuple(analyzers), span=element.span, origin=lowering.origin)


# ----------------------------------------------------------------------- audit

def _audit_filter(lowering: Lowering, element: Element, path: Path) -> AuditFilter | None:
    attributes = Attributes(lowering, element, path, ("script", "lifecycle") + HOOK_ATTRIBUTES)
    ok, script, hook = _script_or_hook(lowering, element, path, attributes)
    lifecycle = attributes.enum("lifecycle", LIFECYCLES, default="session") if script else None
    expect_empty(lowering, element, path)
    if not ok or (script is None and hook is None):
        return None
    return AuditFilter(script, lifecycle, hook, span=element.span,
                       script_span=attributes.span("script"))


def lower_audit(lowering: Lowering, element: Element) -> Audit | None:
    path: Path = ("audit",)
    attributes = Attributes(lowering, element, path, ("format", "path", "content", "failure"))
    audit_format = attributes.enum("format", AUDIT_FORMATS, required=True)
    audit_path = attributes.path_expr("path")
    content = attributes.enum("content", ("metadata", "redacted", "full"), default="redacted")
    failure = attributes.enum("failure", ("continue", "deny_start", "terminate"),
                              default="continue")
    if audit_format == "jsonl" and not attributes.present("path"):
        lowering.error(element.span, "shell.audit_path_required",
                       'format="jsonl" needs a path for the audit file', path + ("path",),
                       hint='add path="${session_dir}/shell-audit.jsonl"')
    filters: list[AuditFilter | None] = []
    for child in child_elements(lowering, element, path, "at most one <filter> element"):
        if child.tag != "filter":
            lowering.error(child.span, "shell.unknown_element",
                           f"<{child.tag}> is not allowed inside <audit>; expected <filter>",
                           path)
        elif filters:
            lowering.error(child.span, "shell.duplicate_section", "duplicate section: filter",
                           path + ("filter",), hint="an <audit> has at most one <filter>")
        else:
            filters.append(_audit_filter(lowering, child, path + ("filter",)))
    if audit_format is None:
        return None
    return Audit(audit_format, audit_path, content or "redacted", failure or "continue",
                 filters[0] if filters else None, span=element.span, origin=lowering.origin)
