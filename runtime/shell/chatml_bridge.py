"""ChatML shell hooks: the ``Shell`` accessor module and one compiled hook script (stdlib spec 10).

Importing this module registers the 17 ``Shell.*`` accessors (each reads one
field of a ``shell_context`` record). :class:`ChatMLHook` compiles one
``<script kind="shell_*">`` against its kind's surface (once per manifest),
runs its top level to get ``initial_state``, and :meth:`ChatMLHook.call`
runs the entry point as a task under the script's limits (spec §4.1): fuel
(task fuel; VM steps 10x fuel), memory (4x ``max_value``), depth, and
``wall_time``, enforced preemptively by the VM's step meter (a script that
loops forever stops at its deadline). Exactly one terminal action of the
kind's module must be recorded, and each of its string arguments must fit in
``max_output`` bytes and each array in ``max_array_items`` items; the state is
committed only then (lifecycle ``invocation`` never keeps state). Anything
else raises :class:`HookError`.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chatcommon.diagnostics import DiagnosticError
from chatml.engine import Engine
from chatml.limits import LimitExceeded, Limits
from chatml.registration import implements
from chatml.surfaces.shell import SHELL_ENTRY_POINTS
from chatml.tasks import Completed, Operation, OperationKind
from chatml.values import ChatMLFailure, Value, Variant

CONTEXT_FIELDS = ("request_id", "runtime_id", "manifest_sha256", "cwd", "origin",
                  "request_kind", "stdin_kind", "argv", "effects", "executable", "capabilities",
                  "stdin_bytes", "stdin_sha256", "script_sha256", "script_preview", "session_id",
                  "policy")

ACTIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "shell_matcher": ("Match", ("yes", "no")),
    "shell_reviewer": ("Review", ("approve", "approve_for", "deny", "rewrite", "defer")),
    "shell_before_interceptor": ("Intercept", ("continue", "rewrite", "respond", "reject")),
    "shell_after_interceptor": ("Result", ("keep", "replace", "reject_disclosure")),
    "shell_effect_analyzer": ("Effect", ("add", "replace", "read_path", "write_path", "network",
                                         "child_processes", "arbitrary_code",
                                         "privilege_change")),
    "shell_audit_filter": ("Audit", ("keep", "drop_field", "replace")),
}


def _accessor(name: str) -> None:
    qualified = f"Shell.{name}"

    def read(context: Value) -> Value:
        if type(context) is not dict:
            raise ChatMLFailure(f"{qualified}: expected shell_context")
        if name not in context:
            raise ChatMLFailure(f"{qualified}: missing context field {name}")
        return context[name]
    implements(qualified)(read)


for _field in CONTEXT_FIELDS:
    _accessor(_field)


def option(value: Any) -> Variant:
    return Variant("None") if value is None else Variant("Some", (value,))


class HookError(Exception):
    """A hook call that failed (handled per the hook's ``failure`` setting)."""


@dataclass(frozen=True)
class Action:
    name: str
    args: tuple[Any, ...]


class ChatMLHook:
    """One compiled shell script; calls are serialised, state kept per lifecycle."""

    def __init__(self, script_id: str, kind: str, source: str, limits: Mapping[str, Any],
                 entry: str | None = None) -> None:
        self.id = script_id
        self.kind = kind
        self.entry = entry or SHELL_ENTRY_POINTS[kind][0]
        self.fuel = int(limits.get("fuel") or 100000)
        self.max_tasks = int(limits.get("max_tasks") or 256)
        self.max_value = int(limits.get("max_value") or 262144)
        self.max_output = int(limits.get("max_output") or 16384)
        self.max_array_items = int(limits.get("max_array_items") or 256)
        self.max_depth = int(limits.get("max_depth") or 32)
        self.wall_time = float(limits.get("wall_time") or 2.0)
        self.engine = Engine(kind, limits=Limits(max_steps=self.fuel * 10,
                                                 max_memory=self.max_value * 4,
                                                 max_depth=self.max_depth * 8,
                                                 max_wall_time=self.wall_time))
        self.script = self.engine.compile(source, f"script {script_id}")
        self.script.run()
        self.initial = self.script.value("initial_state")
        self.module, names = ACTIONS[kind]
        self.operations = [Operation(f"{self.module}.{name}", OperationKind.LOCAL,
                                     lambda _run, _args: None) for name in names]
        self._lock = threading.Lock()

    def call(self, event: Mapping[str, Any], state: Any,
             entry: str | None = None) -> tuple[Action, Any]:
        """Run the entry point on ``event`` and ``state``: (the one action, the new state)."""
        with self._lock:
            try:
                outcome = self.script.run_task(entry or self.entry, dict(event), state,
                                               operations=self.operations, fuel=self.fuel,
                                               max_spawns=self.max_tasks)
            except (LimitExceeded, DiagnosticError, ChatMLFailure, TypeError,
                    ValueError) as error:
                raise HookError(f"script {self.id} failed: {error}") from None
            except Exception as error:  # a ChatML runtime error or a conversion error
                raise HookError(f"script {self.id} failed: {error}") from None
        if not isinstance(outcome, Completed):
            message = getattr(outcome, "message", "the task did not complete")
            raise HookError(f"script {self.id} failed: {message}")
        if len(outcome.effects) != 1:
            raise HookError("shell ChatML hook must produce exactly one terminal action")
        effect = outcome.effects[0]
        for value in effect.args:
            self._check_argument(effect.operation, value)
        return Action(effect.operation.split(".", 1)[1], tuple(effect.args)), outcome.value

    def _check_argument(self, operation: str, value: Any) -> None:
        """An action argument within ``max_output`` bytes / ``max_array_items`` items."""
        if isinstance(value, list):
            if len(value) > self.max_array_items:
                raise HookError(f"{operation}: an array of {len(value)} items exceeds "
                                f"max_array_items ({self.max_array_items})")
            for item in value:
                self._check_argument(operation, item)
        elif isinstance(value, str):
            size = len(value.encode("utf-8", "surrogatepass"))
            if size > self.max_output:
                raise HookError(f"{operation}: a string of {size} bytes exceeds max_output "
                                f"({self.max_output})")


def compile_hook(script_id: str, kind: str, source: str, limits: Mapping[str, Any],
                 entry: str | None = None) -> ChatMLHook:
    """Compile a hook; raises HookError with the compile diagnostics."""
    try:
        return ChatMLHook(script_id, kind, source, limits, entry)
    except DiagnosticError as error:
        text = "; ".join(f"{d.code}: {d.message}" for d in error.diagnostics if d.is_error)
        raise HookError(f"script {script_id} does not compile: {text}") from None
    except Exception as error:
        raise HookError(f"script {script_id} cannot be instantiated: {error}") from None
