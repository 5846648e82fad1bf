"""Import expansion (spec §3): splice ``<import src=.../>`` files into the syntax tree.

Input: the root :class:`~chatmd.ast.Document`. Output: an :class:`ExpandedPrompt`,
the flat list of top-level elements of the whole prompt, each with the
:class:`~chatmd.provenance.Provenance` of the file that declared it, plus every
diagnostic found and every source file read.

- Top-level imports parse the file as a document and splice its top-level
  elements in place. Imports inside the bodies of ``user``, ``system``,
  ``developer``, ``agent`` and ``msg`` with role exactly ``user``/``system``/
  ``developer`` (recursively) parse the file in *content mode* (DECISIONS 10)
  and splice its nodes into the body. Everywhere else ``<import>`` is left in
  the tree; the declaration layer renders it as literal text.
- Per sibling list, namespaces are validated and duplicate aliases rejected
  before any sibling is expanded; then each import is checked and expanded in
  order (attributes, depth limit 128, cycle detection by import key, reading,
  parsing). ``local`` on ``<import>`` draws a warning (DECISIONS 10a).
- With ``confine=True`` (pinned artifacts) an import must resolve beneath the
  root prompt folder after ``realpath``; absolute paths are refused.
- Safety limits beyond the spec: at most :data:`MAX_IMPORTS` files per prompt
  (``chatmd.import_too_many``), only regular files up to a size cap
  (:mod:`chatmd.loading`), and content spliced into a body may not make
  elements nest deeper than :data:`chatmd.parser.MAX_NESTING`
  (``chatmd.nesting_too_deep``), so that no later phase runs out of stack.

Every import error is positioned at the ``<import>`` (or its offending
attribute). A file that fails to read or parse is not spliced, so its errors
do not cascade. Diagnostics inside an imported file name that file (display
name = the ``src`` as written); :attr:`ExpandedPrompt.chains` gives, for each
imported :class:`~chatcommon.sources.SourceFile`, the "imported from" notes that
the frontend attaches to every diagnostic in it.
"""

from __future__ import annotations

import os
import re

from chatcommon.diagnostics import Diagnostic, Related, Severity
from chatcommon.records import evolve
from chatcommon.sources import SourceFile, Span
from chatmd.ast import Document, Element, Node, Text
from chatmd.lexer import attribute_spans
from chatmd.loading import (
    Confinement,
    UnreadableFile,
    import_key,
    read_source,
    resolve,
    sha256_hex,
)
from chatmd.parser import MAX_NESTING, parse
from chatmd.provenance import Provenance, join_namespaces, new_provenance
from chatmd.references import INVALID_PATH, invalid_message, reference_problem

PHASE = "imports"

#: Imports nest at most this deep (the root prompt is depth 0).
MAX_IMPORT_DEPTH = 128
#: At most this many files are imported per prompt (diamonds multiply quickly).
MAX_IMPORTS = 1000

_NAMESPACE = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*\Z")
_EXPANDING_TAGS = frozenset({"user", "system", "developer", "agent"})
_EXPANDING_MSG_ROLES = frozenset({"user", "system", "developer"})
_IMPORT_ATTRIBUTES = ("src", "namespace")

Chain = tuple[Related, ...]

#: Where counting lines starts in a file: line 1, which starts at offset 0; nothing scanned.
_START = (1, 0, 0)


class TopLevel:
    """One top-level element of the expanded prompt and where it was declared."""

    __slots__ = ("element", "provenance")

    def __init__(self, element: Element, provenance: Provenance) -> None:
        self.element = element
        self.provenance = provenance

    def __repr__(self) -> str:
        return f"TopLevel(<{self.element.tag}>, {self.provenance!r})"


