"""Manifest authorization (shell spec §6.9 step 3): what the host is asked before instantiation.

:func:`summarise` builds the :class:`ManifestSummary` an authorizer sees:
the digest, counts of runtimes and tools, each runtime's sandbox and powers,
and a leading critical warning when a runtime resolved to ``builtin:yolo@1``.
:func:`authorize_manifest` asks the host's authorizer and binds its answer
to the digest: a refusal is ``shell.manifest_rejected``; an approval for
another digest than the one being instantiated is ``shell.manifest_grant_mismatch``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from runtime.shell.errors import InstantiationError

YOLO = "builtin:yolo@1"


@dataclass(frozen=True)
class ManifestSummary:
    manifest_sha256: str
    runtimes: tuple[str, ...]
    tools: tuple[str, ...]
    warnings: tuple[str, ...]
    lines: tuple[str, ...]

    def render(self) -> str:
        return "\n".join((*self.warnings, *self.lines))


#: An authorizer answers True (authorize once) or False (reject), or returns the
#: digest it authorizes (checked against the manifest being instantiated).
Authorizer = Callable[[ManifestSummary], "bool | str"]


def summarise(payload: Mapping[str, Any], digest: str) -> ManifestSummary:
    runtimes = [r for r in payload.get("runtimes") or ()]
    tools = [t for t in payload.get("tools") or ()]
    warnings = tuple(
        f"CRITICAL: runtime {r['id']} resolves to {YOLO}: no sandbox, every power, all of /"
        for r in runtimes if r.get("resolved_profile") == YOLO)
    lines = [f"shell manifest {digest}: {len(runtimes)} runtime(s), {len(tools)} tool(s)"]
    for runtime in runtimes:
        caps = runtime["capabilities"]
        powers = [name for name in ("network", "child_processes", "arbitrary_code",
                                    "privilege_change") if caps.get(name)]
        lines.append(f"  runtime {runtime['id']}: sandbox {caps['sandbox']}, powers "
                     f"{', '.join(powers) or 'none'}, policy {runtime['policy']['default']}")
    for tool in tools:
        lines.append(f"  tool {tool['name']} ({tool['mode']['type']}) -> {tool['runtime']}")
    return ManifestSummary(digest, tuple(r["id"] for r in runtimes),
                           tuple(t["name"] for t in tools), warnings, tuple(lines))


def authorize_manifest(authorizer: Authorizer | None, payload: Mapping[str, Any],
                       digest: str) -> None:
    """Ask ``authorizer`` (None: the host authorized the prompt by running it)."""
    if authorizer is None:
        return
    answer = authorizer(summarise(payload, digest))
    if answer is False:
        raise InstantiationError("shell.manifest_rejected",
                                 f"the shell manifest {digest} was not authorized")
    if isinstance(answer, str) and answer != digest:
        raise InstantiationError("shell.manifest_grant_mismatch",
                                 f"the authorization was granted for manifest {answer}, not "
                                 f"{digest}")
