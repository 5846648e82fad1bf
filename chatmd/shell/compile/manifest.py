"""The canonical manifest and its digest (spec §6.8).

The payload is plain JSON data: every runtime fully resolved with its
defaults materialised and its source (file, folders, namespace, position,
SHA-256 of the declaring file's text), every tool, the moderator binding, the
extension scripts in use, the dependency edges and the required features.
Canonical bytes are JSON with keys sorted recursively, no insignificant
whitespace, UTF-8; ordered lists keep declaration order.
Literal secrets never enter the payload.

``manifest_sha256`` is the SHA-256 of the canonical bytes of the payload's
*semantic content* (:func:`semantic_content`): the payload without the
parts of each runtime's and tool's ``source`` record that are pure provenance
-- the declaring file's name, the start/end positions of the declaration and
the SHA-256 of the whole file's text. Those stay in the manifest as metadata,
but they describe where the declaration is written, not what it grants:
moving a declaration within its file, reordering its attributes or
reformatting whitespace changes positions and the file hash without changing
one setting. The record's ``source_dir``, ``prompt_dir`` and ``namespace``
stay in the digest: ``${prompt_dir}`` and relative paths resolve against
them, so the same declaration in another folder grants other folders. Issue 5 asks for a digest that is "stable across runs and
independent of attribute order", which wins over the shell spec §6.8 sentence
that editing a declaring file "even whitespace" must change it. Everything
provenance could affect is in the semantic content: namespaces qualify the
ids, the folders anchor paths, and script bodies enter through
``source_sha256`` of the extension scripts. So reordering runtime declarations, attributes or
whitespace keeps the digest; reordering rules, or changing any value, does not.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from chatcommon.sources import Span
from chatmd.shell.declare.sections import SecretSource
from chatmd.shell.declare.settings import COMPILE_ONLY, META, Setting
from chatmd.shell.declare.typed_declarations import (
    SHELL_SCRIPT_ENTRYPOINTS,
    ShellAccessDecl,
    ShellScript,
    ShellToolDecl,
)
from chatmd.shell.declare.values import PathExpr

ENCODING_VERSION = "chatmd.shell.compile.manifest.py.v1"
LITERAL_SECRET = "<literal-secret>"


class _Encoder:
    """Plain JSON data for declaration values, bookkeeping fields left out.

    Inherited entries are shared objects across runtimes, so each is encoded
    once (memoised by identity for the duration of one manifest build).
    """

    def __init__(self) -> None:
        self._plans: dict[type, tuple[str | None, tuple[str, ...]]] = {}
        self._memo: dict[int, tuple[Any, Any]] = {}

    def _plan(self, cls: type) -> tuple[str | None, tuple[str, ...]]:
        plan = self._plans.get(cls)
        if plan is None:
            names = tuple(f.name for f in attrs.fields(cls)
                          if not (f.metadata.get(META) or f.metadata.get(COMPILE_ONLY)))
            plan = self._plans[cls] = (getattr(cls, "TAG", None), names)
        return plan

    def encode(self, value: Any) -> Any:
        if value is None or isinstance(value, str | bool | int | float):
            return value
        if isinstance(value, tuple | list):
            return [self.encode(item) for item in value]
        if isinstance(value, Setting):
            if value.state == "set":
                return self.encode(value.value)
            return None if value.state == "clear" else {"inherit": True}
        if isinstance(value, Mapping):
            return {str(key): self.encode(item) for key, item in value.items()}
        cached = self._memo.get(id(value))
        if cached is not None and cached[0] is value:
            return cached[1]
        encoded = self._encode_object(value)
        self._memo[id(value)] = (value, encoded)
        return encoded

    def _encode_object(self, value: Any) -> Any:
        if isinstance(value, PathExpr):
            data: dict[str, Any] = {"base": value.base, "path": value.path}
            if value.source_dir is not None:
                data["source_dir"] = value.source_dir
            return data
        if isinstance(value, SecretSource) and value.kind == "literal":
            return {"kind": "literal", "value": LITERAL_SECRET}
        if not attrs.has(type(value)):
            raise TypeError(f"cannot encode {type(value).__name__} in a manifest")
        tag, names = self._plan(type(value))
        data = {"type": tag} if tag is not None else {}
        for name in names:
            data[name] = self.encode(getattr(value, name))
        return data


def encode(value: Any) -> Any:
    """Plain JSON data for a declaration value (bookkeeping fields left out)."""
    return _Encoder().encode(value)


def _position(span: Span | None, end: bool = False) -> list[int] | None:
    if span is None:
        return None
    line, column = span.end_position if end else span.start_position
    return [line, column]


def source_record(declaration: ShellAccessDecl | ShellToolDecl | ShellScript) -> dict[str, Any]:
    """Where a declaration came from: file, folders, namespace, position, file digest."""
    provenance = declaration.provenance
    span = declaration.span
    extent = getattr(declaration, "extent", None) or span
    text_digest = ""
    if provenance is not None and provenance.source_sha256:
        text_digest = provenance.source_sha256
    elif span is not None:
        text_digest = hashlib.sha256(span.source.text.encode("utf-8")).hexdigest()
    start = _position(span)
    if start is None and provenance is not None:
        start = [provenance.line, provenance.column]
    return {
        "file": provenance.file if provenance else (span.file if span else None),
        "source_dir": provenance.source_dir if provenance else None,
        "prompt_dir": provenance.prompt_dir if provenance else None,
        "namespace": provenance.namespace if provenance else None,
        "start": start,
        "end": _position(extent, end=True),
        "sha256": text_digest,
    }


def encode_runtime(runtime: ShellAccessDecl, encoder: _Encoder | None = None) -> dict[str, Any]:
    data = dict((encoder or _Encoder()).encode(runtime))
    data["source"] = source_record(runtime)
    return data


def encode_tool(tool: ShellToolDecl, encoder: _Encoder | None = None) -> dict[str, Any]:
    data = dict((encoder or _Encoder()).encode(tool))
    data["source"] = source_record(tool)
    return data


def encode_script(script: ShellScript) -> dict[str, Any]:
    return {
        "id": script.id,
        "kind": script.kind,
        "source_sha256": script.source_sha256,
        "surface_version": f"chatml.{script.kind}.v1",
        "entrypoint": SHELL_SCRIPT_ENTRYPOINTS.get(script.kind, ""),
        "limits": dict(sorted(script.limits.items())),
    }


@attrs.frozen
class ShellManifest:
    """A compiled manifest: the payload and the SHA-256 of its canonical bytes."""

    payload: Mapping[str, Any]
    sha256: str

    def to_json(self) -> dict[str, Any]:
        return {"manifest_sha256": self.sha256, "manifest": self.payload}


#: Keys of a ``source`` record that say where a declaration is written, not what it
#: grants (left out of the digest). Its folders and namespace stay: ``${prompt_dir}``
#: and relative paths resolve against them, so they decide what a path grants.
PROVENANCE_KEYS = frozenset({"file", "start", "end", "sha256"})


def semantic_content(payload: Mapping[str, Any]) -> dict[str, Any]:
    """``payload`` with each ``source`` record reduced to what can change a setting's meaning."""
    content = dict(payload)
    for key in ("runtimes", "tools"):
        records = []
        for record in payload.get(key, ()):
            source = record.get("source")
            if isinstance(source, Mapping):
                record = {**record, "source": {name: value for name, value in source.items()
                                               if name not in PROVENANCE_KEYS}}
            records.append(record)
        content[key] = records
    return content