class ExpandedPrompt:
    """The expanded top-level elements, diagnostics, files read and import chains.

    ``elements`` are the top-level elements of the whole prompt in order and
    ``provenances`` where each was declared (the same length: two lists rather
    than a :class:`TopLevel` per element, which a transcript would pay for
    36,000 times); ``nodes`` pairs them. ``chains`` maps each imported file to
    its "imported from" notes (nearest importer first); ``folders`` gives the
    absolute folder of every file read, for resolving what it refers to.
    """

    __slots__ = ("elements", "provenances", "diagnostics", "sources", "chains", "folders")

    def __init__(self, elements: list[Element], provenances: list[Provenance],
                 diagnostics: list[Diagnostic], sources: list[SourceFile],
                 chains: dict[SourceFile, Chain], folders: dict[SourceFile, str]) -> None:
        self.elements = elements
        self.provenances = provenances
        self.diagnostics = diagnostics
        self.sources = sources
        self.chains = chains
        self.folders = folders

    @property
    def nodes(self) -> list[TopLevel]:
        """Each top-level element with its provenance."""
        return [TopLevel(element, provenance)
                for element, provenance in zip(self.elements, self.provenances, strict=True)]


class _File:
    """The file whose nodes are being expanded, and how it was reached."""

    __slots__ = ("source", "folder", "namespace", "depth", "active", "sha256", "import_tags")

    def __init__(self, source: SourceFile, folder: str, namespace: str | None, depth: int,
                 active: frozenset[str], sha256: str, import_tags: bool = True) -> None:
        self.source = source
        self.folder = folder
        self.namespace = namespace
        self.depth = depth
        self.active = active
        self.sha256 = sha256
        #: False when its parse read no ``<import>`` element (``ParseResult.import_tags``)
        self.import_tags = import_tags


class _Body:
    """A body being expanded (:meth:`_Expander._expand_children`): an element's children
    (``element`` set) or an imported file's nodes (``element`` None), ``depth`` deep."""

    __slots__ = ("children", "file", "depth", "element", "index", "out", "changed", "skip")

    def __init__(self, children: tuple[Node, ...], file: _File, depth: int,
                 element: Element | None) -> None:
        self.children = children
        self.file = file
        self.depth = depth
        self.element = element
        self.index = 0
        self.out: list[Node] = []
        self.changed = False
        self.skip: set[int] | None = None


def may_import(text: str, import_tags: bool = True) -> bool:
    """False when a file cannot hold an ``<import>`` element, so that its elements need
    no expansion work: its parse read none (``import_tags`` False: nothing to scan, which
    spares a search through a large transcript), or its ``text`` has no ``<import``."""
    return import_tags and "<import" in text


def expands_imports(element: Element) -> bool:
    """True when ``<import>`` children of ``element`` are expanded (spec §3.1)."""
    tag = element.tag
    if tag in _EXPANDING_TAGS:
        return True
    return tag == "msg" and element.get("role") in _EXPANDING_MSG_ROLES


