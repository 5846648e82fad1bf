"""The security phase's trust and signature checks (shell spec §6.9 step 2).

:func:`verify_manifest_security` runs after the administrative ceilings and
before the authorization prompt. It reads, from the host environment:

- ``OCHAT_SHELL_MANIFEST_SIGNATURE`` and ``OCHAT_SHELL_MANIFEST_PUBLIC_KEYS``
  (both or neither; one alone is ``shell.manifest_security_configuration_missing``),
  ``OCHAT_SHELL_SIGNATURE_AUDIENCE`` (default ``ochat``): the manifest's
  Ed25519 signature (:mod:`runtime.shell.signature`), verified first so that
  its key id can be the signer trusted sources ask for;
- ``OCHAT_SHELL_TRUSTED_SOURCES`` and ``OCHAT_SHELL_REPOSITORY_IDENTITY``:
  the trusted-source policy (:mod:`runtime.shell.trusted_sources`).

A check runs when its material is configured, and must run when the
administrative policy says ``require_signature`` / ``require_trusted_source``:
required but unconfigured is ``shell.manifest_security_configuration_missing``.
Every failure is an :class:`~runtime.shell.errors.InstantiationError`:
nothing is published.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chatmd.ir import Prompt
from runtime.shell.errors import InstantiationError

SIGNATURE = "OCHAT_SHELL_MANIFEST_SIGNATURE"
PUBLIC_KEYS = "OCHAT_SHELL_MANIFEST_PUBLIC_KEYS"
AUDIENCE = "OCHAT_SHELL_SIGNATURE_AUDIENCE"
TRUSTED_SOURCES = "OCHAT_SHELL_TRUSTED_SOURCES"
REPOSITORY = "OCHAT_SHELL_REPOSITORY_IDENTITY"


@dataclass(frozen=True)
class SecurityStatus:
    """What the checks established: trusted entry per source file, the signing key and issuer.

    ``entries`` is the trusted-source policy when one is configured (for
    :func:`verify_pinned_files`), ``repository_identity`` the host's identity."""

    trusted_sources: Mapping[str, str]
    signature_key_id: str | None
    signature_issuer: str | None
    entries: tuple[Any, ...] | None = None
    repository_identity: str | None = None


def _missing(variable: str, why: str) -> InstantiationError:
    return InstantiationError("shell.manifest_security_configuration_missing",
                              f"{variable} is not set, but {why}",
                              f"set {variable} (see docs/shell-execution.md, \"Trusted sources "
                              "and signatures\")")


def _signature(environ: Mapping[str, str], required: bool, payload: Mapping[str, Any],
               digest: str, now_unix: int) -> tuple[str, str] | None:
    path, keys_path = environ.get(SIGNATURE), environ.get(PUBLIC_KEYS)
    if not path and not keys_path:
        if required:
            raise _missing(SIGNATURE, "the administrative policy requires a signed manifest")
        return None
    if not keys_path:
        raise _missing(PUBLIC_KEYS, f"{SIGNATURE} names a signature to verify")
    if not path:
        raise _missing(SIGNATURE, f"{PUBLIC_KEYS} names keys to verify a signature with")
    from runtime.shell.signature import load_public_keys, load_signature, verify_signature

    document = load_signature(path)
    verify_signature(document, load_public_keys(keys_path), payload, digest,
                     audience=environ.get(AUDIENCE) or "ochat", now_unix=now_unix)
    return document.key_id, str(document.payload["issuer"])


def _trusted(environ: Mapping[str, str], required: bool, payload: Mapping[str, Any],
             prompt: Prompt | None, signer: str | None
             ) -> tuple[dict[str, str], tuple[Any, ...] | None]:
    path = environ.get(TRUSTED_SOURCES)
    if not path:
        if required:
            raise _missing(TRUSTED_SOURCES,
                           "the administrative policy requires trusted sources")
        return {}, None
    from runtime.shell.strict_json import ShapeError
    from runtime.shell.trusted_sources import load_trusted_sources, verify_sources

    try:
        entries = load_trusted_sources(path)
    except ShapeError as error:
        raise InstantiationError("shell.trusted_source_load_failed", str(error)) from None
    trusted, problems = verify_sources(entries, payload, prompt,
                                       repository_identity=environ.get(REPOSITORY) or None,
                                       signer_id=signer)
    _refuse(problems)
    return trusted, entries


def _refuse(problems: list[Any]) -> None:
    if problems:
        raise InstantiationError(
            "shell.trusted_source_mismatch",
            "; ".join(f"{p.source.file} ({p.source.sha256[:12]}): {p.reason}"
                      for p in problems),
            "add the source's digest, folder and powers to a trusted-source entry, or load "
            "the prompt from a trusted checkout")


def verify_pinned_files(status: SecurityStatus, files: list[tuple[str, str]]) -> None:
    """After instantiation: every pinned ``(path, sha256)`` (script-mode tool scripts,
    executable hooks) must be a trusted source too, when trusted sources are configured."""
    if status.entries is None or not files:
        return
    import os

    from runtime.shell.trusted_sources import Source, verify_files

    sources = sorted({Source(path, os.path.dirname(path), digest) for path, digest in files},
                     key=lambda s: (s.file, s.sha256))
    _trusted_files, problems = verify_files(status.entries, sources,
                                            repository_identity=status.repository_identity,
                                            signer_id=status.signature_key_id)
    _refuse(problems)


def verify_manifest_security(payload: Mapping[str, Any], digest: str, prompt: Prompt | None,
                             admin: Any, environ: Mapping[str, str],
                             now_unix: int | None = None) -> SecurityStatus:
    """Run the configured (or required) signature and trusted-source checks."""
    require_signature = bool(admin is not None and admin.flag("require_signature"))
    require_trusted = bool(admin is not None and admin.flag("require_trusted_source"))
    now = int(time.time()) if now_unix is None else now_unix
    signed = _signature(environ, require_signature, payload, digest, now)
    trusted, entries = _trusted(environ, require_trusted, payload, prompt,
                                signed[0] if signed else None)
    return SecurityStatus(trusted, signed[0] if signed else None,
                          signed[1] if signed else None, entries,
                          environ.get(REPOSITORY) or None)
