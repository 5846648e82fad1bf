"""Policy matchers and evaluation (shell spec §3.7, §8.6).

:func:`compile_matcher` turns a manifest matcher record into a predicate over
a :class:`MatchContext`; :class:`Policy` evaluates every rule and decides with
``deny > ask > allow`` (an allow never cancels a deny), or the default when no
rule matches. ``chatml_match`` matchers call a host-supplied ChatML matcher
(:mod:`runtime.shell.hooks`), with the conservative failure reading of §8.11.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from runtime.shell.effects import Effect
from runtime.shell.errors import InstantiationError
from runtime.shell.paths import HostDirs, canonical, inside, resolve_path_expr

_STRENGTH = {"allow": 0, "ask": 1, "deny": 2}


@dataclass(frozen=True)
class MatchContext:
    """What a matcher sees of one command."""

    argv: tuple[str, ...]
    canonical: str
    trusted: bool
    cwd: str
    effects: tuple[Effect, ...]
    request_kind: str
    chatml: Callable[[str, str, str | None, str], bool] | None = None
    """``(script, function, failure, rule action) -> matched`` for ``chatml_match``."""


Predicate = Callable[[MatchContext, str], bool]


def _chatml(record: Mapping[str, Any]) -> Predicate:
    script, function = str(record["script"]), str(record.get("function") or "match_command")
    failure = record.get("failure")

    def test(ctx: MatchContext, action: str) -> bool:
        if ctx.chatml is None:
            return action != "allow"
        return ctx.chatml(script, function, failure, action)
    return test


def compile_matcher(record: Mapping[str, Any], dirs: HostDirs,
                    source_dir: str | None) -> Predicate:
    """A predicate ``(context, rule action) -> bool`` for a manifest matcher."""
    kind = record.get("type")
    value = record.get("value")
    if kind == "any_command":
        return lambda ctx, _a: True
    if kind == "program":
        return lambda ctx, _a: ctx.argv[0] == value
    if kind == "basename":
        return lambda ctx, _a: os.path.basename(ctx.argv[0]) == value
    if kind == "resolved_path":
        target = canonical(resolve_path_expr(value or {}, dirs, source_dir))
        return lambda ctx, _a: ctx.canonical == target
    if kind == "trusted_executable":
        return lambda ctx, _a: ctx.trusted
    if kind == "program_regex":
        try:
            pattern = re.compile(str(value))
        except re.error as error:
            raise InstantiationError("shell.invalid_program_regex",
                                     f"invalid program_regex {value!r}: {error}") from None
        return lambda ctx, _a: pattern.search(ctx.argv[0]) is not None
    if kind == "argv_prefix":
        prefix = tuple(record.get("values") or ())
        return lambda ctx, _a: ctx.argv[:len(prefix)] == prefix
    if kind == "argument":
        return lambda ctx, _a: value in ctx.argv[1:]
    if kind == "argument_contains":
        text = str(value)
        return lambda ctx, _a: any(text in arg for arg in ctx.argv[1:])
    if kind == "effect":
        return _effect_matcher(record, dirs, source_dir)
    if kind == "no_unknown_effects":
        return lambda ctx, _a: all(e.kind != "unknown" for e in ctx.effects)
    if kind == "raw_shell":
        return lambda ctx, _a: ctx.request_kind == "raw_shell"
    if kind == "chatml_match":
        return _chatml(record)
    if kind in ("all", "any"):
        parts = [compile_matcher(m, dirs, source_dir) for m in record.get("matchers") or ()]
        combine = all if kind == "all" else any
        return lambda ctx, a: combine(p(ctx, a) for p in parts)
    if kind == "not":
        inner = compile_matcher(record["matcher"], dirs, source_dir)
        # a ChatML failure under "not" must stay conservative: read the inner
        # matcher as if the rule were of the opposite strength
        flipped = {"allow": "deny", "deny": "allow", "ask": "allow"}
        return lambda ctx, a: not inner(ctx, flipped[a])
    raise InstantiationError("shell.runtime_instantiation_failed", f"unknown matcher {kind!r}")


def _effect_matcher(record: Mapping[str, Any], dirs: HostDirs,
                    source_dir: str | None) -> Predicate:
    name = str(record.get("name"))
    under_record = record.get("under")
    under = canonical(resolve_path_expr(under_record, dirs, source_dir)) if under_record else None

    def test(ctx: MatchContext, _a: str) -> bool:
        for effect in ctx.effects:
            if effect.kind != name:
                continue
            if under is None or effect.path is None:
                return True
            if inside(canonical(effect.path), [under]):
                return True
        return False
    return test


@dataclass(frozen=True)
class Rule:
    id: str
    action: str
    predicate: Predicate


@dataclass(frozen=True)
class Decision:
    action: str
    reason: str
    rule_ids: tuple[str, ...]


class Policy:
    """A runtime's rules and default action."""

    def __init__(self, default: str, rules: Sequence[Rule]) -> None:
        self.default = default
        self.rules = tuple(rules)

    @classmethod
    def from_manifest(cls, section: Mapping[str, Any], dirs: HostDirs,
                      source_dir: str | None) -> Policy:
        rules = [Rule(str(r["id"]), str(r["action"]),
                      compile_matcher(r["matcher"], dirs, source_dir))
                 for r in section.get("rules") or ()]
        return cls(str(section.get("default") or "ask"), rules)

    def decide(self, ctx: MatchContext) -> Decision:
        matched = [rule for rule in self.rules if rule.predicate(ctx, rule.action)]
        if not matched:
            return Decision(self.default, f"default policy: {self.default}", ())
        action = max((rule.action for rule in matched), key=_STRENGTH.__getitem__)
        ids = tuple(rule.id for rule in matched if rule.action == action)
        return Decision(action, f"matched rules: {', '.join(ids)} ({action})", ids)