class _Expander:
    def __init__(self, prompt_dir: str, *, confine: bool) -> None:
        self.prompt_dir = prompt_dir
        self.confinement = Confinement.of(prompt_dir) if confine else None
        self.diagnostics: list[Diagnostic] = []
        self.sources: list[SourceFile] = []
        self.chains: dict[SourceFile, Chain] = {}
        self.folders: dict[SourceFile, str] = {}
        self.elements: list[Element] = []
        self.provenances: list[Provenance] = []
        self.imported = 0

    # ------------------------------------------------------------------ reporting

    def _error(self, span: Span, code: str, message: str, *, hint: str | None = None,
               severity: Severity = Severity.ERROR,
               related: tuple[Related, ...] = ()) -> None:
        self.diagnostics.append(Diagnostic.at(span, code, message, phase=PHASE, hint=hint,
                                              severity=severity, related=related))

    # ------------------------------------------------------------------ top level

    def top_level(self, nodes: tuple[Node, ...], file: _File) -> None:
        if not may_import(file.source.text, file.import_tags):  # nothing to expand or check
            self._place(nodes, file, _START)
            return
        skip = self._check_namespaces(nodes)
        placed: list[Node] = []
        position = _START
        for node in nodes:
            if not isinstance(node, Element):
                continue
            if node.tag == "import":
                if id(node) not in skip:
                    opened = self._open(node, file, content_mode=False, depth=0)
                    if opened is not None:
                        position = self._place(placed, file, position)
                        placed = []
                        document, child = opened
                        self.top_level(document.nodes, child)
                continue
            children = node.children
            if children and (len(children) > 1 or type(children[0]) is not Text) and (
                    node.tag in _EXPANDING_TAGS or node.tag == "msg"):
                node = self.expand_element(node, file, 1)
            placed.append(node)
        self._place(placed, file, position)

    def _place(self, nodes: tuple[Node, ...] | list[Node], file: _File,
               position: tuple[int, int, int]) -> tuple[int, int, int]:
        """Append the elements of ``nodes`` (in ``file``, in order) with their provenance.

        ``position`` is ``(line, offset of its start, offset scanned up to)`` where the
        previous call for this file stopped (:data:`_START` at first); the new one is returned.
        Positions advance monotonically, so line breaks are counted incrementally.
        """
        source = file.source
        text = source.text
        count = text.count
        rfind = text.rfind
        name, folder, prompt_dir, namespace, digest = (source.name, file.folder, self.prompt_dir,
                                                       file.namespace, file.sha256)
        append_element = self.elements.append
        append_provenance = self.provenances.append
        line, line_start, scanned = position
        for node in nodes:
            if type(node) is not Element:
                continue
            start = node.span.start
            line += count("\n", scanned, start)
            scanned = start
            newline = rfind("\n", line_start, start)
            if newline >= 0:
                line_start = newline + 1
            append_element(node)
            append_provenance(new_provenance(name, line, start - line_start + 1, folder,
                                              prompt_dir, namespace, digest))
        return line, line_start, scanned

    # ------------------------------------------------------------------ bodies

    def expand_element(self, element: Element, file: _File, depth: int) -> Element:
        """``element`` (nested ``depth`` deep) with imports in its body expanded (itself when
        nothing changes). Past :data:`MAX_NESTING` (already ``chatmd.nesting_too_deep`` from
        the parser) nothing is expanded, so the walk's depth stays bounded."""
        if depth > MAX_NESTING or not expands_imports(element) or not element.children:
            return element
        children = self._expand_children(element.children, file, depth)
        if children is None:
            return element
        return evolve(element, children=children)

    def _expand_children(self, children: tuple[Node, ...], file: _File,
                         depth: int) -> tuple[Node, ...] | None:
        """The expanded children of an element ``depth`` deep; None when no import was found.

        Walked with an explicit stack: bodies nest as deep as the parser allows
        (and imported files add their own nesting, up to :data:`MAX_NESTING` in all).
        """
        stack = [_Body(children, file, depth, None)]
        while True:
            body = stack[-1]
            if body.index == len(body.children):
                stack.pop()
                result = tuple(body.out) if body.changed else None
                if not stack:
                    return result
                parent = stack[-1]
                if body.element is None:  # an imported file's nodes, spliced in
                    parent.out.extend(body.children if result is None else result)
                elif result is None:
                    parent.out.append(body.element)
                else:
                    parent.changed = True
                    parent.out.append(evolve(body.element, children=result))
                continue
            child = body.children[body.index]
            body.index += 1
            if isinstance(child, Element):
                if child.tag == "import":
                    body.changed = True
                    if body.skip is None:
                        body.skip = self._check_namespaces(body.children)
                    if id(child) in body.skip:
                        continue
                    opened = self._open(child, body.file, content_mode=True, depth=body.depth)
                    if opened is not None:
                        document, inner = opened
                        stack.append(_Body(document.nodes, inner, body.depth, None))
                    continue
                if child.children and expands_imports(child) and body.depth < MAX_NESTING:
                    stack.append(_Body(child.children, body.file, body.depth + 1, child))
                    continue
            body.out.append(child)

    # ------------------------------------------------------------------ checks

    def _check_namespaces(self, nodes: tuple[Node, ...]) -> set[int]:
        """Validate every sibling import's namespace; the ids of imports not to expand."""
        skip: set[int] = set()
        first_by_alias: dict[str, Element] = {}
        for node in nodes:
            if not isinstance(node, Element) or node.tag != "import":
                continue
            namespace = node.attribute("namespace")
            if namespace is None or not namespace.value:
                continue  # absent, a flag or empty: reported with the other attributes
            alias = namespace.value
            if not _NAMESPACE.match(alias):
                skip.add(id(node))
                self._error(self._attribute_span(node, "namespace"), "chatmd.import_invalid_namespace",
                            f"invalid import namespace \"{alias}\": expected a letter or `_` "
                            "followed by letters, digits, `_`, `.` or `-`",
                            hint="namespaces cannot contain `:`; nested imports compose "
                            "them as outer:inner")
                continue
            first = first_by_alias.get(alias)
            if first is None:
                first_by_alias[alias] = node
                continue
            skip.add(id(node))
            skip.add(id(first))
            self._error(self._attribute_span(node, "namespace"), "chatmd.import_duplicate_namespace",
                        f"duplicate import namespace \"{alias}\": another import in this list "
                        "already uses it",
                        hint="give each sibling import its own namespace",
                        related=(Related.at(first.span, f"namespace \"{alias}\" first used here"),))
        return skip

    @staticmethod
    def _attribute_span(element: Element, name: str) -> Span:
        """The span of the last attribute called ``name`` (the tag if it cannot be found)."""
        spans = attribute_spans(element)
        for attribute, span in zip(reversed(element.attrs), reversed(spans), strict=False):
            if attribute.name == name:
                return span
        return element.span

    def _check_attributes(self, element: Element) -> str | None:
        """Report attribute problems of one ``<import>``; its ``src`` if it may be expanded."""
        spans = attribute_spans(element)
        ok = True
        seen: set[str] = set()
        values: dict[str, str | None] = {}
        for index, attribute in enumerate(element.attrs):
            name = attribute.name
            span = spans[index] if index < len(spans) else element.span
            if name not in _IMPORT_ATTRIBUTES:
                if name == "local":
                    self._error(span, "chatmd.import_local_ignored",
                                "the `local` flag has no effect on <import> and is ignored",
                                hint="imports always read local files; remove `local`",
                                severity=Severity.WARNING)
                else:
                    ok = False
                    self._error(span, "chatmd.import_unsupported_attribute",
                                f"unsupported attribute `{name}` on <import>: expected only "
                                "`src` and `namespace`")
                continue
            if name in seen:
                ok = False
                self._error(span, "chatmd.import_duplicate_attribute",
                            f"attribute `{name}` is given more than once on <import>")
                continue
            seen.add(name)
            values[name] = attribute.value
            if attribute.value is None:
                ok = False
                self._error(span, "chatmd.import_attribute_value_required",
                            f"attribute `{name}` on <import> needs a value: "
                            f"expected {name}=\"...\"")
            elif attribute.value == "":
                ok = False
                self._error(span, "chatmd.import_empty_attribute",
                            f"attribute `{name}` on <import> is empty")
        if "src" not in values:
            ok = False
            self._error(element.span, "chatmd.import_missing_src",
                        "<import> has no `src` attribute: expected src=\"path/to/file\"")
        return values["src"] if ok else None

    # ------------------------------------------------------------------ opening a file

    def _open(self, element: Element, file: _File, *, content_mode: bool,
              depth: int) -> tuple[Document, _File] | None:
        """Check one ``<import>`` and read and parse its file; None when it cannot be expanded.

        ``depth`` is the nesting of the element whose body receives the file's nodes
        (0 at top level); spliced content may not nest deeper than ``MAX_NESTING``.
        """
        src = self._check_attributes(element)
        if src is None:
            return None
        problem = reference_problem(src)
        if problem is not None:  # before the file system sees it (NUL, encoding, length)
            self._error(self._attribute_span(element, "src"), INVALID_PATH,
                        invalid_message("import src", src, problem))
            return None
        if self.imported >= MAX_IMPORTS:
            if self.imported == MAX_IMPORTS:
                self.imported += 1
                self._error(element.span, "chatmd.import_too_many",
                            f"more than {MAX_IMPORTS} files are imported by this prompt; "
                            "this import and any later ones are not expanded",
                            hint="a file imported by many branches is read once per branch")
            return None
        if file.depth >= MAX_IMPORT_DEPTH:
            self._error(element.span, "chatmd.import_too_deep",
                        f"imports nest deeper than {MAX_IMPORT_DEPTH} files at \"{src}\"",
                        hint="import cycles through symlinks or generated chains of files "
                        "end up here")
            return None
        path = resolve(src, file.folder)
        if self.confinement is not None:
            violation = self.confinement.violation(src, path)
            if violation is not None:
                self._error(self._attribute_span(element, "src"), "chatmd.path_outside_prompt_dir",
                            f"import {violation}",
                            hint="pinned prompts may only import files beneath the root "
                            "prompt's folder, by relative path")
                return None
        key = import_key(os.path.abspath(path))
        if key in file.active:
            self._error(element.span, "chatmd.import_cycle",
                        f"import cycle detected at \"{src}\": the file is already being "
                        "imported on this chain",
                        hint="the same file may be imported by two branches, but not by itself")
            return None
        try:
            text, sha256 = read_source(path)
        except UnreadableFile as exc:
            self._error(self._attribute_span(element, "src"), "chatmd.import_unreadable",
                        f"cannot read import \"{src}\" ({path}): {exc.reason}")
            return None
        self.imported += 1
        source = SourceFile(src, text)
        chain = (Related.at(element.span, "imported from"),) + self.chains.get(file.source, ())
        self.sources.append(source)
        self.chains[source] = chain
        folder = os.path.dirname(path)
        self.folders[source] = folder
        result = parse(source, content_mode=content_mode)
        if result.diagnostics:
            self.diagnostics.extend(result.diagnostics)
            if not result.ok:
                return None
        if depth + result.depth > MAX_NESTING:
            self._error(element.span, "chatmd.nesting_too_deep",
                        f"importing \"{src}\" here nests elements deeper than {MAX_NESTING} "
                        "levels")
            return None
        own = element.get("namespace")
        child = _File(source, folder, join_namespaces(file.namespace, own),
                      file.depth + 1, file.active | {key}, sha256, result.import_tags)
        return result.document, child


