"""Trusted sources (shell spec §6.9 step 2): which declaring files may define shell runtimes.

The policy is the JSON file named by ``OCHAT_SHELL_TRUSTED_SOURCES``::

    {"entries": [{"id": "team", "canonical_root": "/srv/agents",
                  "repository_identity": "git@host:team/agents" | null,
                  "source_sha256": ["<hex>", ...], "signer_ids": ["release-key", ...],
                  "capabilities": {"network": false, "child_processes": true,
                                   "arbitrary_code": true, "privilege_change": false,
                                   "external_backends": false, "executable_hooks": false,
                                   "model_reviewers": false, "durable_approvals": false}}]}

Every *source* of the manifest must match an entry: the declaring file of each
runtime and tool, the declaring file of each referenced ChatML hook script and,
for a ``src`` script, the script file itself. After instantiation (before
anything is published) so must the files pinned then: each script-mode
tool's script and each executable hook (:func:`verify_files`). A source matches when its folder
(symlinks resolved) is the entry's ``canonical_root`` or below it, its SHA-256
is listed, the repository identity (``OCHAT_SHELL_REPOSITORY_IDENTITY``) equals
the entry's (both absent counts as equal), the manifest's signer is listed
(an empty ``signer_ids`` accepts any signer and none), and every runtime
declared in that file asks for no power beyond the entry's ``capabilities``.
Anything else is ``shell.trusted_source_mismatch``; an unusable policy file is
``shell.trusted_source_load_failed``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from chatmd.ir import Prompt, SrcSource
from runtime.shell.strict_json import (
    ShapeError,
    bool_field,
    exact_object,
    load_json_file,
    string_field,
    string_list,
)

#: The capability ceilings of an entry, in the order they are reported.
CEILINGS = ("network", "child_processes", "arbitrary_code", "privilege_change",
            "external_backends", "executable_hooks", "model_reviewers", "durable_approvals")


@dataclass(frozen=True)
class TrustedEntry:
    id: str
    canonical_root: str
    repository_identity: str | None
    source_sha256: frozenset[str]
    signer_ids: tuple[str, ...]
    capabilities: Mapping[str, bool]


@dataclass(frozen=True)
class Source:
    """One file the manifest was built from: ``file`` as displayed, its folder and digest."""

    file: str
    source_dir: str
    sha256: str


@dataclass(frozen=True)
class Mismatch:
    source: Source
    reason: str


def _entry(data: Any, index: int) -> TrustedEntry:
    what = f"entries[{index}]"
    data = exact_object(data, what, ("id", "canonical_root", "source_sha256", "capabilities"),
                        ("repository_identity", "signer_ids"))
    caps = exact_object(data["capabilities"], f"{what}.capabilities", CEILINGS)
    digests = string_list(data, "source_sha256", what)
    signers = string_list(data, "signer_ids", what) if "signer_ids" in data else ()
    root = string_field(data, "canonical_root", what)
    assert root is not None
    if not os.path.isabs(root):
        raise ShapeError(f"{what}.canonical_root must be an absolute path")
    return TrustedEntry(
        str(string_field(data, "id", what)), os.path.realpath(root),
        string_field(data, "repository_identity", what, optional=True),
        frozenset(d.lower() for d in digests), signers,
        {name: bool_field(caps, name, f"{what}.capabilities") for name in CEILINGS})


def parse_trusted_sources(data: Any) -> tuple[TrustedEntry, ...]:
    """The entries of a decoded policy; raises :class:`ShapeError` on any shape problem."""
    data = exact_object(data, "the trusted-source policy", ("entries",))
    if not isinstance(data["entries"], list):
        raise ShapeError("entries must be a list")
    entries = tuple(_entry(item, index) for index, item in enumerate(data["entries"]))
    ids = [entry.id for entry in entries]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ShapeError(f"duplicate entry id {duplicates[0]!r}")
    return entries


def load_trusted_sources(path: str) -> tuple[TrustedEntry, ...]:
    return parse_trusted_sources(load_json_file(path))


def manifest_sources(payload: Mapping[str, Any], prompt: Prompt | None) -> list[Source]:
    """Every distinct source of the manifest (runtimes, tools, referenced hook scripts)."""
    found: dict[tuple[str, str, str], Source] = {}

    def add(file: str, source_dir: str, sha256: str) -> None:
        found.setdefault((file, source_dir, sha256), Source(file, source_dir, sha256))

    for record in (*(payload.get("runtimes") or ()), *(payload.get("tools") or ())):
        source = record.get("source") or {}
        add(str(source.get("file", "")), str(source.get("source_dir", "")),
            str(source.get("sha256", "")))
    referenced = {script["id"] for script in payload.get("extension_scripts") or ()}
    for script in prompt.scripts if prompt is not None else ():
        if script.id not in referenced or script.provenance is None:
            continue
        provenance = script.provenance
        add(provenance.file, provenance.source_dir, provenance.source_sha256)
        if isinstance(script.source, SrcSource) and script.source.path:
            add(script.source.path, os.path.dirname(script.source.path), script.source_hash)
    return sorted(found.values(), key=lambda s: (s.file, s.source_dir, s.sha256))


def requested_powers(runtime: Mapping[str, Any]) -> set[str]:
    """The ceilings a compiled runtime record needs (see :data:`CEILINGS`)."""
    caps = runtime["capabilities"]
    needed = {name for name in CEILINGS[:4] if caps.get(name)}
    if any(b.get("kind") == "external_backend" for b in runtime["backends"]["backends"]):
        needed.add("external_backends")
    reviewers = runtime["reviewers"].get("reviewers") or ()
    hooks = [r.get("hook") for r in reviewers]
    hooks += [i.get("hook") for i in runtime["interceptors"].get("interceptors") or ()]
    hooks += [a.get("hook") for a in runtime["effect_analysis"].get("analyzers") or ()]
    hooks.append((runtime["audit"].get("filter") or {}).get("hook"))
    if any(hooks):
        needed.add("executable_hooks")
    if any(r.get("kind") == "model" for r in reviewers):
        needed.add("model_reviewers")
    if "durable_exact" in runtime["approvals"].get("scopes", ()):
        needed.add("durable_approvals")
    return needed


def _under(root: str, folder: str) -> bool:
    path = os.path.realpath(folder) if folder else ""
    return path == root or path.startswith(root.rstrip("/") + "/")


def _why_not(entry: TrustedEntry, source: Source, runtimes: Iterable[Mapping[str, Any]],
             repository: str | None, signer: str | None) -> str | None:
    if not _under(entry.canonical_root, source.source_dir):
        return f"not under {entry.canonical_root}"
    if source.sha256.lower() not in entry.source_sha256:
        return f"digest {source.sha256} is not listed"
    if entry.repository_identity != repository:
        return "repository identity differs"
    if entry.signer_ids and signer not in entry.signer_ids:
        return "the manifest is not signed by a listed signer"
    for runtime in runtimes:
        beyond = sorted(requested_powers(runtime) - {n for n, ok in entry.capabilities.items()
                                                     if ok})
        if beyond:
            return f"runtime {runtime['id']} needs {', '.join(beyond)}"
    return None


def verify_sources(entries: tuple[TrustedEntry, ...], payload: Mapping[str, Any],
                   prompt: Prompt | None, *, repository_identity: str | None,
                   signer_id: str | None) -> tuple[dict[str, str], list[Mismatch]]:
    """(source file -> trusted entry id, mismatches) for every source of the manifest."""
    return verify_files(entries, manifest_sources(payload, prompt), payload.get("runtimes") or (),
                        repository_identity=repository_identity, signer_id=signer_id)


def verify_files(entries: tuple[TrustedEntry, ...], sources: Iterable[Source],
                 runtimes: Iterable[Mapping[str, Any]] = (), *,
                 repository_identity: str | None,
                 signer_id: str | None) -> tuple[dict[str, str], list[Mismatch]]:
    """(file -> trusted entry id, mismatches) for ``sources``; a runtime record whose
    source is one of them must stay within the matching entry's capabilities."""
    trusted: dict[str, str] = {}
    problems: list[Mismatch] = []
    records = list(runtimes)
    for source in sources:
        declared = [r for r in records if (r["source"].get("file"), r["source"].get("sha256"))
                    == (source.file, source.sha256)]
        reasons = []
        for entry in entries:
            reason = _why_not(entry, source, declared, repository_identity, signer_id)
            if reason is None:
                trusted[source.file] = entry.id
                break
            reasons.append(f"{entry.id}: {reason}")
        else:
            problems.append(Mismatch(source, "; ".join(reasons) or "no trusted-source entry"))
    return trusted, problems
