"""Output files named on a command line (``-o OUT``): the diagnostic when one cannot be written.

Both CLIs write their artefacts with ``atomic_write_*(..., create_folders=False)``
(:mod:`chatcommon.atomic`): a missing output folder is a usage error, not a
reason to create folders. :func:`unwritable_output` is the diagnostic they
report then (phase ``output``; the commands exit 2).
"""

from __future__ import annotations

import os

from chatcommon.atomic import MissingOutputFolder
from chatcommon.diagnostics import Diagnostic


def unwritable_output(path: str, error: OSError, code: str) -> Diagnostic:
    """``code`` (e.g. ``chatml.unwritable_output``) for ``path`` that ``error`` kept from being written."""
    if isinstance(error, MissingOutputFolder):
        folder = os.path.dirname(os.path.abspath(path))
        return Diagnostic.for_file(
            path, code, f"cannot write {path}: the folder {folder} does not exist",
            phase="output", hint="create the folder first, or choose another output path")
    reason = error.strerror or str(error)
    return Diagnostic.for_file(path, code, f"cannot write {path}: {reason}", phase="output")