def expand_imports(document: Document, *, prompt_dir: str, root_key: str | None = None,
                   confine: bool = False, sha256: str | None = None,
                   import_tags: bool = True) -> ExpandedPrompt:
    """Expand every import of ``document`` (the root prompt, already parsed).

    ``prompt_dir`` is the root prompt's folder (absolute); ``root_key`` the
    root file's absolute path when it has one (so importing it back is a
    cycle). ``sha256`` is :func:`~chatmd.loading.sha256_hex` of the root text when the
    caller has it already; ``import_tags`` is False when the parse of ``document`` read
    no ``<import>`` element (``ParseResult.import_tags``). Never raises for bad input:
    problems are in the diagnostics.
    """
    prompt_dir = os.path.abspath(prompt_dir)
    expander = _Expander(prompt_dir, confine=confine)
    source = document.source
    expander.sources.append(source)
    expander.folders[source] = prompt_dir
    active = frozenset({import_key(root_key)}) if root_key else frozenset()
    root = _File(source, prompt_dir, None, 0, active,
                 sha256 if sha256 is not None else sha256_hex(source.text), import_tags)
    expander.top_level(document.nodes, root)
    return ExpandedPrompt(expander.elements, expander.provenances, expander.diagnostics,
                          expander.sources, expander.chains, expander.folders)
