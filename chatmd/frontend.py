"""The ChatMD library API: load a prompt into the IR, or check it and get every diagnostic.

Pipeline (data flows one way)::

    text → parse (chatmd.parser) → expand imports (chatmd.imports)
         → declarations (chatmd.declarations) → Prompt (chatmd.ir) → extra checks

- :func:`load_prompt` / :func:`load_prompt_text` run the same pipeline and
  checks and return the :class:`~chatmd.ir.Prompt`, or raise
  :class:`~chatcommon.diagnostics.DiagnosticError` carrying *all* diagnostics
  (warnings alone never raise).
- :func:`check_prompt` / :func:`check_prompt_text` never raise for bad input:
  they return a :class:`CheckResult` with the prompt (None when any error was
  found), every diagnostic, and the source files read (for rendering).
- Checks are callables ``(Prompt) -> Iterable[Diagnostic]`` run after loading.
  By default they are ChatMD's own (:func:`chatmd_checks`: tool construction and
  the shell layer), imported on first use so a check costs nothing until it
  runs; a caller passes ``checks=`` to run others. Checks that need ChatML too
  (the script checks ``chatmdc check`` runs) live above both languages, in
  :mod:`runtime.prompt_checks`. Checks run on the best-effort prompt, so their
  errors are reported together with declaration errors.
- A root file with parse errors is still lowered: every top-level element
  that no parse error touched (:func:`chatmd.recovery.intact_part`) goes
  through imports and declarations, so its independent errors are reported
  too; the checks run on that partial prompt only when the dropped elements
  were ones nothing refers to (messages, ``<config>``), so nothing cascades
  from the broken region. Such a prompt is never returned (it has errors).

Diagnostics found inside imported files carry the import chain as related
notes ("imported from a.chatmd:3:1"), nearest importer first.
``confine=True`` pins the prompt: imports and script ``src`` must stay beneath
the root prompt folder after symlinks and ``..`` are resolved.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence

import attrs

from chatcommon.allocation import gc_paused
from chatcommon.diagnostics import Diagnostic, DiagnosticError
from chatcommon.sources import SourceFile, SourceRegistry
from chatmd.ast import Document
from chatmd.declarations import lower_prompt
from chatmd.imports import Chain, expand_imports
from chatmd.ir import InlineSource, Prompt, Script
from chatmd.loading import UnreadableFile, read_source, strip_bom
from chatmd.parser import parse

__all__ = [
    "CheckResult",
    "PromptCheck",
    "check_prompt",
    "check_prompt_text",
    "chatmd_checks",
    "load_prompt",
    "load_prompt_text",
    "script_source_file",
]

PromptCheck = Callable[[Prompt], Iterable[Diagnostic]]


def chatmd_checks() -> list[PromptCheck]:
    """The checks :func:`check_prompt` runs by default: tool construction, then the shell layer.

    Imported on the first check, so loading a prompt does not pay for them.
    """
    from chatmd.declarations.shell_validation import check_shell
    from chatmd.tools.check import check_tools

    return [check_tools, check_shell]


@attrs.frozen
class CheckResult:
    """What :func:`check_prompt` found.

    ``prompt`` is None when any error was reported; ``readable`` is False when
    the root file itself could not be read (the CLI exits 2 then). For editors:
    ``partial`` is the best-effort prompt the checks ran on (also when errors
    were found; None when they could not run), ``paths`` the absolute path of
    each file read, by display name (the root, when it has a path, and imports),
    ``syntax`` the root file's syntax tree (best effort when it has errors).
    """

    prompt: Prompt | None
    diagnostics: tuple[Diagnostic, ...]
    sources: SourceRegistry = attrs.field(eq=False, repr=False)
    readable: bool = True
    partial: Prompt | None = attrs.field(default=None, eq=False, repr=False)
    paths: dict[str, str] = attrs.field(factory=dict, eq=False, repr=False)
    syntax: Document | None = attrs.field(default=None, eq=False, repr=False)

    @property
    def has_errors(self) -> bool:
        return any(d.is_error for d in self.diagnostics)

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.is_error)

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if not d.is_error)


class _Loaded:
    """What loading found: the best-effort prompt (None when checks must not run on it)."""

    __slots__ = ("prompt", "diagnostics", "sources", "paths", "syntax")

    def __init__(self, prompt: Prompt | None, diagnostics: list[Diagnostic],
                 sources: SourceRegistry, paths: dict[str, str], syntax: Document) -> None:
        self.prompt = prompt
        self.diagnostics = diagnostics
        self.sources = sources
        self.paths = paths
        self.syntax = syntax


def _root_key(name: str, prompt_dir: str) -> str | None:
    if name.startswith("<"):
        return None
    return os.path.join(os.path.abspath(prompt_dir), name)


def _attach_chains(diagnostics: list[Diagnostic],
                   chains: dict[SourceFile, Chain]) -> list[Diagnostic]:
    if not chains:
        return diagnostics
    by_name: dict[str, Chain] = {}
    for source, chain in chains.items():
        by_name.setdefault(source.name, chain)
    out = []
    for diagnostic in diagnostics:
        found = chains.get(diagnostic.source) if diagnostic.source is not None else None
        if found is None:
            found = by_name.get(diagnostic.file)
        out.append(diagnostic.with_related(*found) if found else diagnostic)
    return out


def _load(text: str, *, name: str, prompt_dir: str, root_key: str | None,
          confine: bool, sha256: str | None = None) -> _Loaded:
    prompt_dir = os.path.abspath(prompt_dir)
    source = SourceFile(name, strip_bom(text))
    registry = SourceRegistry()
    registry.register(source)
    with gc_paused():
        parsed = parse(source)
        diagnostics = list(parsed.diagnostics)
        document = parsed.document
        checkable = True
        if not parsed.ok:  # lower what the errors did not touch (chatmd.recovery)
            from chatmd.recovery import intact_part  # only prompts with errors need it

            intact = intact_part(parsed)
            document, checkable = intact.document, intact.self_contained
        expanded = expand_imports(document, prompt_dir=prompt_dir, root_key=root_key,
                                  confine=confine, sha256=sha256,
                                  import_tags=parsed.import_tags)
        prompt, lowering = lower_prompt(expanded, name=name, prompt_dir=prompt_dir,
                                        confine=confine)
    paths = {name: root_key} if root_key is not None else {}
    for imported in expanded.sources[1:]:
        registry.register(imported)
        folder = expanded.folders.get(imported)
        if folder is not None:
            paths.setdefault(imported.name, os.path.join(folder, os.path.basename(imported.name)))
    diagnostics += expanded.diagnostics
    diagnostics += lowering
    return _Loaded(prompt if checkable else None, _attach_chains(diagnostics, expanded.chains),
                   registry, paths, parsed.document)


def _unreadable(path: str, reason: str) -> Diagnostic:
    return Diagnostic.for_file(path, "chatmd.unreadable_input", f"cannot read {path}: {reason}",
                               phase="input")


def _resolve_checks(checks: Sequence[PromptCheck] | None) -> list[PromptCheck]:
    return chatmd_checks() if checks is None else list(checks)


def _check(loaded: _Loaded, checks: Sequence[PromptCheck] | None) -> CheckResult:
    diagnostics = loaded.diagnostics
    if loaded.prompt is not None:
        for check in _resolve_checks(checks):
            try:
                diagnostics.extend(check(loaded.prompt))
            except DiagnosticError as exc:
                diagnostics.extend(exc.diagnostics)
    has_errors = any(d.is_error for d in diagnostics)
    return CheckResult(None if has_errors else loaded.prompt, tuple(diagnostics), loaded.sources,
                       partial=loaded.prompt, paths=loaded.paths, syntax=loaded.syntax)


def _prompt_or_raise(result: CheckResult) -> Prompt:
    if result.prompt is None:
        raise DiagnosticError(result.diagnostics)
    return result.prompt


def load_prompt_text(text: str, *, name: str = "<prompt>", prompt_dir: str = ".",
                     confine: bool = False,
                     checks: Sequence[PromptCheck] | None = None) -> Prompt:
    """The prompt written in ``text`` (display ``name``, imports relative to ``prompt_dir``).

    Runs the same pipeline and checks as :func:`check_prompt_text` and raises
    :class:`DiagnosticError` with every diagnostic when any is an error.
    """
    return _prompt_or_raise(check_prompt_text(text, name=name, prompt_dir=prompt_dir,
                                              confine=confine, checks=checks))


def load_prompt(path: str | os.PathLike[str], *, confine: bool = False,
                checks: Sequence[PromptCheck] | None = None) -> Prompt:
    """The prompt in the file ``path``; raises :class:`DiagnosticError` on any error.

    The same pipeline and checks as :func:`check_prompt`.
    """
    return _prompt_or_raise(check_prompt(path, confine=confine, checks=checks))


def check_prompt_text(text: str, *, name: str = "<prompt>", prompt_dir: str = ".",
                      confine: bool = False,
                      checks: Sequence[PromptCheck] | None = None) -> CheckResult:
    """Check the prompt written in ``text``; never raises for bad input.

    ``checks`` replaces the default :func:`chatmd_checks` when given.
    """
    return _check(_load(text, name=name, prompt_dir=prompt_dir,
                        root_key=_root_key(name, prompt_dir), confine=confine), checks)


def check_prompt(path: str | os.PathLike[str], *, confine: bool = False,
                 checks: Sequence[PromptCheck] | None = None) -> CheckResult:
    """Check the prompt file ``path``: every diagnostic, the prompt when clean, the sources."""
    display = os.fspath(path)
    try:
        text, sha256 = read_source(display)
    except UnreadableFile as exc:
        return CheckResult(None, (_unreadable(display, exc.reason),), SourceRegistry(),
                           readable=False)
    loaded = _load(text, name=display, prompt_dir=os.path.dirname(os.path.abspath(display)),
                   root_key=os.path.abspath(display), confine=confine, sha256=sha256)
    return _check(loaded, checks)


def script_source_file(script: Script) -> SourceFile:
    """The :class:`SourceFile` a ChatML checker reports into for ``script``.

    Inline scripts map back to their lines and columns in the declaring file;
    ``src`` scripts are their own file (named by ``display_name``).
    """
    source = script.source
    if isinstance(source, InlineSource):
        return SourceFile(source.file, source.text, line_offset=source.line - 1,
                          first_line_column_offset=source.column - 1)
    return SourceFile(source.display_name or source.src, source.text)
