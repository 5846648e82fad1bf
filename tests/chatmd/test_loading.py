"""Reading prompt files: the digest taken from the bytes read is the digest of the text."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from chatmd.loading import UnreadableFile, read_source, read_text, sha256_hex


@pytest.mark.parametrize("data", [b"", b"<user>hi</user>\n", "é ✓ \U0001f600".encode(),
                                  b"\xef\xbb\xbf<user>bom</user>", b"\xef\xbb\xbf",
                                  b"x" * (300 * 1024)])  # (past the small-text hasher)
def test_read_source_is_read_text_and_its_digest(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "p.chatmd"
    path.write_bytes(data)
    text, digest = read_source(str(path))
    assert text == read_text(str(path))
    assert digest == sha256_hex(text) == hashlib.sha256(text.encode()).hexdigest()


def test_read_source_refuses_what_read_text_refuses(tmp_path: Path) -> None:
    path = tmp_path / "bad.chatmd"
    path.write_bytes(b"ok \xff")
    with pytest.raises(UnreadableFile, match="not UTF-8"):
        read_source(str(path))
    with pytest.raises(UnreadableFile, match="directory|not a regular file"):
        read_source(str(tmp_path))
