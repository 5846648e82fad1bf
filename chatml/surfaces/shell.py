"""The six shell script surfaces: bridge aliases, the ``Shell`` accessors and action modules.

Stdlib spec 10. Every shell surface starts from the core surface without
``print``; four of them add ``Shell`` and the ``shell_context``/``shell_policy``
aliases, the after-interceptor and audit filter their own input alias.
Action exports perform their operation (a local-transactional no-op the host
decodes afterwards).
"""

from __future__ import annotations

from chatml.surfaces.core import CORE, JSON_ALIAS, OPTION
from chatml.surfaces.model import PERFORM, AliasSpec, Effect, Export, ModuleSpec, Surface, merge

_OPT_STRING = OPTION.format("string")

EXECUTABLE = ("{ requested : string; path : string; canonical_path : string;"
              " trusted : bool; sha256 : string }")
CAPABILITIES = ("{ read_roots : string array; write_roots : string array; network : bool;"
                " child_processes : bool; arbitrary_code : bool; privilege_change : bool;"
                " sandbox : string }")
_POLICY = OPTION.format("shell_policy")

SHELL_POLICY = AliasSpec(
    "shell_policy",
    "{ version : string; action : string; reason : string; matches :"
    " { rule_id : string; action : string; reason : " + _OPT_STRING + " } array }",
)

SHELL_CONTEXT = AliasSpec(
    "shell_context",
    "{ version : string; phase : string; request_id : string; runtime_id : string;"
    " manifest_sha256 : string; argv : string array; executable : " + EXECUTABLE + ";"
    " cwd : string; origin : string; request_kind : string; stdin_kind : string;"
    " stdin_sha256 : " + _OPT_STRING + "; stdin_bytes : int;"
    " script_sha256 : " + _OPT_STRING + "; script_preview : " + _OPT_STRING + ";"
    " effects : string array; capabilities : " + CAPABILITIES + ";"
    " session_id : " + _OPT_STRING + "; policy : " + _POLICY + " }",
)

SHELL_RESULT = AliasSpec(
    "shell_result",
    "{ version : string; phase : string; argv : string array; status_kind : string;"
    " status_code : int; stdout : string; stderr : string; stdout_truncated : bool;"
    " stderr_truncated : bool; intercepted_by : " + _OPT_STRING + "; untrusted_output : bool }",
)

SHELL_AUDIT = AliasSpec(
    "shell_audit",
    "{ version : string; phase : string; sequence : string; timestamp : float;"
    " session_id : " + _OPT_STRING + "; runtime_id : string; manifest_sha256 : string;"
    " request_id : string; plan_id : " + _OPT_STRING + "; event : string;"
    " fields : { name : string; value : string } array }",
)

_SHELL_FIELDS = (
    ("request_id", "string"), ("runtime_id", "string"), ("manifest_sha256", "string"),
    ("cwd", "string"), ("origin", "string"), ("request_kind", "string"),
    ("stdin_kind", "string"), ("argv", "string array"), ("effects", "string array"),
    ("executable", EXECUTABLE), ("capabilities", CAPABILITIES), ("stdin_bytes", "int"),
    ("stdin_sha256", _OPT_STRING), ("script_sha256", _OPT_STRING),
    ("script_preview", _OPT_STRING), ("session_id", _OPT_STRING), ("policy", _POLICY),
)

SHELL = ModuleSpec("Shell", tuple(
    Export(name, "shell_context -> " + result) for name, result in _SHELL_FIELDS
))


def _action(module: str, name: str, scheme: str) -> Export:
    return Export(name, scheme, Effect(PERFORM, f"{module}.{name}"))


def _actions(module: str, *rows: tuple[str, str]) -> ModuleSpec:
    return ModuleSpec(module, tuple(_action(module, name, scheme) for name, scheme in rows))


_NOTHING = "unit -> unit task"
_TEXT = "string -> unit task"
_ARGV = "string array -> unit task"
_TWO_TEXTS = "string -> string -> unit task"

MATCH = _actions("Match", ("yes", _TEXT), ("no", _TEXT))
REVIEW = _actions("Review", ("approve", _NOTHING), ("approve_for", _TEXT), ("deny", _TEXT),
                  ("rewrite", _ARGV), ("defer", _NOTHING))
INTERCEPT = _actions("Intercept", ("continue", _NOTHING), ("rewrite", _ARGV),
                     ("respond", _TWO_TEXTS), ("reject", _TEXT))
RESULT = _actions("Result", ("keep", _NOTHING), ("replace", _TWO_TEXTS),
                  ("reject_disclosure", _TEXT))
EFFECT = _actions("Effect", ("add", _TEXT), ("replace", _ARGV), ("read_path", _TEXT),
                  ("write_path", _TEXT), ("network", _NOTHING), ("child_processes", _NOTHING),
                  ("arbitrary_code", _NOTHING), ("privilege_change", _NOTHING))
AUDIT = _actions("Audit", ("keep", _NOTHING), ("drop_field", _TEXT), ("replace", _TEXT))

SHELL_CORE = merge("shell_core", CORE, without_globals=("print",))

SHELL_CONTEXT_BASE = merge("shell_context", SHELL_CORE, Surface(
    name="shell context extras", globals=(), modules=(SHELL,),
    aliases=(JSON_ALIAS, SHELL_CONTEXT, SHELL_POLICY),
))


def _with(name: str, base: Surface, module: ModuleSpec,
          aliases: tuple[AliasSpec, ...] = ()) -> Surface:
    return merge(name, base, Surface(name=f"{name} extras", globals=(), modules=(module,),
                                     aliases=aliases))


SHELL_MATCHER = _with("shell_matcher", SHELL_CONTEXT_BASE, MATCH)
SHELL_REVIEWER = _with("shell_reviewer", SHELL_CONTEXT_BASE, REVIEW)
SHELL_BEFORE_INTERCEPTOR = _with("shell_before_interceptor", SHELL_CONTEXT_BASE, INTERCEPT)
SHELL_EFFECT_ANALYZER = _with("shell_effect_analyzer", SHELL_CONTEXT_BASE, EFFECT)
SHELL_AFTER_INTERCEPTOR = _with("shell_after_interceptor", SHELL_CORE, RESULT,
                                (JSON_ALIAS, SHELL_RESULT))
SHELL_AUDIT_FILTER = _with("shell_audit_filter", SHELL_CORE, AUDIT, (JSON_ALIAS, SHELL_AUDIT))

#: For each shell script kind: its entry function and the alias of its input (stdlib 10.1).
SHELL_ENTRY_POINTS: dict[str, tuple[str, str]] = {
    "shell_matcher": ("match_command", "shell_context"),
    "shell_reviewer": ("review", "shell_context"),
    "shell_before_interceptor": ("before", "shell_context"),
    "shell_after_interceptor": ("after", "shell_result"),
    "shell_effect_analyzer": ("analyze", "shell_context"),
    "shell_audit_filter": ("filter", "shell_audit"),
}
