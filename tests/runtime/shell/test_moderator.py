"""The moderator's ``Process.run`` goes through the bound shell runtime (spec §8.14)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatml.tasks import OperationError
from runtime.capabilities import Capabilities
from runtime.operations import operation_registry
from runtime.shell.moderator import with_process_run
from tests.runtime.shell.support import open_prompt, runtime

POLICY = ('<policy default="deny"><rule id="echo" action="allow"><basename value="echo"/>'
          '</rule></policy>')


def process_run(tmp_path: Path, text: str):  # type: ignore[no-untyped-def]
    session = open_prompt(tmp_path, text)
    registry = operation_registry(with_process_run(Capabilities(), session))
    operation = registry.get("Process.run")
    assert operation is not None
    return lambda program, args: operation.perform(None, (program, args))  # type: ignore[arg-type]


def test_process_run_uses_the_bound_runtime_policy(tmp_path: Path) -> None:
    text = runtime(policy=POLICY) + '<moderator_runtime shell_runtime="r"/>'
    run = process_run(tmp_path, text)
    assert run("echo", ["hello", "world"]) == "hello world\n"
    with pytest.raises(OperationError) as refused:
        run("printf", ["x"])
    assert refused.value.message.startswith("[denied]")


def test_without_a_binding_process_run_is_not_configured(tmp_path: Path) -> None:
    run = process_run(tmp_path, runtime(policy=POLICY))
    with pytest.raises(OperationError) as refused:
        run("echo", [])
    assert "not configured" in refused.value.message
