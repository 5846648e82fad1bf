"""Ed25519 manifest signatures (shell spec §6.9 step 2).

A signature document (the file named by ``OCHAT_SHELL_MANIFEST_SIGNATURE``)::

    {"key_id": "release-key", "algorithm": "ed25519",
     "payload": {"canonical_manifest_sha256": "<hex>",
                 "encoding_version": "chatmd.shell.compile.manifest.py.v1",
                 "builtin_versions": [["runtime id", "builtin:NAME@N"], ...],
                 "issuer": "ops@example.org", "audience": ["ochat"],
                 "issued_at_unix": 1767225600, "expires_at_unix": 1798761600 | null,
                 "imported_source_sha256": [["file", "<hex>"], ...]},
     "signature_base64": "<64 bytes, base64>"}

The signed bytes are the payload's canonical JSON (keys sorted, no
whitespace, UTF-8). The public key set (``OCHAT_SHELL_MANIFEST_PUBLIC_KEYS``)
is a JSON list of ``{"key_id", "public_key_base64"}`` (raw 32-byte Ed25519
keys). Verification checks, in order: the algorithm, the audience
(``OCHAT_SHELL_SIGNATURE_AUDIENCE``, default ``ochat``), the validity window,
that the payload describes exactly this manifest (digest, encoding, concrete
built-in profile versions, every declaring file's digest), the key, then the
signature itself. Each failure has its own ``shell.signature_*`` code.

:func:`signature_payload` and :func:`sign_manifest` produce the document (for
``chatmdc shell sign`` and tests); a runtime only ever holds public keys.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from runtime.shell.errors import InstantiationError
from runtime.shell.strict_json import (
    ShapeError,
    exact_object,
    int_field,
    load_json_file,
    string_field,
)

ALGORITHM = "ed25519"
DEFAULT_AUDIENCE = "ochat"
_PAYLOAD_FIELDS = ("canonical_manifest_sha256", "encoding_version", "builtin_versions",
                   "issuer", "audience", "issued_at_unix", "expires_at_unix",
                   "imported_source_sha256")


@dataclass(frozen=True)
class SignatureDocument:
    key_id: str
    algorithm: str
    payload: Mapping[str, Any]
    signature: bytes


def _pairs(values: set[tuple[str, str]]) -> list[list[str]]:
    return [list(pair) for pair in sorted(values)]


def signature_payload(manifest: Mapping[str, Any], digest: str, *, issuer: str,
                      audience: list[str], issued_at_unix: int,
                      expires_at_unix: int | None) -> dict[str, Any]:
    """The claims a signature over the manifest ``digest`` (payload ``manifest``) makes."""
    records = [*(manifest.get("runtimes") or ()), *(manifest.get("tools") or ())]
    return {
        "canonical_manifest_sha256": digest,
        "encoding_version": manifest["encoding_version"],
        "builtin_versions": _pairs({(r["id"], r["resolved_profile"])
                                    for r in manifest.get("runtimes") or ()
                                    if r.get("resolved_profile")}),
        "issuer": issuer,
        "audience": sorted(set(audience)),
        "issued_at_unix": issued_at_unix,
        "expires_at_unix": expires_at_unix,
        "imported_source_sha256": _pairs({(str(r["source"]["file"]), str(r["source"]["sha256"]))
                                          for r in records}),
    }


def canonical_bytes(payload: Mapping[str, Any]) -> bytes:
    return json.dumps(payload, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False).encode("utf-8")


def sign_manifest(payload: Mapping[str, Any], private_key: Ed25519PrivateKey,
                  key_id: str) -> dict[str, Any]:
    """The signature document for ``payload`` (see :func:`signature_payload`)."""
    signature = private_key.sign(canonical_bytes(payload))
    return {"key_id": key_id, "algorithm": ALGORITHM, "payload": dict(payload),
            "signature_base64": base64.b64encode(signature).decode("ascii")}


def _b64(value: str, code: str, what: str) -> bytes:
    try:
        return base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise InstantiationError(code, f"{what} is not valid base64") from None


def _load(path: str, code: str) -> Any:
    try:
        return load_json_file(path)
    except ShapeError as error:
        raise InstantiationError(code, str(error)) from None


def load_signature(path: str) -> SignatureDocument:
    code = "shell.signature_load_failed"
    try:
        data = exact_object(_load(path, code), "the signature document",
                            ("key_id", "algorithm", "payload", "signature_base64"))
        payload = exact_object(data["payload"], "payload", _PAYLOAD_FIELDS)
        key_id = string_field(data, "key_id", "signature")
        algorithm = string_field(data, "algorithm", "signature")
        encoded = string_field(data, "signature_base64", "signature")
    except ShapeError as error:
        raise InstantiationError(code, f"{path}: {error}") from None
    assert key_id is not None and algorithm is not None and encoded is not None
    signature = _b64(encoded, "shell.signature_encoding", "signature_base64")
    return SignatureDocument(key_id, algorithm, payload, signature)


def load_public_keys(path: str) -> dict[str, bytes]:
    """key id -> raw public key bytes."""
    code = "shell.signature_keys_load_failed"
    data = _load(path, code)
    if not isinstance(data, list):
        raise InstantiationError(code, f"{path}: the public key set must be a JSON list")
    keys: dict[str, bytes] = {}
    for index, item in enumerate(data):
        try:
            entry = exact_object(item, f"key {index}", ("key_id", "public_key_base64"))
            key_id = str(string_field(entry, "key_id", f"key {index}"))
            encoded = str(string_field(entry, "public_key_base64", f"key {index}"))
        except ShapeError as error:
            raise InstantiationError(code, f"{path}: {error}") from None
        if key_id in keys:
            raise InstantiationError(code, f"{path}: duplicate key id {key_id!r}")
        keys[key_id] = _b64(encoded, "shell.signature_public_key", f"public key {key_id}")
    return keys


def _times(claims: Mapping[str, Any]) -> tuple[int, int | None]:
    try:
        issued = int_field(dict(claims), "issued_at_unix", "payload")
        expires = int_field(dict(claims), "expires_at_unix", "payload", optional=True)
    except ShapeError as error:
        raise InstantiationError("shell.signature_load_failed", str(error)) from None
    assert issued is not None
    return issued, expires


def _check_claims(document: SignatureDocument, expected: Mapping[str, Any], audience: str,
                  now_unix: int) -> None:
    claims = document.payload
    if document.algorithm.lower() != ALGORITHM:
        raise InstantiationError("shell.signature_algorithm",
                                 f"only ed25519 signatures are accepted, not "
                                 f"{document.algorithm!r}")
    if not isinstance(claims.get("audience"), list) or audience not in claims["audience"]:
        raise InstantiationError("shell.signature_audience",
                                 f"the signature's audience does not include {audience!r}")
    issued, expires = _times(claims)
    if issued > now_unix:
        raise InstantiationError("shell.signature_not_yet_valid",
                                 "the signature's issue time is in the future")
    if expires is not None and expires < now_unix:
        raise InstantiationError("shell.signature_expired", "the signature has expired")
    if dict(claims) != dict(expected):
        changed = [k for k in _PAYLOAD_FIELDS if claims.get(k) != expected.get(k)]
        raise InstantiationError("shell.signature_payload_mismatch",
                                 "the signature does not describe this manifest: "
                                 f"{', '.join(changed)} differ(s)",
                                 "re-sign the manifest after any change to the prompt, its "
                                 "imports or a built-in profile version")


def verify_signature(document: SignatureDocument, keys: Mapping[str, bytes],
                     manifest: Mapping[str, Any], digest: str, *, audience: str,
                     now_unix: int) -> None:
    """Raise :class:`InstantiationError` unless ``document`` signs this manifest."""
    claims = document.payload
    issuer = claims.get("issuer")
    if not isinstance(issuer, str) or not issuer:
        raise InstantiationError("shell.signature_load_failed",
                                 "payload.issuer must be a non-empty string")
    audience_claim = claims.get("audience")
    issued, expires = _times(claims)
    expected = signature_payload(
        manifest, digest, issuer=issuer,
        audience=[a for a in audience_claim if isinstance(a, str)]
        if isinstance(audience_claim, list) else [],
        issued_at_unix=issued, expires_at_unix=expires)
    _check_claims(document, expected, audience, now_unix)
    raw = keys.get(document.key_id)
    if raw is None:
        raise InstantiationError("shell.signature_key_missing",
                                 f"unknown public key: {document.key_id}")
    try:
        public = Ed25519PublicKey.from_public_bytes(raw)
    except ValueError:
        raise InstantiationError("shell.signature_public_key",
                                 f"public key {document.key_id} is not an Ed25519 key") from None
    try:
        public.verify(document.signature, canonical_bytes(claims))
    except InvalidSignature:
        raise InstantiationError("shell.signature_invalid",
                                 "Ed25519 signature verification failed") from None
