"""Data-driven test harness for the ChatML phases (in the style of starlark-go's testdata).

Each file ``tests/chatml/testdata/<phase>/<name>.chatml`` is a ChatML program
whose expectations are written beside the code, in marker comments. A marker
is a comment on one line whose first character after ``(*`` says what it
expects; since comments nest (DECISIONS 6c) markers can sit anywhere, even
inside another comment. Markers are found in the raw text, so do not put
marker-shaped text inside string literals.

Diagnostics (every phase)::

    let x = (1 +  (*! error chatml.syntax_error "unexpected" *)
    if c then a else b; d  (*! warning chatml.else_swallows_sequence *)
    print(x)  (*! error chatml.unknown_variable col=7 "Unknown variable 'x'" *)

  ``(*! SEVERITY CODE [col=N] ["REGEX"] *)`` expects one diagnostic of that
  severity (``error``, ``warning`` or ``note``) and code, reported on the
  marker's line, at 1-based column ``N`` when given, whose message matches
  the regular expression (``re.search``) when given. Every diagnostic the
  phase produces must be matched by a marker and every marker by a
  diagnostic (one to one). A diagnostic positioned after the last non-blank
  line (at end of input) counts as being on the last non-blank line.

Types (for the typechecker phase)::

    let f x = x + 1  (*: val f : int -> int *)

  ``(*: val NAME : TYPE *)`` expects the top-level binding ``NAME`` to have
  the printed type ``TYPE`` (compared after collapsing whitespace). Types print
  as ``chatml check`` prints them, as they are at the end of the file: ``'a``
  polymorphic, ``'_a`` weak, a function's outer parentheses dropped. With
  several bindings of ``NAME`` the last one counts. A diagnostic whose span
  starts on line 1 of a file that opens with option markers (a missing
  entry point, reported at the start of the script) is marked on that line.

Output (for the evaluator/VM phase)::

    print(1 + 2)  (*> 3 *)
    print("")     (*>*)

  ``(*> TEXT *)`` expects the line ``TEXT`` on standard output; all output
  markers, in file order, are the program's whole output (one line each;
  ``(*>*)`` is an empty line). A single space after ``>`` and before ``*)``
  is not part of the text.

Runtime errors (for the VM phase) are diagnostics like any other, reported at
the ChatML position of the failing expression with phase ``runtime``::

    print(1 / 0)  (*! error chatml.division_by_zero "Division by zero" *)

  Output printed before the error is still compared with the ``(*> *)`` markers.

File options (any phase)::

    (*# surface: core *)
    (*# max-steps: 1000 *)     (VM: the run's step budget; also max-memory in bytes, max-depth)
    (*# mode: script *)        (types: also check the host contract of the surface's script
                                kind, e.g. a moderator's initial_state and on_event)

  ``(*# KEY: VALUE *)`` sets an option the phase's runner may read
  (:attr:`Expectations.options`); unknown options are an error so typos do not
  silently pass.

A phase runner turns a file into a :class:`Outcome`; :func:`check` compares it
with the file's markers and returns the list of mismatches (empty when the
file passes). Markers a phase does not produce (for example type markers in a
parse test) are ignored unless the outcome provides that kind of result.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import attrs

from chatcommon.diagnostics import Diagnostic

TESTDATA = Path(__file__).resolve().parent / "testdata"

_MARKER = re.compile(r"\(\*([!:>#])(.*?)\*\)")
_DIAGNOSTIC = re.compile(
    r"\s*(?P<severity>error|warning|note)\s+(?P<code>[A-Za-z0-9_.]+)"
    r"(?:\s+col=(?P<col>\d+))?"
    r'(?:\s+"(?P<pattern>(?:[^"\\]|\\.)*)")?\s*\Z'
)
_TYPE = re.compile(r"\s*val\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*:\s*(?P<type>.+?)\s*\Z")
_OPTION = re.compile(r"\s*(?P<key>[a-z][a-z0-9_-]*)\s*:\s*(?P<value>.*?)\s*\Z")

#: Options a runner may read; anything else in a ``(*# ... *)`` marker is an error.
KNOWN_OPTIONS = frozenset({"surface", "name", "line-offset", "column-offset", "mode",
                           "max-steps", "max-memory", "max-depth", "transactional"})


class MarkerError(ValueError):
    """A marker comment that does not follow the syntax above."""


@attrs.frozen
class DiagnosticExpectation:
    line: int
    severity: str
    code: str
    column: int | None
    pattern: str | None

    def describe(self) -> str:
        col = f" col={self.column}" if self.column is not None else ""
        pattern = f' "{self.pattern}"' if self.pattern is not None else ""
        return f"line {self.line}: {self.severity} {self.code}{col}{pattern}"

    def matches(self, diagnostic: Diagnostic, line: int) -> bool:
        return (line == self.line
                and diagnostic.severity.value == self.severity
                and diagnostic.code == self.code
                and (self.column is None or diagnostic.column == self.column)
                and (self.pattern is None or re.search(self.pattern, diagnostic.message)
                     is not None))


@attrs.frozen
class TypeExpectation:
    line: int
    name: str
    type: str


@attrs.frozen
class Expectations:
    """Everything a test file's markers expect."""

    diagnostics: tuple[DiagnosticExpectation, ...]
    types: tuple[TypeExpectation, ...]
    stdout: tuple[str, ...]
    options: Mapping[str, str]
    last_line: int  #: the last non-blank line of the file


