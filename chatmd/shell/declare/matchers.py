"""Policy matchers (spec §3.7): the typed form of the matcher elements of a ``<rule>``."""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from chatcommon.sources import Span
from chatmd.shell.declare.settings import span_field
from chatmd.shell.declare.values import PathExpr

#: Effect kinds an ``<effect name>`` matcher may name.
EFFECT_NAMES: tuple[str, ...] = (
    "read_path", "write_path", "network", "child_processes", "arbitrary_code",
    "privilege_change", "unknown",
)

#: Failure handling of ChatML and executable hooks.
FAILURE_MODES: tuple[str, ...] = ("deny", "error", "no_match", "unknown", "keep")


@attrs.frozen
class AnyCommand:
    TAG = "any_command"
    span: Span | None = span_field()


@attrs.frozen
class ProgramIs:
    TAG = "program"
    value: str
    span: Span | None = span_field()


@attrs.frozen
class BasenameIs:
    TAG = "basename"
    value: str
    span: Span | None = span_field()


@attrs.frozen
class ResolvedPathIs:
    TAG = "resolved_path"
    value: PathExpr
    span: Span | None = span_field()


@attrs.frozen
class TrustedExecutable:
    TAG = "trusted_executable"
    span: Span | None = span_field()


@attrs.frozen
class ProgramRegex:
    TAG = "program_regex"
    value: str
    span: Span | None = span_field()


@attrs.frozen
class ArgvPrefix:
    TAG = "argv_prefix"
    values: tuple[str, ...]
    span: Span | None = span_field()


@attrs.frozen
class ArgumentIs:
    TAG = "argument"
    value: str
    span: Span | None = span_field()


@attrs.frozen
class ArgumentContains:
    TAG = "argument_contains"
    value: str
    span: Span | None = span_field()


@attrs.frozen
class EffectIs:
    TAG = "effect"
    name: str
    under: PathExpr | None = None
    span: Span | None = span_field()


@attrs.frozen
class NoUnknownEffects:
    TAG = "no_unknown_effects"
    span: Span | None = span_field()


@attrs.frozen
class RawShell:
    TAG = "raw_shell"
    span: Span | None = span_field()


@attrs.frozen
class ChatmlMatch:
    """A ``shell_matcher`` script decides; ``script`` is the qualified script id."""

    TAG = "chatml_match"
    script: str
    function: str = "match_command"
    failure: str | None = None
    span: Span | None = span_field()


@attrs.frozen
class AllOf:
    TAG = "all"
    matchers: tuple[Matcher, ...]
    span: Span | None = span_field()


@attrs.frozen
class AnyOf:
    TAG = "any"
    matchers: tuple[Matcher, ...]
    span: Span | None = span_field()


@attrs.frozen
class NotMatcher:
    TAG = "not"
    matcher: Matcher
    span: Span | None = span_field()


Matcher = (AnyCommand | ProgramIs | BasenameIs | ResolvedPathIs | TrustedExecutable
           | ProgramRegex | ArgvPrefix | ArgumentIs | ArgumentContains | EffectIs
           | NoUnknownEffects | RawShell | ChatmlMatch | AllOf | AnyOf | NotMatcher)

MATCHER_TAGS: frozenset[str] = frozenset({
    "any_command", "program", "basename", "resolved_path", "trusted_executable",
    "program_regex", "argv_prefix", "argument", "argument_contains", "effect",
    "no_unknown_effects", "raw_shell", "chatml_match", "all", "any", "not",
})


def walk(matcher: Matcher) -> Iterator[Matcher]:
    """Every matcher in the tree rooted at ``matcher`` (pre-order)."""
    yield matcher
    if isinstance(matcher, AllOf | AnyOf):
        for child in matcher.matchers:
            yield from walk(child)
    elif isinstance(matcher, NotMatcher):
        yield from walk(matcher.matcher)


__all__ = [
    "EFFECT_NAMES", "FAILURE_MODES", "MATCHER_TAGS", "AllOf", "AnyCommand", "AnyOf",
    "ArgumentContains", "ArgumentIs", "ArgvPrefix", "BasenameIs", "ChatmlMatch", "EffectIs",
    "Matcher", "NoUnknownEffects", "NotMatcher", "ProgramIs", "ProgramRegex", "RawShell",
    "ResolvedPathIs", "TrustedExecutable", "walk",
]
