"""Lowering of ``<policy>``, its ``<rule>`` entries and the matcher tree (spec §3.7).

:func:`lower_matcher_slot` is shared with interceptor ``<match>`` blocks: it
lowers the one matcher expected among an element's children and reports the
arity code of the context (``shell.rule_matcher_arity`` for rules,
``shell.matcher_arity`` elsewhere).
"""

from __future__ import annotations

from collections.abc import Callable

from chatmd.ast import Element
from chatmd.shell.declare.lowering import Attributes, Lowering, Path, child_elements, expect_empty
from chatmd.shell.declare.matchers import (
    EFFECT_NAMES,
    FAILURE_MODES,
    MATCHER_TAGS,
    AllOf,
    AnyCommand,
    AnyOf,
    ArgumentContains,
    ArgumentIs,
    ArgvPrefix,
    BasenameIs,
    ChatmlMatch,
    EffectIs,
    Matcher,
    NotMatcher,
    NoUnknownEffects,
    ProgramIs,
    ProgramRegex,
    RawShell,
    ResolvedPathIs,
    TrustedExecutable,
)
from chatmd.shell.declare.sections import Policy, Rule

ACTIONS = ("allow", "ask", "deny")
MERGE = ("append", "replace")

#: Matcher combinators nest at most this deep (every phase after lowering walks them
#: recursively, the shell policy compiler of ``runtime.shell`` included).
MAX_MATCHER_NESTING = 100
_COMBINATORS = frozenset({"all", "any", "not"})

_MATCHER_LIST = ", ".join(f"<{tag}>" for tag in sorted(MATCHER_TAGS))
_VALUE_MATCHERS: dict[str, Callable[..., Matcher]] = {
    "program": ProgramIs, "basename": BasenameIs, "program_regex": ProgramRegex,
    "argument": ArgumentIs, "argument_contains": ArgumentContains}
_FLAG_MATCHERS: dict[str, Callable[..., Matcher]] = {
    "any_command": AnyCommand, "trusted_executable": TrustedExecutable,
    "no_unknown_effects": NoUnknownEffects, "raw_shell": RawShell}


def _matchers_among(lowering: Lowering, element: Element, path: Path) -> list[Matcher | None]:
    """Lower every child of ``element`` as a matcher (None for an invalid one)."""
    found: list[Matcher | None] = []
    for child in child_elements(lowering, element, path, f"a matcher ({_MATCHER_LIST})"):
        if child.tag not in MATCHER_TAGS:
            lowering.error(child.span, "shell.unknown_matcher",
                           f"<{child.tag}> is not a matcher; expected one of {_MATCHER_LIST}",
                           path)
            found.append(None)
            continue
        if child.tag in _COMBINATORS and sum(
                tag in _COMBINATORS for tag in path) >= MAX_MATCHER_NESTING:
            lowering.error(child.span, "shell.matcher_too_deep",
                           f"<all>, <any> and <not> nest deeper than {MAX_MATCHER_NESTING} "
                           "levels here", path,
                           hint="matcher trees are compiled and explained recursively; "
                           "flatten them (<all> and <any> take any number of matchers)")
            found.append(None)
            continue
        found.append(lower_matcher(lowering, child, path + (child.tag,)))
    return found


def lower_matcher_slot(lowering: Lowering, element: Element, path: Path,
                       arity_code: str) -> Matcher | None:
    """The single matcher expected among the children of ``element``."""
    found = _matchers_among(lowering, element, path)
    if len(found) != 1:
        lowering.error(element.span, arity_code,
                       f"<{element.tag}> must contain exactly one matcher, found {len(found)}",
                       path, hint="combine several conditions with <all>, <any> or <not>")
        return None
    return found[0]


def lower_matcher(lowering: Lowering, element: Element, path: Path) -> Matcher | None:
    tag = element.tag
    span = element.span
    if tag in ("all", "any", "not"):
        Attributes(lowering, element, path, ())
        children = _matchers_among(lowering, element, path)
        if tag == "not":
            if len(children) != 1:
                lowering.error(span, "shell.matcher_arity",
                               f"<not> must contain exactly one matcher, found {len(children)}",
                               path)
                return None
            return None if children[0] is None else NotMatcher(children[0], span=span)
        if not children:
            lowering.error(span, "shell.empty_matcher",
                           f"<{tag}> must contain at least one matcher", path,
                           hint=f"add a matcher inside <{tag}>, or remove it")
            return None
        if any(child is None for child in children):
            return None
        kept = tuple(child for child in children if child is not None)
        return AllOf(kept, span=span) if tag == "all" else AnyOf(kept, span=span)
    matcher: Matcher | None
    if tag in _FLAG_MATCHERS:
        Attributes(lowering, element, path, ())
        matcher = _FLAG_MATCHERS[tag](span=span)
    elif tag in _VALUE_MATCHERS:
        value = Attributes(lowering, element, path, ("value",)).text("value", required=True)
        matcher = None if value is None else _VALUE_MATCHERS[tag](value, span=span)
    elif tag == "resolved_path":
        resolved = Attributes(lowering, element, path, ("value",)).path_expr("value",
                                                                              required=True)
        matcher = None if resolved is None else ResolvedPathIs(resolved, span=span)
    elif tag == "argv_prefix":
        values = Attributes(lowering, element, path, ("values",)).csv("values", required=True)
        matcher = None if values is None else ArgvPrefix(values, span=span)
    elif tag == "effect":
        attributes = Attributes(lowering, element, path, ("name", "under"))
        name = attributes.enum("name", EFFECT_NAMES, required=True)
        under = attributes.path_expr("under")
        matcher = None if name is None else EffectIs(name, under, span=span)
    else:  # chatml_match
        attributes = Attributes(lowering, element, path, ("script", "function", "failure"))
        script = attributes.ref("script", required=True)
        function = attributes.non_empty("function") or "match_command"
        failure = attributes.enum("failure", FAILURE_MODES)
        matcher = None if script is None else ChatmlMatch(script, function, failure, span=span)
    expect_empty(lowering, element, path)
    return matcher


def _rule(lowering: Lowering, element: Element, path: Path) -> Rule | None:
    attributes = Attributes(lowering, element, path, ("id", "action", "override"))
    ident = attributes.text("id", required=True)
    action = attributes.enum("action", ACTIONS, required=True)
    override = attributes.boolean("override", False)
    matcher = lower_matcher_slot(lowering, element, path, "shell.rule_matcher_arity")
    if ident is None or action is None or matcher is None:
        return None
    return Rule(ident, action, matcher, override, span=element.span, origin=lowering.origin)


def lower_policy(lowering: Lowering, element: Element) -> Policy:
    path: Path = ("policy",)
    attributes = Attributes(lowering, element, path, ("default", "merge"))
    rules: list[Rule] = []
    for child in child_elements(lowering, element, path, "only <rule> elements"):
        if child.tag == "rule":
            rule = _rule(lowering, child, path + ("rule",))
            if rule is not None:
                rules.append(rule)
        else:
            lowering.error(child.span, "shell.unknown_element",
                           f"<{child.tag}> is not allowed inside <policy>; expected <rule>",
                           path)
    return Policy(default=attributes.setting_enum("default", ACTIONS),
                  merge=attributes.enum("merge", MERGE, default="append") or "append",
                  rules=tuple(rules), span=element.span)
