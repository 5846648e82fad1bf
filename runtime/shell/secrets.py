"""Secret loading and redaction (shell spec §8.12).

The redaction set is every ``<pass secret="true">`` value plus every
``<secrets>`` source (environment, file, literal); empty values are ignored.
:class:`Redactor` replaces every occurrence of every secret, longest first,
in model-visible output, error messages, approval displays and audit records.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from runtime.shell.errors import InstantiationError
from runtime.shell.paths import HostDirs, resolve_path_expr


class Redactor:
    """Replaces secret values by ``replacement``."""

    def __init__(self, secrets: Iterable[str], replacement: str = "[REDACTED]") -> None:
        values = sorted({s for s in secrets if s}, key=len, reverse=True)
        self.replacement = replacement
        self.secrets: tuple[str, ...] = tuple(values)
        self._pattern = re.compile("|".join(re.escape(v) for v in values)) if values else None

    def __call__(self, text: str) -> str:
        if self._pattern is None or not text:
            return text
        return self._pattern.sub(lambda _m: self.replacement, text)

    def extended(self, more: Iterable[str]) -> Redactor:
        return Redactor((*self.secrets, *more), self.replacement)


def load_secrets(section: Mapping[str, Any], host: Mapping[str, str], dirs: HostDirs,
                 source_dir: str | None, literals: Sequence[str] = ()) -> list[str]:
    """The values of a ``secrets`` manifest section (``literals``: the declared literal values,
    which never enter the manifest)."""
    values: list[str] = []
    literal_index = 0
    for source in section.get("sources") or ():
        kind = source.get("kind")
        if kind == "from_env":
            name = str(source.get("name"))
            if name in host:
                values.append(host[name])
            elif not source.get("optional"):
                raise InstantiationError("shell.environment_missing",
                                         f"secret environment variable {name} is not set")
        elif kind == "from_file":
            path = resolve_path_expr(source.get("path") or {}, dirs, source_dir)
            try:
                with open(path, encoding="utf-8", errors="replace") as handle:
                    text = handle.read()
            except OSError:
                if source.get("optional"):
                    continue
                raise InstantiationError("shell.secret_file_missing",
                                         f"secret file {path} cannot be read") from None
            values.append(text.strip() if source.get("strip", True) else text)
        elif kind == "literal":
            if literal_index < len(literals):
                values.append(literals[literal_index])
            literal_index += 1
    return [value for value in values if value]


def host_environment() -> dict[str, str]:
    return dict(os.environ)
