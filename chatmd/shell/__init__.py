"""Shell runtime declarations: strict validation, the manifest compiler, schemas, explain.

Folders, one per phase: ``declare/`` (elements to typed declarations), ``compile/``
(declarations to one manifest, the tool schemas, the command-chain grammar) and
``secure/`` (administrative ceilings). Beside them: :mod:`~chatmd.shell.integration`
(the prompt IR to the compiler and back), :mod:`~chatmd.shell.explanation` (the
readable summary) and :mod:`~chatmd.shell.cli` (``chatmdc shell explain``).

Phase 1 (declare) — lower top-level elements into typed declarations, with
every diagnostic of spec §7 (positions at the offending element or attribute):

- :func:`lower_shell_access` (``<shell_access>``) -> ``Lowered[ShellAccessDecl]``
- :func:`lower_shell_tool` (``<tool type="shell">`` or ``<tool runtime=...>``)
  -> ``Lowered[ShellToolDecl]``
- :func:`lower_moderator_runtime` -> ``Lowered[ModeratorRuntimeDecl]``
- :class:`LegacyToolDecl` / :class:`ShellScript`: what the compiler needs of a
  legacy ``<tool name command/>`` and of a shell ``<script>``.

A :class:`Lowered` result has ``value`` (None on error) and ``diagnostics``.

Phase 2 (compile) — :func:`compile_runtimes` (runtimes, tools, legacy tools,
scripts, moderator binding, platform, supported features) -> :class:`CompiledShell`
with ``manifest`` (a :class:`ShellManifest`: ``payload`` + ``sha256``), the
resolved ``runtimes``, their inheritance ``chains`` and ``diagnostics``.
:data:`SUPPORTED_FEATURES` is what this project advertises.

Phase 3 (secure) — :func:`check_admin_ceilings` with an :class:`AdminPolicy`
(:func:`load_admin_policy`, :func:`admin_policy_from_environment`).

Model-visible definitions — :func:`tool_definition` (spec §9 schema and
description of a :class:`ShellToolDecl`).

Explain — :func:`explain` renders the effective, merged runtime of a compiled
prompt as a readable summary (which layer set each setting).

Prompt integration (:mod:`chatmd.shell.integration`): the prompt check run by
``chatmdc check``, ``with_compiled_shell`` for ``--emit ir``,
``shell_tool_definition`` for ``--emit request`` and ``compile_declared_shell``
for ``chatmdc shell explain`` (:func:`chatmd.shell.cli.explain_prompt`).

Names are imported from their modules on first use: ``import chatmd.shell``
is cheap, and checking a prompt does not load explain or the schemas.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: The environment variable naming the administrative policy file (spec §6.9), defined in
#: :mod:`chatmd.shell.secure` (no import cost) so that checking whether a policy is
#: configured loads nothing (``chatmd.declarations.shell_validation`` asks before compiling).
from chatmd.shell.secure import POLICY_VARIABLE

#: Public name -> the module that defines it (imported on first use, so that
#: importing one phase does not pay for the others).
_EXPORTS: dict[str, str] = {
    "AdminPolicy": "secure.admin",
    "AdminPolicyError": "secure.admin",
    "admin_policy_from_environment": "secure.admin",
    "check_admin_ceilings": "secure.admin",
    "load_admin_policy": "secure.admin",
    "CompiledShell": "compile.compiler",
    "compile_runtimes": "compile.compiler",
    "host_platform": "compile.compiler",
    "LegacyToolDecl": "declare.typed_declarations",
    "ModeratorRuntimeDecl": "declare.typed_declarations",
    "ShellAccessDecl": "declare.typed_declarations",
    "ShellScript": "declare.typed_declarations",
    "ShellToolDecl": "declare.typed_declarations",
    "UnknownRuntimeError": "explanation",
    "explain": "explanation",
    "ALL_FEATURES": "compile.features",
    "SUPPORTED_FEATURES": "compile.features",
    "LEGACY_RUNTIME_ID": "compile.legacy",
    "desugar_legacy_tool": "compile.legacy",
    "lower_moderator_runtime": "declare.lower_moderator",
    "lower_shell_access": "declare.lower_runtime",
    "lower_shell_tool": "declare.lower_tool",
    "Lowered": "declare.lowering",
    "ShellManifest": "compile.manifest",
    "tool_definition": "compile.schema",
    "tool_description": "compile.schema",
    "tool_schema": "compile.schema",
}

__all__ = [
    "ALL_FEATURES",
    "AdminPolicy",
    "AdminPolicyError",
    "CompiledShell",
    "LEGACY_RUNTIME_ID",
    "LegacyToolDecl",
    "Lowered",
    "POLICY_VARIABLE",
    "ModeratorRuntimeDecl",
    "SUPPORTED_FEATURES",
    "ShellAccessDecl",
    "ShellManifest",
    "ShellScript",
    "ShellToolDecl",
    "UnknownRuntimeError",
    "admin_policy_from_environment",
    "check_admin_ceilings",
    "compile_runtimes",
    "desugar_legacy_tool",
    "explain",
    "host_platform",
    "load_admin_policy",
    "lower_moderator_runtime",
    "lower_shell_access",
    "lower_shell_tool",
    "tool_definition",
    "tool_description",
    "tool_schema",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'chatmd.shell' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"chatmd.shell.{module}"), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from chatmd.shell.compile.compiler import CompiledShell, compile_runtimes, host_platform
    from chatmd.shell.compile.features import ALL_FEATURES, SUPPORTED_FEATURES
    from chatmd.shell.compile.legacy import LEGACY_RUNTIME_ID, desugar_legacy_tool
    from chatmd.shell.compile.manifest import ShellManifest
    from chatmd.shell.compile.schema import tool_definition, tool_description, tool_schema
    from chatmd.shell.declare.lower_moderator import lower_moderator_runtime
    from chatmd.shell.declare.lower_runtime import lower_shell_access
    from chatmd.shell.declare.lower_tool import lower_shell_tool
    from chatmd.shell.declare.lowering import Lowered
    from chatmd.shell.declare.typed_declarations import (
        LegacyToolDecl,
        ModeratorRuntimeDecl,
        ShellAccessDecl,
        ShellScript,
        ShellToolDecl,
    )
    from chatmd.shell.explanation import UnknownRuntimeError, explain
    from chatmd.shell.secure.admin import (
        AdminPolicy,
        AdminPolicyError,
        admin_policy_from_environment,
        check_admin_ceilings,
        load_admin_policy,
    )
