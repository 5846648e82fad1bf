"""Host side: from a prompt to a live :class:`~runtime.shell.executor.ShellSession`.

:func:`open_shell` loads the prompt (a path or a loaded :class:`chatmd.ir.Prompt`),
compiles its shell declarations (spec §6), refuses a manifest that needs a
feature this implementation does not advertise, applies the administrative
ceilings, the signature and trusted-source checks (:mod:`runtime.shell.security`)
and the host's authorization, and instantiates every runtime and tool (§6.10), all or nothing
(:class:`~runtime.shell.errors.InstantiationError`). ``approvals`` is the
host's UI reviewer mode: ``allow`` approves every ``ask`` once, ``deny``
denies it, ``ask`` consults the ``ask`` callback (without one, no UI
reviewer is available).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from chatmd.ir import Prompt
from chatmd.shell.compile.compiler import CompiledShell
from chatmd.shell.compile.features import SUPPORTED_FEATURES
from runtime.shell.approvals import (
    ApprovalAnswer,
    ApprovalRequest,
    GrantStore,
    Reviewer,
    default_grant_path,
)
from runtime.shell.authorization import Authorizer, authorize_manifest
from runtime.shell.errors import InstantiationError
from runtime.shell.executor import ShellSession
from runtime.shell.hook_state import default_state_path
from runtime.shell.instance import RuntimeInstance, instantiate_runtime, instantiate_tool
from runtime.shell.paths import HostDirs
from runtime.shell.security import verify_manifest_security, verify_pinned_files

APPROVAL_MODES = ("ask", "allow", "deny")
AskCallback = Callable[[ApprovalRequest], "bool | ApprovalAnswer"]


def load_prompt_file(path: str | os.PathLike[str]) -> Prompt:
    from chatcommon.render import render_all_text
    from chatmd.frontend import check_prompt

    result = check_prompt(path)
    if result.prompt is None:
        raise InstantiationError("shell.prompt_invalid",
                                 render_all_text(result.diagnostics).strip())
    return result.prompt


def compile_for_execution(prompt: Prompt, environ: Mapping[str, str]
                          ) -> tuple[CompiledShell | None, Any]:
    """The compiled shell layer (None when the prompt has none) and the admin policy."""
    from chatmd.shell.integration import compile_prompt_shell
    from chatmd.shell.secure.admin import AdminPolicyError, admin_policy_from_environment

    compiled, diagnostics = compile_prompt_shell(prompt, environ=environ)
    errors = [d for d in diagnostics if d.is_error]
    if errors:
        raise InstantiationError(errors[0].code, "; ".join(f"{d.code}: {d.message}"
                                                           for d in errors))
    if compiled is None:
        return None, None
    assert compiled.manifest is not None
    missing = sorted(set(compiled.manifest.payload["required_features"]) - SUPPORTED_FEATURES)
    if missing:
        raise InstantiationError("shell.unsupported_feature",
                                 f"the manifest needs unsupported features: {', '.join(missing)}")
    try:
        admin = admin_policy_from_environment(environ)
    except AdminPolicyError as error:
        raise InstantiationError("shell.admin_policy_load_failed", str(error)) from None
    return compiled, admin


def host_reviewer(approvals: str, ask: AskCallback | None) -> Reviewer | None:
    if approvals == "allow":
        return lambda _request: True
    if approvals == "deny":
        return lambda _request: ApprovalAnswer("deny", reason="denied by the host (--approvals "
                                               "deny)")
    return ask


def _literals(compiled: CompiledShell, runtime_id: str) -> list[str]:
    declaration = compiled.runtimes.get(runtime_id)
    secrets = getattr(declaration, "secrets", None)
    if secrets is None:
        return []
    return [str(s.value) for s in secrets.sources if s.kind == "literal" and s.value]


def _hooks(payload: Mapping[str, Any], runtimes: Mapping[str, RuntimeInstance],
           prompt: Prompt, model_recipes: Mapping[str, Any], digest: str,
           state_path: str) -> Any:
    """The session's hooks (None when no runtime has any): ChatML scripts compiled once,
    executable hooks pinned through their worker runtimes."""
    from runtime.shell.exec_hooks import pin_hook, runtime_hooks

    executables = {(runtime.id, key): pin_hook(key.split(":")[-1], kind, record, runtime,
                                                runtimes)
                   for runtime in runtimes.values()
                   for key, kind, record in runtime_hooks(runtime)}
    models = any(r.get("kind") == "model" for runtime in runtimes.values()
                 for r in runtime.reviewers)
    if not payload.get("extension_scripts") and not executables and not models:
        return None
    from runtime.shell.hook_state import HookStateStore
    from runtime.shell.hooks import ShellHooks

    sources = {script.id: script.source.text for script in prompt.scripts}
    return ShellHooks.compile(payload.get("extension_scripts") or (), sources, executables,
                              model_recipes, HookStateStore(state_path, digest))


def _pinned_files(tools: Mapping[str, Any], hooks: Any) -> list[tuple[str, str]]:
    """(path, sha256) of every file pinned at instantiation: script-mode tool scripts and
    executable hooks."""
    files = [(tool.script.path, tool.script.sha256) for tool in tools.values()
             if tool.script is not None]
    if hooks is not None:
        files += [(hook.path, hook.sha256) for hook in hooks.executables.values()]
    return files


def open_shell(prompt: Prompt | str | os.PathLike[str], *, workspace: Path,
               approvals: str = "ask", ask: AskCallback | None = None,
               audit_path: Path | None = None, session_dir: Path | None = None,
               environ: Mapping[str, str] | None = None,
               grants_path: Path | None = None,
               model_recipes: Mapping[str, Any] | None = None,
               authorize: Authorizer | None = None,
               hook_state_path: Path | None = None) -> ShellSession:
    """Instantiate the prompt's shell tools (all or nothing).

    ``model_recipes`` (name -> :class:`runtime.capabilities.ModelRecipe`) serve
    ``<reviewer kind="model" agent="NAME">``; a missing recipe makes that
    reviewer fail (handled by its ``failure``). Stateful ChatML hooks persist
    their states to ``hook_state_path`` (default
    ``SESSION_DIR/.chatmd/shell-hook-state.json``)."""
    if approvals not in APPROVAL_MODES:
        raise ValueError(f"approvals must be one of {', '.join(APPROVAL_MODES)}")
    loaded = prompt if isinstance(prompt, Prompt) else load_prompt_file(prompt)
    host_env = dict(os.environ if environ is None else environ)
    compiled, admin = compile_for_execution(loaded, host_env)
    reviewer = host_reviewer(approvals, ask)
    if compiled is None or compiled.manifest is None:
        return ShellSession({}, reviewer=reviewer, admin=admin)
    workspace_dir = os.path.realpath(workspace)
    prompt_dir = os.path.realpath(loaded.prompt_dir or workspace_dir)
    session = os.path.realpath(session_dir) if session_dir else workspace_dir
    dirs = HostDirs(workspace_dir, prompt_dir, session,
                    os.path.join(os.path.expanduser("~"), ".cache", "chatmd"),
                    os.path.expanduser("~"), prompt_dir)
    payload = compiled.manifest.payload
    security = verify_manifest_security(payload, compiled.manifest.sha256, loaded, admin,
                                        host_env)
    authorize_manifest(authorize, payload, compiled.manifest.sha256)
    runtimes: dict[str, RuntimeInstance] = {}
    for record in payload["runtimes"]:
        runtimes[record["id"]] = instantiate_runtime(
            record, compiled.manifest.sha256, dirs, host_env, str(payload["platform"]),
            literal_secrets=_literals(compiled, record["id"]),
            session_audit=str(audit_path) if audit_path else None)
    tools = {record["name"]: instantiate_tool(record, runtimes[record["runtime"]])
             for record in payload["tools"]}
    for tool in tools.values():
        values = [v for v in tool.secret_values.values() if v]
        if values:
            runtime = tool.runtime
            runtime.redactor = runtime.redactor.extended(values)
            if runtime.audit is not None:
                runtime.audit.redact = runtime.redactor
    durable = grants_path or default_grant_path(session)
    hooks = _hooks(payload, runtimes, loaded, model_recipes or {}, compiled.manifest.sha256,
                   str(hook_state_path or default_state_path(session)))
    verify_pinned_files(security, _pinned_files(tools, hooks))
    return ShellSession(tools, reviewer=reviewer, grants=GrantStore(str(durable)), admin=admin,
                        hooks=hooks,
                        moderator_runtime=payload.get("moderator_runtime"),
                        runtimes=runtimes)
