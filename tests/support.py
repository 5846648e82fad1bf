"""Helpers for tests: locating the shared corpus and loading its JSON-lines cases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = (REPO_ROOT / ".." / "shared").resolve()
CONFORMANCE = SHARED / "conformance"


def load_cases(relative: str) -> list[dict[str, Any]]:
    """The cases of ``../shared/conformance/<relative>`` (a .jsonl file), read at test time."""
    path = CONFORMANCE / relative
    if not path.is_file():
        raise FileNotFoundError(f"conformance corpus not found at {path}; "
                                "the project expects ../shared beside it")
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]