def manifest_digest(payload: Mapping[str, Any]) -> str:
    """``manifest_sha256``: the SHA-256 of the canonical bytes of the semantic content."""
    return hashlib.sha256(canonical_bytes(semantic_content(payload))).hexdigest()


def canonical_bytes(payload: Mapping[str, Any]) -> bytes:
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


def build_manifest(*, platform: str, runtimes: Iterable[ShellAccessDecl],
                   tools: Iterable[ShellToolDecl], moderator_runtime: str | None,
                   scripts: Iterable[ShellScript],
                   dependencies: Iterable[tuple[str, str, str]],
                   required_features: Iterable[str]) -> ShellManifest:
    """The manifest of fully resolved ``runtimes`` (any order; sorted here by id)."""
    encoder = _Encoder()
    payload = {
        "encoding_version": ENCODING_VERSION,
        "platform": platform,
        "runtimes": [encode_runtime(r, encoder) for r in sorted(runtimes, key=lambda r: r.id)],
        "tools": [encode_tool(t, encoder) for t in sorted(tools, key=lambda t: t.name)],
        "moderator_runtime": moderator_runtime,
        "extension_scripts": [encode_script(s) for s in sorted(scripts, key=lambda s: s.id)],
        "dependencies": [{"from_id": a, "to_id": b, "kind": k}
                         for a, b, k in sorted(set(dependencies))],
        "required_features": sorted(set(required_features)),
    }
    return ShellManifest(payload, manifest_digest(payload))
