"""What ``chatmdc run`` and ``chatmdc chat`` share: driver flags, client and context setup,
diagnostics and failure reporting."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from runtime.driver.client import ClientSettings, MissingApiKey, make_client
from runtime.driver.context import DriverContext
from runtime.driver.display import Display, QuietDisplay
from runtime.driver.events import EventLog
from runtime.driver.loop import EXIT_USAGE, PromptErrors


def error(message: str) -> None:
    sys.stderr.write(f"chatmdc: error: {message}\n")
    sys.stderr.flush()


def report_prompt_errors(errors: PromptErrors, output_format: str) -> list[Any]:
    """Text diagnostics on standard error; with ``json``, the diagnostics as JSON objects
    (for the command's one JSON result) instead."""
    import json

    from chatmd.cli import summary_line
    from common.render import render_all_text, render_json

    result = errors.result
    diagnostics = list(result.diagnostics)
    if output_format == "json":
        return list(json.loads(render_json(diagnostics))["diagnostics"])
    sys.stderr.write(render_all_text(diagnostics, result.sources))
    sys.stderr.write("\n" + summary_line(diagnostics, 1) + "\n")
    return []


def transcript_path(args: argparse.Namespace) -> Path:
    """PROMPT, or ``--output`` (created as a copy of PROMPT when missing); raises OSError."""
    from common.atomic import atomic_write_bytes

    prompt = Path(args.prompt)
    if args.output is None:
        return prompt
    output = Path(args.output)
    if not output.exists():
        atomic_write_bytes(output, prompt.read_bytes(), create_folders=False)
    return output


def make_context(args: argparse.Namespace, events: EventLog, *, quiet: bool) -> DriverContext:
    """The client and driver context; raises MissingApiKey."""
    settings = ClientSettings.from_environment(os.environ, base_url=args.base_url,
                                               max_retries=args.max_retries,
                                               timeout=args.timeout)

    def on_retry(attempt: int, url: str) -> None:
        events.emit("retry", attempt=attempt, url=url)

    client: Any = make_client(settings, on_retry=on_retry)
    workspace = Path(args.workspace) if args.workspace else Path.cwd()
    return DriverContext(client=client, client_settings=settings,
                         workspace=workspace.resolve(), events=events,
                         display=QuietDisplay() if quiet else Display(),
                         model=args.model, allow_network=args.allow_network,
                         approvals=args.approvals, stream=not args.no_stream)


def check_workspace(args: argparse.Namespace) -> str | None:
    if args.workspace and not Path(args.workspace).is_dir():
        return f"the workspace {args.workspace} is not a folder"
    return None


__all__ = ["EXIT_USAGE", "MissingApiKey", "check_workspace", "error", "make_context",
           "report_prompt_errors", "transcript_path"]
