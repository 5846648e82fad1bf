"""Checking the ChatML ``<script>``s of a ChatMD prompt (``chatmdc check``).

It needs both languages, so it lives above them. :func:`check_prompt_scripts`
is a prompt check (a :data:`chatmd.frontend.PromptCheck`, run by
:mod:`runtime.prompt_checks`): for every ChatML script of the loaded prompt it
parses and typechecks the source against the surface of the script's kind
(``moderator`` -> the moderator surface, each shell kind -> its own surface),
then checks the host contract (:mod:`chatml.typecheck.contracts`). Diagnostics are
positioned in the file that holds the script: inside the prompt for an inline
script, in the ``.chatml`` file for a ``src`` script (with a note pointing at
the declaring ``<script>``).

Importing this module is cheap: the checker is imported on the first prompt
that has a ChatML script.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from chatcommon.diagnostics import Diagnostic, Related
from chatmd.ast import Element
from chatmd.frontend import script_source_file
from chatmd.ir import Prompt, Script, SrcSource

if TYPE_CHECKING:
    from chatml.check import CheckResult

__all__ = ["check_prompt_scripts"]


def _matcher_functions(prompt: Prompt, script_id: str) -> list[str]:
    """The ``function`` of every ``<chatml_match>`` that names this script."""
    names: list[str] = []
    for runtime in prompt.shell_runtimes:
        if runtime.element is None:
            continue  # synthetic (legacy:custom): no matcher
        for element in _elements(runtime.element):
            if element.tag != "chatml_match":
                continue
            reference = element.get("script")
            if reference and (reference == script_id or script_id.endswith("." + reference)):
                function = element.get("function") or "match_command"
                if function not in names:
                    names.append(function)
    return names


def _elements(root: Element) -> Iterator[Element]:
    stack = [root]
    while stack:
        element = stack.pop()
        yield element
        stack.extend(child for child in element.children if isinstance(child, Element))


def _declared_at(script: Script) -> tuple[Related, ...]:
    provenance = script.provenance
    if provenance is None or not provenance.file:
        return ()
    return (Related(f"script '{script.id}' is declared here", provenance.file,
                    provenance.line, provenance.column),)


def check_prompt_scripts(prompt: Prompt,
                         results: dict[str, CheckResult] | None = None) -> list[Diagnostic]:
    """Every diagnostic of every ChatML script of ``prompt``.

    ``results`` (for editors) receives each checked script's
    :class:`chatml.check.CheckResult` by script id.
    """
    if not any(script.language == "chatml" for script in prompt.scripts):
        return []
    from chatml.check import check_source
    from chatml.surfaces import SCRIPT_KIND_SURFACE
    from chatml.typecheck.contracts import check_contract

    found: list[Diagnostic] = []
    for script in prompt.scripts:
        surface = SCRIPT_KIND_SURFACE.get(script.kind)
        if surface is None or script.language != "chatml":
            continue  # the declaration layer reports unknown kinds and languages
        source = script_source_file(script)
        result = check_source(source.text, source=source, surface=surface)
        if results is not None:
            results[script.id] = result
        diagnostics: list[Diagnostic] = list(result.diagnostics)
        if result.types is not None and result.ok:
            entries = (_matcher_functions(prompt, script.id)
                       if script.kind == "shell_matcher" else None)
            diagnostics += check_contract(script.kind, result.types,
                                          source, entries)
        related = _declared_at(script) if isinstance(script.source, SrcSource) else ()
        found.extend(_with_related(diagnostics, related))
    return found


def _with_related(diagnostics: Iterable[Diagnostic],
                  related: tuple[Related, ...]) -> Iterator[Diagnostic]:
    for diagnostic in diagnostics:
        yield diagnostic.with_related(*related) if related else diagnostic
