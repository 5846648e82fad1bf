"""Helpers for the shell execution tests: write a prompt, open a session, call a tool."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from runtime.shell.executor import ShellSession
from runtime.shell.host import open_shell
from runtime.shell.results import CallOutcome

CAPS = ('<capabilities sandbox="preferred" child_processes="true" arbitrary_code="true">'
        '<read path="${workspace}"/><write path="${workspace}"/></capabilities>')
DIRECT = '<backends merge="replace"><direct/></backends>'
LIMITS = '<limits wall_time="1s" idle_time="1s"/>'


def runtime(body: str = "", *, rid: str = "r", attrs: str = "", caps: str = CAPS,
            policy: str = '<policy default="allow"/>', limits: str = LIMITS,
            backends: str = DIRECT) -> str:
    """A ``<shell_access>`` with open defaults (each part replaceable)."""
    return (f'<shell_access id="{rid}" {attrs}>{caps}{backends}{policy}{limits}{body}'
            '</shell_access>')


def host_env(**extra: str) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root"), **extra}


def open_prompt(tmp_path: Path, text: str, *, approvals: str = "allow", ask: Any = None,
                env: dict[str, str] | None = None, **options: Any) -> ShellSession:
    path = tmp_path / "prompt.chatmd"
    path.write_text(text + "\n<user>hi</user>\n", encoding="utf-8")
    return open_shell(path, workspace=tmp_path, approvals=approvals, ask=ask,
                      environ=env if env is not None else host_env(), **options)


def call(session: ShellSession, tool: str, **arguments: Any) -> CallOutcome:
    return session.call(tool, json.dumps(arguments))


def error(outcome: CallOutcome) -> tuple[str, str]:
    """(code, message) of an error outcome."""
    data = json.loads(outcome.text)["error"]
    return data["code"], data["message"]


def chain_tool(name: str = "sh", runtime_id: str = "r", **attrs: str) -> str:
    extra = " ".join(f'{k}="{v}"' for k, v in attrs.items())
    return f'<tool name="{name}" type="shell" mode="chain" runtime="{runtime_id}" {extra}/>'


def structured_tool(name: str = "run", runtime_id: str = "r", **attrs: str) -> str:
    extra = " ".join(f'{k}="{v}"' for k, v in attrs.items())
    return f'<tool name="{name}" type="shell" mode="structured" runtime="{runtime_id}" {extra}/>'
