"""The one-line summaries ``chatmdc`` commands print after their diagnostics."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chatcommon.diagnostics import Diagnostic

__all__ = ["clean_summary_line", "summary_counts", "summary_line"]


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def summary_line(diagnostics: Sequence[Diagnostic], files: int) -> str:
    """``chatmdc: 2 errors, 1 warning in 1 file``."""
    errors = sum(1 for d in diagnostics if d.is_error)
    warnings = len(diagnostics) - errors
    return (f"chatmdc: {_plural(errors, 'error')}, {_plural(warnings, 'warning')} "
            f"in {_plural(files, 'file')}")


def clean_summary_line(files: int) -> str:
    """``chatmdc: 1 file checked, no problems`` (what a clean ``check`` prints)."""
    return f"chatmdc: {_plural(files, 'file')} checked, no problems"


def summary_counts(diagnostics: Sequence[Diagnostic], files: int) -> dict[str, int]:
    errors = sum(1 for d in diagnostics if d.is_error)
    return {"errors": errors, "warnings": len(diagnostics) - errors, "files": files}
