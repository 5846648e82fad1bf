"""Data-driven ChatMD tests: expected diagnostics written beside the offending line.

Every ``*.chatmd`` file under ``tests/chatmd/testdata/`` whose name does not
start with ``_`` is a case (``_``-files are helpers that cases import). A case
states the diagnostics it must produce with marker comments:

``<!--! error chatmd.code -->``
    a diagnostic of that severity and code starting on this marker's line;
``<!--! error chatmd.code "fragment" -->``
    ... whose message also contains ``fragment``;
``<!--!@L:C warning chatmd.code -->``
    ... starting at line L, column C (for positions a comment cannot share,
    such as inside a RAW block or an unterminated comment);
``<!--!@_helper.chatmd:L:C error chatmd.code -->``
    ... reported in another file (a helper the case imports), named as the
    diagnostic names it (the import ``src`` as written).

Markers are ordinary comments, so they never change what the prompt means.
The case passes when every produced diagnostic is matched by exactly one
marker and every marker by one diagnostic. A file without markers must be
clean. Adding a case never needs Python: drop a file in ``testdata/``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import attrs

from chatcommon.diagnostics import Diagnostic

TESTDATA = Path(__file__).resolve().parent / "testdata"

_MARKER = re.compile(
    r"<!--!(?:@(?:(?P<file>[^\s:]+):)?(?P<line>\d+):(?P<column>\d+))?\s+"
    r"(?P<severity>error|warning|note)\s+"
    r"(?P<code>[\w.:-]+)(?:\s+\"(?P<fragment>[^\"]*)\")?\s*-->"
)


@attrs.frozen
class Expectation:
    line: int
    column: int | None
    severity: str
    code: str
    fragment: str | None
    file: str | None = None

    def matches(self, diagnostic: Diagnostic) -> bool:
        return ((self.file is None or diagnostic.file == self.file)
                and diagnostic.line == self.line
                and (self.column is None or diagnostic.column == self.column)
                and diagnostic.severity.value == self.severity
                and diagnostic.code == self.code
                and (self.fragment is None or self.fragment in diagnostic.message))


def cases() -> list[Path]:
    return sorted(p for p in TESTDATA.rglob("*.chatmd") if not p.name.startswith("_"))


def expectations(text: str) -> list[Expectation]:
    found = []
    for match in _MARKER.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        column = None
        if match["line"]:
            line, column = int(match["line"]), int(match["column"])
        found.append(Expectation(line, column, match["severity"], match["code"],
                                 match["fragment"], match["file"]))
    return found


def check_case(path: Path, run: Callable[[Path], list[Diagnostic]]) -> None:
    """Run ``run`` on ``path`` and compare its diagnostics with the file's markers."""
    text = path.read_text(encoding="utf-8")
    wanted = expectations(text)
    produced = run(path)
    unmatched = list(produced)
    missing = []
    for expectation in wanted:
        for diagnostic in unmatched:
            if expectation.matches(diagnostic):
                unmatched.remove(diagnostic)
                break
        else:
            missing.append(expectation)
    problems = [f"expected but not reported: {e}" for e in missing]
    problems += [f"reported but not expected: {d}" for d in unmatched]
    assert not problems, f"{path.name}:\n  " + "\n  ".join(problems)
