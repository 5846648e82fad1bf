"""Where a top-level declaration came from: file, position, folders, namespace, digest.

Import expansion attaches a :class:`Provenance` to every top-level node; the
declaration layer keeps it on every declaration so that later phases (script
compilation, shell runtime compilation, diagnostics) can point back at the
file that declared something and qualify its ids with the import namespace.
"""

from __future__ import annotations

import attrs

from chatcommon.records import record_builder


@attrs.frozen(weakref_slot=False)
class Provenance:
    """The origin of one top-level element.

    ``file`` is the root prompt's display name (``<prompt>`` when it has none)
    or, for imported files, the import ``src`` as written. ``source_dir`` is the
    folder of the declaring file; ``prompt_dir`` that of the root prompt.
    ``namespace`` is the combined import namespace (``outer:inner``) or None.
    ``source_sha256`` is the lower-hex SHA-256 of the declaring file's text.
    """

    file: str
    line: int
    column: int
    source_dir: str
    prompt_dir: str
    namespace: str | None = None
    source_sha256: str = ""


class _ProvenanceBuilder:
    """``_ProvenanceBuilder(*fields)`` is ``Provenance(*fields)``, made cheaper: every field
    positionally (:func:`chatcommon.records.record_builder`); one per top-level element."""

    __slots__ = ("file", "line", "column", "source_dir", "prompt_dir", "namespace",
                 "source_sha256")

    def __init__(self, file: str, line: int, column: int, source_dir: str, prompt_dir: str,
                 namespace: str | None, source_sha256: str) -> None:
        self.file = file
        self.line = line
        self.column = column
        self.source_dir = source_dir
        self.prompt_dir = prompt_dir
        self.namespace = namespace
        self.source_sha256 = source_sha256
        self.__class__ = Provenance  # type: ignore[assignment]  # the record it builds (same layout)


#: ``new_provenance(*fields)`` is ``Provenance(*fields)``, made cheaper (:func:`chatcommon.records.record_builder`).
new_provenance = record_builder(Provenance, _ProvenanceBuilder)


def qualify(namespace: str | None, ident: str) -> str:
    """Qualify ``ident`` with ``namespace`` unless it already contains ``:`` (spec §3.5)."""
    if ":" in ident or not namespace:
        return ident
    return f"{namespace}:{ident}"


def join_namespaces(parent: str | None, own: str | None) -> str | None:
    """The effective namespace of an import: ``parent:own``, or whichever is set."""
    if parent and own:
        return f"{parent}:{own}"
    return own or parent
