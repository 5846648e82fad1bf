"""The lowering context and the strict attribute reader shared by every shell lowerer.

:class:`Lowering` collects the diagnostics of one top-level declaration and
knows its provenance (namespace, declaring folder). :class:`Attributes` applies
the strict attribute rules of spec §1 rule 5 to one element, in this order:
duplicate attribute, unknown attribute, bare flag where a value is read,
required attribute absent or empty; then each typed read parses its value and
reports a positioned diagnostic with the code of the value type.

Lowering does not stop at the first problem (the reference does): every
independent error of the declaration is reported, and the declaration is
returned only when there was none.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

import attrs

from chatcommon.diagnostics import Diagnostic, Severity
from chatcommon.sources import Span
from chatmd.ast import Element, Text
from chatmd.lexer import attribute_spans
from chatmd.provenance import Provenance, qualify
from chatmd.shell.declare.settings import Setting
from chatmd.shell.declare.values import (
    PathExpr,
    ValueProblem,
    parse_bool,
    parse_bytes,
    parse_csv,
    parse_duration,
    parse_enum,
    parse_env_name,
    parse_hex_digest,
    parse_json_strings,
    parse_non_empty,
    parse_optional_duration,
    parse_path,
    parse_positive_int,
    parse_uint,
)
from chatmd.vocabulary import WS

PHASE = "shell.declare"

T = TypeVar("T")

Path = tuple[str, ...]


@attrs.frozen
class Codes:
    """The diagnostic codes used for value errors in one context (runtime or tool)."""

    invalid: str = "shell.invalid_attribute"
    path: str = "shell.invalid_path"
    duration: str = "shell.invalid_duration"
    bytes: str = "shell.invalid_bytes"
    integer: str = "shell.invalid_integer"
    list: str = "shell.invalid_list"
    missing: str = "shell.missing_attribute"
    json: str = "shell.tool_invalid_attribute"
    attribute_paths: bool = True


RUNTIME_CODES = Codes()
TOOL_CODES = Codes(invalid="shell.tool_invalid_attribute", path="shell.tool_invalid_path",
                   integer="shell.tool_invalid_attribute",
                   missing="shell.tool_missing_attribute", attribute_paths=False)


@attrs.frozen
class Lowered(Generic[T]):
    """The result of lowering one declaration: the value when there was no error."""

    value: T | None
    diagnostics: tuple[Diagnostic, ...]

    @property
    def ok(self) -> bool:
        return self.value is not None and not any(d.is_error for d in self.diagnostics)


@attrs.define
class Lowering:
    """State for lowering one top-level declaration."""

    provenance: Provenance
    origin: str = "?"
    diagnostics: list[Diagnostic] = attrs.Factory(list)

    @property
    def namespace(self) -> str | None:
        return self.provenance.namespace

    @property
    def source_dir(self) -> str:
        return self.provenance.source_dir

    def qualify(self, ident: str) -> str:
        return qualify(self.namespace, ident)

    def error(self, span: Span, code: str, message: str, path: Path = (),
              hint: str | None = None, severity: Severity = Severity.ERROR) -> None:
        self.diagnostics.append(Diagnostic.at(span, code, message, phase=PHASE, hint=hint,
                                              path=path, severity=severity))

    def finish(self, value: T | None) -> Lowered[T]:
        failed = any(d.is_error for d in self.diagnostics)
        return Lowered(None if failed else value, tuple(self.diagnostics))


def _joined(names: tuple[str, ...]) -> str:
    return ", ".join(names) if names else "none"


class Attributes:
    """Strict, typed access to the attributes of one element.

    Construction reports duplicate, unknown and bare-flag attributes; each
    ``read`` method parses one attribute and returns its value (or ``default``
    when it is absent or invalid — invalid values are reported).
    """

    def __init__(self, lowering: Lowering, element: Element, path: Path,
                 allowed: tuple[str, ...], codes: Codes = RUNTIME_CODES) -> None:
        self.lowering = lowering
        self.element = element
        self.path = path
        self.codes = codes
        self._spans: tuple[Span, ...] | None = None
        self.values: dict[str, str] = {}
        self._index: dict[str, int] = {}
        self.bad: set[str] = set()
        where = f"<{element.tag}>"
        seen: set[str] = set()
        for index, attribute in enumerate(element.attrs):
            name = attribute.name
            if name in seen:
                lowering.error(self.span_of_index(index), "shell.duplicate_attribute",
                               f"duplicate attribute: {name} (each attribute of {where} may "
                               "appear only once)", path,
                               hint=f"remove the repeated {name}=\"...\"")
                self.bad.add(name)
                self.values.pop(name, None)
                continue
            seen.add(name)
            if name not in allowed:
                lowering.error(self.span_of_index(index), "shell.unknown_attribute",
                               f"unknown attribute: {name} on {where}; expected one of "
                               f"{_joined(allowed)}", path)
                self.bad.add(name)
                continue
            self._index[name] = index
            if attribute.value is None:
                lowering.error(self.span_of_index(index), "shell.attribute_value_required",
                               f"attribute {name} of {where} needs a value: write "
                               f"{name}=\"...\"", path)
                self.bad.add(name)
                continue
            self.values[name] = attribute.value

    # ------------------------------------------------------------ positions

    def span_of_index(self, index: int) -> Span:
        if self._spans is None:
            self._spans = attribute_spans(self.element)
        if index < len(self._spans):
            return self._spans[index]
        return self.element.span

    def span(self, name: str) -> Span:
        """The span of attribute ``name`` (the element's opening tag if absent)."""
        index = self._index.get(name)
        return self.element.span if index is None else self.span_of_index(index)

    def has(self, name: str) -> bool:
        """Whether ``name`` is present with a value (duplicates and flags excluded)."""
        return name in self.values

    def present(self, name: str) -> bool:
        """Whether ``name`` was written at all (even as a flag or a duplicate)."""
        return self.element.has(name)

    # ---------------------------------------------------------- reporting

    def value_error(self, name: str, code: str, message: str, hint: str | None = None) -> None:
        path = self.path + (name,) if self.codes.attribute_paths else ()
        self.lowering.error(self.span(name), code, message, path, hint=hint)
        self.bad.add(name)

    def missing(self, name: str, code: str | None = None) -> None:
        path = self.path + (name,) if self.codes.attribute_paths else ()
        found = "is empty" if self.present(name) else "is missing"
        self.lowering.error(self.element.span, code or self.codes.missing,
                            f"required attribute {name} of <{self.element.tag}> {found}: "
                            f"expected {name}=\"...\" with a non-empty value", path)

    # ------------------------------------------------------------- reads

    def text(self, name: str, *, required: bool = False) -> str | None:
        """The raw value; a required attribute that is absent or empty is reported."""
        value = self.values.get(name)
        if required and not value:
            if name not in self.bad:
                self.missing(name)
            return None
        return value

    def _parsed(self, name: str, parse: Callable[[str], Any], code: str, *,
                required: bool = False, default: Any = None) -> Any:
        value = self.text(name, required=required)
        if value is None:
            return default
        try:
            return parse(value)
        except ValueProblem as problem:
            self.value_error(name, code, f"invalid value for {name}: {problem}")
            return default

    def string(self, name: str, *, required: bool = False, default: str | None = None
               ) -> str | None:
        value = self.text(name, required=required)
        return default if value is None else value

    def non_empty(self, name: str) -> str | None:
        """An optional value that may not be empty when given (ids, function names)."""
        return self._parsed(name, parse_non_empty, self.codes.invalid)

    def sha256(self, name: str = "sha256") -> str | None:
        return self._parsed(name, parse_hex_digest, self.codes.invalid)

    def ref(self, name: str, *, required: bool = False) -> str | None:
        """A reference, qualified with the declaring file's namespace."""
        value = self.text(name, required=required)
        if value is None:
            return None
        if not value:
            self.value_error(name, self.codes.invalid,
                             f"invalid value for {name}: expected a non-empty reference")
            return None
        return self.lowering.qualify(value)

    def boolean(self, name: str, default: bool) -> bool:
        return bool(self._parsed(name, parse_bool, self.codes.invalid, default=default))

    def enum(self, name: str, choices: tuple[str, ...], *, required: bool = False,
             default: str | None = None) -> str | None:
        return self._parsed(name, lambda v: parse_enum(v, choices), self.codes.invalid,
                            required=required, default=default)

    def duration(self, name: str) -> float | None:
        return self._parsed(name, parse_duration, self.codes.duration)

    def byte_size(self, name: str, default: int | None = None) -> int | None:
        return self._parsed(name, parse_bytes, self.codes.bytes, default=default)

    def uint(self, name: str) -> int | None:
        return self._parsed(name, parse_uint, self.codes.integer)

    def positive_int(self, name: str, default: int) -> int:
        return self._parsed(name, parse_positive_int, self.codes.integer, default=default)

    def csv(self, name: str, *, required: bool = False) -> tuple[str, ...] | None:
        return self._parsed(name, parse_csv, self.codes.list, required=required)

    def json_strings(self, name: str, default: tuple[str, ...]) -> tuple[str, ...]:
        return self._parsed(name, parse_json_strings, self.codes.json, default=default)

    def path_expr(self, name: str, *, required: bool = False) -> PathExpr | None:
        source_dir = self.lowering.source_dir
        return self._parsed(name, lambda v: parse_path(v, source_dir), self.codes.path,
                            required=required)

    def env_name(self, name: str, *, required: bool = False) -> str | None:
        return self._parsed(name, parse_env_name, "shell.invalid_env_name",
                            required=required)

    # --------------------------------------------------- tri-state reads

    def _setting(self, name: str, value: Any) -> Setting[Any]:
        if not self.has(name) or name in self.bad:
            return Setting.inherit()
        return Setting.of_optional(value, self.span(name), self.lowering.origin)

    def setting_bool(self, name: str) -> Setting[bool]:
        value = self._parsed(name, parse_bool, self.codes.invalid)
        return self._setting(name, value)

    def setting_enum(self, name: str, choices: tuple[str, ...]) -> Setting[str]:
        return self._setting(name, self.enum(name, choices))

    def setting_string(self, name: str) -> Setting[str]:
        return self._setting(name, self.values.get(name))

    def setting_duration(self, name: str, *, clearable: bool) -> Setting[float]:
        parse = parse_optional_duration if clearable else parse_duration
        return self._setting(name, self._parsed(name, parse, self.codes.duration))

    def setting_bytes(self, name: str) -> Setting[int]:
        return self._setting(name, self.byte_size(name))

    def setting_uint(self, name: str) -> Setting[int]:
        return self._setting(name, self.uint(name))

    def setting_path(self, name: str) -> Setting[PathExpr]:
        return self._setting(name, self.path_expr(name))

    def setting_csv(self, name: str) -> Setting[tuple[str, ...]]:
        return self._setting(name, self.csv(name))


def child_elements(lowering: Lowering, element: Element, path: Path,
                   expected: str) -> Iterator[Element]:
    """The element children of ``element``; non-blank text is reported as unexpected.

    Unknown tags inside a shell scope are lexed as text (spec §1 rule 2), so
    this is also where misspelt element names are reported. ``expected`` says
    what may appear there, for the message.
    """
    for child in element.children:
        if isinstance(child, Text):
            for span, shown in _text_runs(child):
                lowering.error(span, "shell.unexpected_text",
                               f"unexpected text {shown!r} inside <{element.tag}>; expected "
                               f"{expected}", path,
                               hint="shell declarations contain only their own elements; a "
                               "misspelt or unknown tag name is read as text")
        else:
            yield child


def _text_runs(text: Text) -> Iterator[tuple[Span, str]]:
    """The non-blank lines of a text node, each with its span in the source.

    A text node's span may cover stripped comments, so each line is found in
    the source text rather than computed from offsets.
    """
    span = text.span
    source_text = span.source.text
    cursor = span.start
    for line in text.text.splitlines():
        stripped = line.strip(WS)
        if not stripped:
            continue
        start = source_text.find(stripped, cursor, span.end)
        if start < 0:
            yield Span(span.source, span.start, span.end), _shorten(stripped)
            return
        cursor = start + len(stripped)
        yield Span(span.source, start, cursor), _shorten(stripped)


def _shorten(text: str) -> str:
    shown = " ".join(text.split())
    return shown if len(shown) <= 40 else shown[:37] + "..."


def expect_empty(lowering: Lowering, element: Element, path: Path) -> None:
    """Report any content of an element documented as empty (spec §1 rule 6)."""
    for child in child_elements(lowering, element, path, "no content (an empty element)"):
        lowering.error(child.span, "shell.unexpected_child",
                       f"<{element.tag}> takes no child elements, found <{child.tag}>",
                       path, hint=f"write <{element.tag} .../> as an empty element")
