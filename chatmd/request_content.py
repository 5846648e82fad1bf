"""Resolving message content for a request: documents, images, agents (spec §4.5-4.7, §7.2).

A :class:`ContentResolver` turns IR content items into Responses content parts
(``input_text`` / ``input_image``) or into their string rendering, fetching
what they refer to through the :class:`~chatmd.request_context.ConversionContext`:

* Local files: a malformed ``src`` (NUL byte, not UTF-8, too long) is refused
  before the file system sees it; with ``ctx.confine`` (``--confine``) only the
  prompt folder is searched and the file must lie beneath it after ``..``,
  absolute paths and symlinks are resolved (:mod:`chatmd.references`).
* ``<doc>`` — local: prompt dir, then cwd, then the path itself if absolute;
  remote: the context's fetcher. ``strip`` (wins over ``markdown``) extracts
  readable text from HTML after a best-effort gzip decompression;
  ``markdown`` converts HTML to Markdown (text without any HTML tag is kept
  as it is); neither gives the raw text.
* ``<img>`` — local files (prompt dir; absolute paths as-is) become
  ``data:<mime>;base64,...`` URIs; remote URLs pass through.
* ``<agent>`` — the agent prompt (found like a document) runs through the
  context's agent runner with the element's children, resolved here, as its
  final user input; results are memoised in the context's agent cache.

Problems never raise: each becomes a positioned diagnostic
(``chatmd.doc_unresolved``, ``chatmd.image_unresolved``,
``chatmd.agent_unavailable``, ``chatmd.agent_failed``) in
:attr:`ContentResolver.diagnostics`, and a placeholder takes the item's place.
"""

from __future__ import annotations

import base64
import json
import os
import re
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from chatcommon.diagnostics import Diagnostic, DiagnosticError, Related
from chatmd.html_text import html_to_markdown, html_to_text
from chatmd.ir import AgentItem, Content, ContentItem, DocItem, ImageItem, TextItem
from chatmd.ir_diagnostics import diagnostic_at
from chatmd.loading import Confinement
from chatmd.nested_fold import Nested, fold_nested
from chatmd.provenance import Provenance
from chatmd.references import confinement_problem, reference_problem, shown
from chatmd.request_context import ConversionContext, FetchError

PHASE = "request"

IMAGE_MIME_TYPES = {
    "jpg": "image/jpeg",
    "jpeg": "image/jpeg",
    "png": "image/png",
    "gif": "image/gif",
    "bmp": "image/bmp",
    "webp": "image/webp",
    "svg": "image/svg+xml",
}
DEFAULT_IMAGE_MIME = "image/jpeg"
#: A gzip-compressed document may expand to at most this many bytes.
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024

Part = dict[str, Any]


def image_mime_type(path: str) -> str:
    """The MIME type for an image file, from its lower-cased extension (spec §4.6)."""
    name = os.path.basename(path)
    extension = name.rsplit(".", 1)[1].lower() if "." in name else ""
    return IMAGE_MIME_TYPES.get(extension, DEFAULT_IMAGE_MIME)