@attrs.frozen
class Outcome:
    """What a phase produced for one file (None: the phase does not produce that kind)."""

    diagnostics: tuple[Diagnostic, ...]
    types: Mapping[str, str] | None = None
    stdout: str | None = None


def parse_expectations(text: str) -> Expectations:
    """The markers of a test file; raises :class:`MarkerError` on a malformed marker."""
    diagnostics: list[DiagnosticExpectation] = []
    types: list[TypeExpectation] = []
    stdout: list[str] = []
    options: dict[str, str] = {}
    lines = text.split("\n")
    for number, line in enumerate(lines, start=1):
        for m in _MARKER.finditer(line):
            kind, body = m.group(1), m.group(2)
            if kind == "!":
                d = _DIAGNOSTIC.match(body)
                if d is None:
                    raise MarkerError(f"line {number}: bad diagnostic marker {m.group()!r}")
                pattern = d.group("pattern")
                diagnostics.append(DiagnosticExpectation(
                    number, d.group("severity"), d.group("code"),
                    int(d.group("col")) if d.group("col") else None,
                    pattern.replace("\\\"", "\"") if pattern is not None else None))
            elif kind == ":":
                t = _TYPE.match(body)
                if t is None:
                    raise MarkerError(f"line {number}: bad type marker {m.group()!r}")
                types.append(TypeExpectation(number, t.group("name"),
                                             " ".join(t.group("type").split())))
            elif kind == ">":
                stdout.append(body[1:] if body.startswith(" ") else body)
                if stdout[-1].endswith(" "):
                    stdout[-1] = stdout[-1][:-1]
            else:
                o = _OPTION.match(body)
                if o is None or o.group("key") not in KNOWN_OPTIONS:
                    raise MarkerError(f"line {number}: bad or unknown option {m.group()!r}")
                options[o.group("key")] = o.group("value")
    last_line = max((n for n, line in enumerate(lines, start=1) if line.strip()), default=1)
    return Expectations(tuple(diagnostics), tuple(types), tuple(stdout), options, last_line)


def _effective_line(diagnostic: Diagnostic, last_line: int) -> int:
    return min(diagnostic.line, last_line)


def check_diagnostics(expected: Iterable[DiagnosticExpectation],
                      produced: Iterable[Diagnostic], last_line: int) -> list[str]:
    """Mismatches between markers and diagnostics (matched one to one, in order)."""
    remaining = list(expected)
    problems: list[str] = []
    for diagnostic in produced:
        line = _effective_line(diagnostic, last_line)
        for i, expectation in enumerate(remaining):
            if expectation.matches(diagnostic, line):
                del remaining[i]
                break
        else:
            problems.append(f"unexpected diagnostic at line {diagnostic.line}, column "
                            f"{diagnostic.column}: {diagnostic.severity.value} "
                            f"{diagnostic.code}: {diagnostic.message}")
    problems += [f"missing diagnostic: {e.describe()}" for e in remaining]
    return problems


def check_types(expected: Iterable[TypeExpectation], produced: Mapping[str, str]) -> list[str]:
    problems = []
    for e in expected:
        actual = produced.get(e.name)
        if actual is None:
            problems.append(f"line {e.line}: no binding {e.name!r}")
        elif " ".join(actual.split()) != e.type:
            problems.append(f"line {e.line}: {e.name} : {actual}, expected {e.type}")
    return problems


def check_stdout(expected: Iterable[str], produced: str) -> list[str]:
    want = list(expected)
    got = produced.split("\n")
    if got and got[-1] == "":
        got.pop()
    if want == got:
        return []
    return [f"output differs:\n--- expected\n{chr(10).join(want)}\n--- got\n{chr(10).join(got)}"]


def check(expectations: Expectations, outcome: Outcome) -> list[str]:
    """Every mismatch between a file's markers and a phase's outcome."""
    problems = check_diagnostics(expectations.diagnostics, outcome.diagnostics,
                                 expectations.last_line)
    if outcome.types is not None:
        problems += check_types(expectations.types, outcome.types)
    if outcome.stdout is not None:
        problems += check_stdout(expectations.stdout, outcome.stdout)
    return problems


def case_files(phase: str) -> list[Path]:
    """The test files of ``phase``, sorted by name."""
    return sorted((TESTDATA / phase).glob("*.chatml"))
