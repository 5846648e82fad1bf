"""Byte-level damage of valid test data: the seeds, and the edits applied to them.

Seeds (:func:`chatmd_seeds`, :func:`chatml_seeds`, :func:`bytecode_seeds`)
are the project's test data (``tests/*/testdata``) and the shared conformance
texts (``../shared/conformance``: every case's document or source, and the
prompt pages), read at test time; bytecode seeds are the ChatML seeds that
compile, serialised. :func:`damaged` picks a seed and applies one to four
edits: delete a range, insert bytes (random, or a token of the language),
flip bits, truncate, duplicate a range, overwrite a byte.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

from tests.support import CONFORMANCE, REPO_ROOT

TESTS = REPO_ROOT / "tests"
_CHATMD_SUFFIXES = (".chatmd", ".md")
_MAX_SEED_BYTES = 64 * 1024


def _files(suffixes: tuple[str, ...]) -> list[bytes]:
    found = []
    for base in (TESTS, CONFORMANCE):
        for path in sorted(base.rglob("*")):
            if ("testdata" in path.parts or base == CONFORMANCE) and path.suffix in suffixes \
                    and path.is_file() and "fuzz" not in path.parts:
                data = path.read_bytes()
                if len(data) <= _MAX_SEED_BYTES:
                    found.append(data)
    return found


def _cases(relative: str, key: str) -> list[bytes]:
    path = CONFORMANCE / relative
    if not path.is_file():
        return []
    with path.open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    return [row[key].encode("utf-8") for row in rows if isinstance(row.get(key), str)]


@functools.cache
def chatmd_seeds() -> tuple[bytes, ...]:
    """Valid (and deliberately invalid) ChatMD test documents."""
    return tuple(_files(_CHATMD_SUFFIXES) + _cases("chatmd/cases.jsonl", "document"))


@functools.cache
def chatml_seeds() -> tuple[bytes, ...]:
    """ChatML test programs."""
    return tuple(_files((".chatml",)) + _cases("chatml/cases.jsonl", "source"))


@functools.cache
def bytecode_seeds() -> tuple[bytes, ...]:
    """The serialised bytecode of the first ChatML seeds that compile."""
    from chatcommon.diagnostics import DiagnosticError
    from chatml.build import build_source
    from chatml.bytecode.serialize import serialize

    out = []
    for seed in chatml_seeds():
        try:
            out.append(serialize(build_source(seed.decode("utf-8"), "seed.chatml").module))
        except (DiagnosticError, UnicodeDecodeError):
            continue
        if len(out) >= 40:
            break
    return tuple(out)


_TOKENS = [b"<", b">", b"/>", b"</", b'"', b"'", b"=", b"<user>", b"</user>", b"RAW|", b"|RAW",
           b"<!--", b"-->", b"&#0;", b"\0", b"\xff", b"\xc3", b"\xed\xa0\x80", b"\r", b"\n",
           b"(*", b"*)", b"let ", b" in ", b"match ", b"| ", b"->", b"`A(", b"struct", b"end",
           b"\\", b"\\u{", b";;", b"{", b"}", b"[", b"]", b"9" * 30, b"\xef\xbb\xbf"]


@st.composite
def _edit(draw: Any, data: bytes) -> bytes:
    size = len(data)
    at = draw(st.integers(0, size))
    end = draw(st.integers(at, min(size, at + 64)))
    kind = draw(st.sampled_from(["delete", "insert", "token", "flip", "truncate", "duplicate",
                                 "overwrite"]))
    if kind == "delete":
        return data[:at] + data[end:]
    if kind == "insert":
        return data[:at] + draw(st.binary(min_size=1, max_size=8)) + data[at:]
    if kind == "token":
        return data[:at] + draw(st.sampled_from(_TOKENS)) + data[at:]
    if kind == "truncate":
        return data[:at]
    if kind == "duplicate":
        times = draw(st.integers(1, 8))
        return data[:end] + data[at:end] * times + data[end:]
    if at == size:
        return data
    if kind == "flip":
        return data[:at] + bytes([data[at] ^ (1 << draw(st.integers(0, 7)))]) + data[at + 1:]
    return data[:at] + bytes([draw(st.integers(0, 255))]) + data[at + 1:]


@st.composite
def damaged(draw: Any, seeds: Sequence[bytes]) -> bytes:
    """One of ``seeds`` after one to four random edits."""
    if not seeds:
        raise AssertionError("no seeds: the test data and ../shared/conformance must exist")
    data = draw(st.sampled_from(seeds))
    for _ in range(draw(st.integers(1, 4))):
        data = draw(_edit(data))
    return data