def data_uri(data: bytes, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


_HTML_TAG = re.compile(r"<(?:[A-Za-z][A-Za-z0-9-]*[\s/>]|!DOCTYPE|!--)", re.IGNORECASE)


def looks_like_html(text: str) -> bool:
    """True when ``text`` contains an HTML tag: ``markdown`` leaves other text (Markdown,
    plain text) as it is instead of collapsing its whitespace."""
    return _HTML_TAG.search(text) is not None


class TooLarge(ValueError):
    """A compressed document expands beyond :data:`MAX_DOCUMENT_BYTES`."""


def _maybe_gunzip(data: bytes) -> bytes:
    """``data`` gunzipped when it is gzip (best effort), at most :data:`MAX_DOCUMENT_BYTES`."""
    if data[:2] != b"\x1f\x8b":
        return data
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(data, MAX_DOCUMENT_BYTES + 1)
    except zlib.error:
        return data
    if len(out) > MAX_DOCUMENT_BYTES:
        raise TooLarge(f"it expands to more than {MAX_DOCUMENT_BYTES} bytes")
    return out


def _decode(data: bytes) -> str:
    text = data.decode("utf-8", errors="replace")
    return text[1:] if text.startswith("\ufeff") else text


class ContentResolver:
    """Resolves the content items of one prompt's messages against a context."""

    def __init__(self, ctx: ConversionContext, prompt_name: str) -> None:
        self.ctx = ctx
        self.prompt_name = prompt_name
        self.diagnostics: list[Diagnostic] = []
        self._documents: dict[tuple[str, bool, bool, bool], str | None] = {}

    # --- positions and errors -------------------------------------------------------------

    def _error(self, code: str, message: str, item: ImageItem | DocItem | AgentItem,
               provenance: Provenance | None, *, hint: str | None = None,
               related: Sequence[Related] = ()) -> None:
        self.diagnostics.append(diagnostic_at(
            code, message, provenance=provenance, location=item.location,
            fallback_file=self.prompt_name, phase=PHASE, hint=hint, related=related))

    # --- local files ----------------------------------------------------------------------

    def local_refusal(self, src: str) -> str | None:
        """Why the local ``src`` is not looked up at all: malformed (NUL byte, not UTF-8, too
        long) or, with ``ctx.confine``, outside the prompt folder once ``..``, absolute paths
        and symlinks are resolved."""
        problem = reference_problem(src)
        if problem is not None:
            return f"\"{shown(src)}\" is not a valid path: {problem}"
        if self.ctx.confine:
            return confinement_problem(Confinement.of(str(self.ctx.prompt_dir)), src,
                                       str(self.ctx.prompt_dir))
        return None

    def local_candidates(self, src: str, *, cwd_fallback: bool) -> list[Path]:
        """Where a local ``src`` is looked for, in order (only the prompt folder when confined)."""
        candidates = [self.ctx.prompt_dir / src]
        if self.ctx.confine:
            return candidates
        if cwd_fallback:
            candidates.append(self.ctx.cwd / src)
        if os.path.isabs(src):
            candidates.append(Path(src))
        return candidates

    def _read_local(self, src: str, *, cwd_fallback: bool) -> tuple[bytes, Path] | None:
        for candidate in self.local_candidates(src, cwd_fallback=cwd_fallback):
            if candidate.is_file():
                try:
                    return candidate.read_bytes(), candidate
                except OSError:
                    continue
        return None

    def _tried(self, src: str, *, cwd_fallback: bool) -> str:
        return ", ".join(str(c) for c in self.local_candidates(src, cwd_fallback=cwd_fallback))

    # --- documents ------------------------------------------------------------------------

    def document_text(self, item: DocItem, provenance: Provenance | None) -> str | None:
        """The document's text (converted as its flags say), or None after reporting why not."""
        key = (item.url, item.local, item.strip, item.markdown)
        if key in self._documents:
            cached = self._documents[key]
            if cached is None:  # report every occurrence at its own position
                self._document_text(item, provenance)
            return cached
        text = self._documents[key] = self._document_text(item, provenance)
        return text

    def _document_text(self, item: DocItem, provenance: Provenance | None) -> str | None:
        if not item.url:
            self._error("chatmd.doc_unresolved", "<doc> has no src: expected src=\"PATH\" or "
                        "src=\"URL\"", item, provenance)
            return None
        if item.local:
            refusal = self.local_refusal(item.url)
            if refusal is not None:
                self._error("chatmd.doc_unresolved", f"document refused: {refusal}", item,
                            provenance)
                return None
            found = self._read_local(item.url, cwd_fallback=True)
            if found is None:
                self._error("chatmd.doc_unresolved",
                            f"document \"{item.url}\" not found: tried "
                            f"{self._tried(item.url, cwd_fallback=True)}",
                            item, provenance, hint="local documents are looked up in the prompt's "
                            "folder, then in the working directory")
                return None
            data = found[0]
        else:
            try:
                data = self.ctx.fetcher.fetch(item.url)
            except FetchError as problem:
                hint = None
                if "://" not in item.url:
                    hint = "add the `local` flag to read a file from disk"
                self._error("chatmd.doc_unresolved",
                            f"document \"{item.url}\" could not be fetched: {problem}",
                            item, provenance, hint=hint)
                return None
        if not (item.strip or item.markdown):
            return _decode(data)
        try:
            text = _decode(_maybe_gunzip(data))
        except TooLarge as problem:
            self._error("chatmd.doc_unresolved", f"document \"{item.url}\" is refused: {problem}",
                        item, provenance)
            return None
        if item.strip:
            return html_to_text(text)
        return html_to_markdown(text) if looks_like_html(text) else text

    # --- images ---------------------------------------------------------------------------

    def image_url(self, item: ImageItem, provenance: Provenance | None) -> str | None:
        """The URL to send: remote URLs as written, local files as data URIs."""
        if not item.local:
            if not item.url:
                self._error("chatmd.image_unresolved", "<img> has no src: expected "
                            "src=\"URL\" or src=\"PATH\" local", item, provenance)
                return None
            return item.url
        refusal = self.local_refusal(item.url) if item.url else None
        if refusal is not None:
            self._error("chatmd.image_unresolved", f"image refused: {refusal}", item, provenance)
            return None
        found = self._read_local(item.url, cwd_fallback=False) if item.url else None
        if found is None:
            self._error("chatmd.image_unresolved",
                        f"image \"{item.url}\" not found: tried "
                        f"{self._tried(item.url, cwd_fallback=False)}" if item.url else
                        "<img local> has no src: expected src=\"PATH\"",
                        item, provenance,
                        hint="local images are looked up in the prompt's folder")
            return None
        data, path = found
        return data_uri(data, image_mime_type(str(path)))

    # --- agents ---------------------------------------------------------------------------

    def agent_result(self, item: AgentItem, provenance: Provenance | None) -> str | None:
        """The nested run's answer, or None after reporting why there is none."""
        if not self._runner_available(item, provenance):
            return None
        before = len(self.diagnostics)
        return self._agent_answer(item, self._parts(item.items, provenance), before, provenance)

    def _runner_available(self, item: AgentItem, provenance: Provenance | None) -> bool:
        if self.ctx.agent_runner is None:
            self._error("chatmd.agent_unavailable",
                        f"<agent src=\"{item.url}\"> cannot run: no agent runner is configured",
                        item, provenance,
                        hint="sub-agents run only in a host that can call the model")
            return False
        return True

    def _agent_answer(self, item: AgentItem, input_parts: list[Part], before: int,
                      provenance: Provenance | None) -> str | None:
        """Run the agent ``item`` on its ``input_parts`` (unless finding them reported a
        problem: more diagnostics than ``before``)."""
        runner = self.ctx.agent_runner
        assert runner is not None
        if len(self.diagnostics) > before:
            return None
        key = (item.url, item.local, json.dumps(input_parts, sort_keys=True))
        cached = self.ctx.agent_cache.get(key)
        if cached is not None:
            return cached
        prompt = self._agent_prompt(item, provenance)
        if prompt is None:
            return None
        text, prompt_dir = prompt
        try:
            result = runner.run_agent(text, input_parts, prompt_dir, self.ctx.session_id)
        except DiagnosticError as error:
            related = [Related(d.message, d.file, d.line, d.column) for d in error.diagnostics]
            self._error("chatmd.agent_failed",
                        f"agent \"{item.url}\" failed: {error.first.message}",
                        item, provenance, related=related)
            return None
        except Exception as error:  # any failure of the nested run is reported, not raised
            self._error("chatmd.agent_failed", f"agent \"{item.url}\" failed: {error}",
                        item, provenance)
            return None
        if not isinstance(result, str):
            self._error("chatmd.agent_failed", f"agent \"{item.url}\" returned "
                        f"{type(result).__name__}, expected text", item, provenance)
            return None
        self.ctx.agent_cache.put(key, result)
        return result

    def _agent_prompt(self, item: AgentItem, provenance: Provenance | None
                      ) -> tuple[str, str] | None:
        """The agent prompt's text and the folder it runs in."""
        if not item.url:
            self._error("chatmd.agent_failed", "<agent> has no src: expected src=\"PATH\"",
                        item, provenance)
            return None
        if item.local:
            refusal = self.local_refusal(item.url)
            if refusal is not None:
                self._error("chatmd.agent_failed", f"agent prompt refused: {refusal}", item,
                            provenance)
                return None
            found = self._read_local(item.url, cwd_fallback=True)
            if found is None:
                self._error("chatmd.agent_failed",
                            f"agent prompt \"{item.url}\" not found: tried "
                            f"{self._tried(item.url, cwd_fallback=True)}", item, provenance)
                return None
            data, path = found
            return _decode(data), str(path.resolve().parent)
        try:
            data = self.ctx.fetcher.fetch(item.url)
        except FetchError as problem:
            self._error("chatmd.agent_failed",
                        f"agent prompt \"{item.url}\" could not be fetched: {problem}",
                        item, provenance)
            return None
        return _decode(data), str(self.ctx.prompt_dir)

    # --- content --------------------------------------------------------------------------

    def _part(self, item: TextItem | ImageItem | DocItem, provenance: Provenance | None) -> Part:
        if isinstance(item, TextItem):
            return {"type": "input_text", "text": item.text}
        if isinstance(item, ImageItem):
            url = self.image_url(item, provenance)
            return {"type": "input_image", "image_url": url or "", "detail": "auto"}
        return {"type": "input_text", "text": self.document_text(item, provenance) or ""}

    def input_parts(self, content: Content, provenance: Provenance | None) -> list[Part]:
        """Content as ``input_text`` / ``input_image`` parts (spec §7.2)."""
        if content is None:
            return []
        if isinstance(content, str):
            return [{"type": "input_text", "text": content}]
        return self._parts(content, provenance)

    def _parts(self, items: tuple[ContentItem, ...], provenance: Provenance | None) -> list[Part]:
        """The parts of ``items``; an ``<agent>``'s part is its answer, found after those of
        its own items (agents nest as deep as elements: :func:`fold_nested`)."""
        def visit(item: ContentItem) -> Part | Nested[ContentItem, Part]:
            if not isinstance(item, AgentItem):
                return self._part(item, provenance)
            if not self._runner_available(item, provenance):
                return {"type": "input_text", "text": ""}
            before = len(self.diagnostics)

            def finish(parts: list[Part]) -> Part:
                answer = self._agent_answer(item, parts, before, provenance)
                return {"type": "input_text", "text": answer or ""}
            return Nested(item.items, finish)

        return fold_nested(items, visit)

    def render_string(self, content: Content, provenance: Provenance | None) -> str:
        """Content as one string: items rendered and joined by LF (spec §7.2, last column)."""
        if content is None:
            return ""
        if isinstance(content, str):
            return content
        rendered = []
        for item in content:
            if isinstance(item, TextItem):
                rendered.append(item.text)
            elif isinstance(item, ImageItem):
                local = ' local="true"' if item.local else ""
                rendered.append(f'<img src="{item.url}"{local}/>')
            elif isinstance(item, DocItem):
                rendered.append(self.document_text(item, provenance) or "")
            else:
                rendered.append(self.agent_result(item, provenance) or "")
        return "\n".join(rendered)
