"""Helpers for the built-in tool tests: a workspace, prompt tool nodes, JSON payloads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from chatmd.frontend import load_prompt_text
from chatmd.ir import Tool
from runtime.builtin_tools import ToolEnv, builtin_runner
from runtime.tools import Runner, ToolOutput


def prompt_tools(text: str, prompt_dir: Path) -> tuple[Tool, ...]:
    """The tool nodes of a prompt made of ``text`` (loaded by the real frontend)."""
    return load_prompt_text(text + "\n<user>hi</user>\n", name="tools.chatmd",
                            prompt_dir=str(prompt_dir)).tools


def runner_for(declaration: str, env: ToolEnv) -> Runner:
    (tool,) = prompt_tools(declaration, env.prompt_dir)
    assert tool.__class__.__name__ in ("ReadFileTool", "BuiltinTool")
    return builtin_runner(tool, env)  # type: ignore[arg-type]


def call(runner: Runner, **arguments: Any) -> ToolOutput:
    return runner(json.dumps(arguments))


def code_of(output: ToolOutput) -> str:
    """The stable code an error output starts with."""
    assert isinstance(output, str)
    return output.split(":", 1)[0]
