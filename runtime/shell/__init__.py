"""Shell tool execution (shell spec §8-§9): the runtime half of ``chatmd.shell``.

The frontend (:mod:`chatmd.shell`) declares and compiles shell runtimes and
tools into a manifest; this package runs them:

- :mod:`~runtime.shell.host` -- prompt -> compiled manifest -> live session
  (instantiation, §6.10); :func:`shell_runners` is the driver's entry point;
- :mod:`~runtime.shell.security` -- the signature (:mod:`~runtime.shell.signature`)
  and trusted-source (:mod:`~runtime.shell.trusted_sources`) checks of §6.9 step 2;
- :mod:`~runtime.shell.executor` -- one call: input validation and request
  building (:mod:`~runtime.shell.requests`), per-command preparation
  (:mod:`~runtime.shell.prepare`: resolution, effects, policy, capabilities,
  approvals, backend), pipelines (:mod:`~runtime.shell.process`), results
  (:mod:`~runtime.shell.results`);
- :mod:`~runtime.shell.backends` -- direct, bubblewrap and external backends, OS limits;
- :mod:`~runtime.shell.hooks` -- ChatML hooks (:mod:`~runtime.shell.chatml_bridge`,
  persisted state in :mod:`~runtime.shell.hook_state`), executable hooks
  (:mod:`~runtime.shell.exec_hooks`) and model reviewers
  (:mod:`~runtime.shell.model_review`);
- :mod:`~runtime.shell.audit` -- the hash-chained JSONL audit log and its verifier;
- :mod:`~runtime.shell.moderator` -- the moderator's ``Process.run`` through the bound runtime;
- :mod:`~runtime.shell.commands` -- ``chatmdc shell exec`` and ``chatmdc shell audit verify``;
  :mod:`~runtime.shell.sign_command` -- ``chatmdc shell keygen`` and ``chatmdc shell sign``.

See ``docs/shell-execution.md``.

Names are imported on first use so that importing the package is cheap.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chatmd.ir import Prompt
    from runtime.shell.approvals import ApprovalAnswer, ApprovalRequest
    from runtime.tools import Runner


def shell_runners(prompt: Prompt, *, workspace: Path, approvals: str,
                  ask: Callable[[ApprovalRequest], bool | ApprovalAnswer] | None = None,
                  audit_path: Path | None = None,
                  model_recipes: Mapping[str, Any] | None = None,
                  authorize: Callable[[Any], bool | str] | None = None) -> dict[str, Runner]:
    """One runner per shell tool of ``prompt`` (payload: the call's JSON arguments text).

    A runner returns what the model receives: the rendered result, or the
    JSON error object of a refused or failed call (it never raises for
    anything the model can cause). ``model_recipes`` serve model reviewers;
    ``authorize`` is asked to authorize the manifest first
    (:mod:`runtime.shell.authorization`).
    Raises
    :class:`~runtime.shell.errors.InstantiationError` when the prompt's
    shell layer cannot be instantiated: then no shell tool is published.
    """
    from runtime.shell.host import open_shell

    session = open_shell(prompt, workspace=workspace, approvals=approvals, ask=ask,
                         audit_path=audit_path, model_recipes=model_recipes,
                         authorize=authorize)
    return {name: _runner(session, name) for name in session.tools}


def _runner(session: Any, name: str) -> Runner:
    def run(payload: str) -> str:
        return str(session.call(name, payload).text)
    return run


__all__ = ["shell_runners"]
