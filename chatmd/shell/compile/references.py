"""Script references of shell runtimes (spec §6.2 step 7).

A ``<chatml_match>``, a ChatML reviewer, interceptors (by phase), ChatML
analyzers and a ChatML audit filter name ``<script>`` declarations of a
specific kind. A missing script is ``shell.unknown_script``; one of another
kind is ``shell.script_kind_mismatch``. The references of every resolved
runtime also give the ``chatml_extension`` dependency edges and the set of
scripts that enter the manifest.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import attrs

from chatcommon.diagnostics import Diagnostic
from chatcommon.sources import Span
from chatmd.shell.compile.reporting import compile_diagnostic, location, where_of
from chatmd.shell.compile.validate import runtime_matchers
from chatmd.shell.declare.matchers import ChatmlMatch
from chatmd.shell.declare.typed_declarations import ShellAccessDecl, ShellScript


@attrs.frozen
class ScriptReference:
    script: str
    expected_kind: str
    what: str
    entry: object = attrs.field(eq=False)
    span: Span | None = attrs.field(eq=False)


def script_references(runtime: ShellAccessDecl) -> Iterator[ScriptReference]:
    """Every script reference of ``runtime`` in declaration order."""
    for matcher, entry in runtime_matchers(runtime):
        if isinstance(matcher, ChatmlMatch):
            yield ScriptReference(matcher.script, "shell_matcher", "<chatml_match>", entry,
                                  matcher.span)
    if runtime.reviewers is not None:
        for reviewer in runtime.reviewers.reviewers:
            if reviewer.script is not None:
                yield ScriptReference(reviewer.script, "shell_reviewer",
                                      f"reviewer {reviewer.id}", reviewer,
                                      reviewer.script_span or reviewer.span)
    if runtime.interceptors is not None:
        for interceptor in runtime.interceptors.interceptors:
            if interceptor.script is not None:
                yield ScriptReference(interceptor.script, f"shell_{interceptor.phase}_interceptor",
                                      f"interceptor {interceptor.id}", interceptor,
                                      interceptor.script_span or interceptor.span)
    if runtime.effect_analysis is not None:
        for analyzer in runtime.effect_analysis.analyzers:
            if analyzer.script is not None:
                yield ScriptReference(analyzer.script, "shell_effect_analyzer",
                                      f"analyzer {analyzer.id}", analyzer,
                                      analyzer.script_span or analyzer.span)
    if runtime.audit is not None and runtime.audit.filter is not None:
        audit_filter = runtime.audit.filter
        if audit_filter.script is not None:
            yield ScriptReference(audit_filter.script, "shell_audit_filter", "audit filter",
                                  runtime.audit, audit_filter.script_span or audit_filter.span)


def check_script_references(runtime: ShellAccessDecl,
                            scripts: Mapping[str, ShellScript]) -> list[Diagnostic]:
    """Diagnostics for the references ``runtime`` declares itself (not inherited ones)."""
    problems: list[Diagnostic] = []
    for reference in script_references(runtime):
        if getattr(reference.entry, "origin", None) != runtime.id:
            continue
        span = location(reference.span, where_of(runtime))
        where = ("runtime", runtime.id, "scripts", reference.script)
        script = scripts.get(reference.script)
        if script is None:
            problems.append(compile_diagnostic(
                span, "shell.unknown_script",
                f"unknown script {reference.script!r} for the {reference.what} of runtime "
                f"{runtime.id}", where,
                hint=f'declare <script language="chatml" kind="{reference.expected_kind}" '
                f'id="{reference.script}">...</script>'))
        elif script.kind != reference.expected_kind:
            problems.append(compile_diagnostic(
                span, "shell.script_kind_mismatch",
                f"script {reference.script} has kind {script.kind}, expected "
                f"{reference.expected_kind} (used by the {reference.what} of runtime "
                f"{runtime.id})", where))
    return problems
