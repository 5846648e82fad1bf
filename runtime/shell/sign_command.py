"""``chatmdc shell keygen`` and ``chatmdc shell sign``: producing manifest signatures (§6.9).

``keygen KEY_ID PRIVATE_KEY`` writes a new Ed25519 private key (PKCS#8 PEM,
mode 0600, never overwriting a file) and prints its public-key entry
``{"key_id", "public_key_base64"}`` for the ``OCHAT_SHELL_MANIFEST_PUBLIC_KEYS``
list. ``sign PROMPT --key PRIVATE_KEY --key-id ID --issuer NAME [--audience A]...
[--expires-in DURATION] [-o FILE]`` compiles the prompt's shell layer exactly
as ``chatmdc shell exec`` does and prints (or writes atomically) the signature
document :mod:`runtime.shell.signature` verifies. Exit status: 0 done, 1 the
prompt has no shell layer or it does not compile, 2 usage errors (unreadable
or invalid key, bad duration, existing key file, unwritable output).

Importing this module is cheap: ``cryptography`` is imported when a command runs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2


def _fail(message: str, status: int = EXIT_USAGE) -> int:
    sys.stderr.write(f"chatmdc: {message}\n")
    return status


def run_keygen(args: argparse.Namespace) -> int:
    import base64

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import (
        Encoding,
        NoEncryption,
        PrivateFormat,
        PublicFormat,
    )

    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
    try:
        fd = os.open(args.private_key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as error:
        return _fail(f"cannot create {args.private_key}: {error.strerror}")
    with os.fdopen(fd, "wb") as handle:
        handle.write(pem)
    raw = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    entry = {"key_id": args.key_id, "public_key_base64": base64.b64encode(raw).decode("ascii")}
    sys.stdout.write(json.dumps(entry) + "\n")
    return EXIT_OK


def _private_key(path: str) -> Any:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    with open(path, "rb") as handle:
        key = load_pem_private_key(handle.read(), password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError("not an Ed25519 private key")
    return key


def _expiry(text: str | None, now: int) -> int | None:
    from chatmd.shell.declare.values import ValueProblem, parse_duration

    if text is None:
        return None
    try:
        return now + int(parse_duration(text))
    except ValueProblem as error:
        raise ValueError(f"--expires-in: {error}") from None


def run_sign(args: argparse.Namespace) -> int:
    from chatcommon.atomic import atomic_write_bytes
    from runtime.shell.errors import InstantiationError
    from runtime.shell.host import compile_for_execution, load_prompt_file
    from runtime.shell.signature import sign_manifest, signature_payload

    now = int(time.time())
    try:
        expires = _expiry(args.expires_in, now)
    except ValueError as error:
        return _fail(str(error))
    try:
        key = _private_key(args.key)
    except (OSError, ValueError, TypeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else error
        return _fail(f"cannot use the key {args.key}: {reason}")
    if not os.path.isfile(args.prompt):
        return _fail(f"cannot read {args.prompt}")
    try:
        compiled, _admin = compile_for_execution(load_prompt_file(args.prompt),
                                                 dict(os.environ))
    except InstantiationError as error:
        sys.stderr.write(error.render() + "\n")
        return EXIT_REFUSED
    if compiled is None or compiled.manifest is None:
        return _fail(f"{args.prompt} declares no shell runtime or tool to sign", EXIT_REFUSED)
    claims = signature_payload(compiled.manifest.payload, compiled.manifest.sha256,
                               issuer=args.issuer, audience=args.audience or ["ochat"],
                               issued_at_unix=now, expires_at_unix=expires)
    text = json.dumps(sign_manifest(claims, key, args.key_id), indent=1) + "\n"
    if args.output is None:
        sys.stdout.write(text)
        return EXIT_OK
    try:
        atomic_write_bytes(args.output, text.encode("utf-8"), create_folders=False)
    except OSError as error:
        return _fail(f"cannot write {args.output}: {error.strerror or error}")
    return EXIT_OK


def add_sign_commands(actions: argparse._SubParsersAction) -> None:
    """Add ``keygen`` and ``sign`` to the ``chatmdc shell`` subcommands."""
    keygen = actions.add_parser("keygen", help="create an Ed25519 key for manifest signatures "
                                "and print its public-key entry")
    keygen.add_argument("key_id", metavar="KEY_ID")
    keygen.add_argument("private_key", metavar="PRIVATE_KEY",
                        help="the PEM file to create (mode 0600; never overwritten)")
    keygen.set_defaults(run=run_keygen)
    sign = actions.add_parser("sign", help="sign a prompt's shell manifest (Ed25519)")
    sign.add_argument("prompt", metavar="PROMPT")
    sign.add_argument("--key", required=True, metavar="PRIVATE_KEY",
                      help="the Ed25519 private key (PEM, as chatmdc shell keygen writes it)")
    sign.add_argument("--key-id", required=True, metavar="ID")
    sign.add_argument("--issuer", required=True, metavar="NAME")
    sign.add_argument("--audience", action="append", metavar="NAME",
                      help="an audience the signature is for (repeatable; default ochat)")
    sign.add_argument("--expires-in", metavar="DURATION",
                      help="validity, e.g. 720h (default: no expiry)")
    sign.add_argument("-o", "--output", metavar="FILE",
                      help="write the signature here (default: standard output)")
    sign.set_defaults(run=run_sign)
