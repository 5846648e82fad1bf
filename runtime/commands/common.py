"""What ``chatmdc run`` and ``chatmdc chat`` share: driver flags, client and context setup,
diagnostics and failure reporting."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import attrs

from chatcommon.sources import SourceRegistry
from chatmd.frontend import CheckResult
from runtime.driver.client import ClientSettings, MissingApiKey, make_client
from runtime.driver.context import DriverContext
from runtime.driver.display import Display, QuietDisplay
from runtime.driver.events import EventLog
from runtime.driver.loop import (
    EXIT_PROMPT_ERRORS,
    EXIT_USAGE,
    FileRun,
    PromptErrors,
    RunOutcome,
    UsageError,
)
from runtime.errors import SnapshotError, SnapshotMismatch


def error(message: str) -> None:
    sys.stderr.write(f"chatmdc: error: {message}\n")
    sys.stderr.flush()


def report_prompt_errors(errors: PromptErrors, output_format: str) -> list[Any]:
    """Text diagnostics on standard error; with ``json``, the diagnostics as JSON objects
    (for the command's one JSON result) instead."""
    import json

    from chatcommon.render import render_all_text, render_json
    from runtime.commands.summary import summary_line

    result = errors.result
    diagnostics = list(result.diagnostics)
    if output_format == "json":
        return list(json.loads(render_json(diagnostics))["diagnostics"])
    sys.stderr.write(render_all_text(diagnostics, result.sources))
    sys.stderr.write("\n" + summary_line(diagnostics, 1) + "\n")
    return []


def transcript_path(args: argparse.Namespace) -> Path:
    """PROMPT, or ``--output`` (created as a copy of PROMPT when missing); raises OSError."""
    from chatcommon.atomic import atomic_write_bytes

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


@attrs.frozen
class Refused:
    """Why a run did not start (nothing was sent), and the diagnostics to report."""

    outcome: RunOutcome
    diagnostics: list[Any] = attrs.field(factory=list)


def _refused(events: EventLog, code: int, message: str,
             diagnostics: list[Any] | None = None) -> Refused:
    kind = "prompt" if code == EXIT_PROMPT_ERRORS else "usage"
    events.emit("error", kind=kind, message=message)
    return Refused(RunOutcome("failed", code, 0, message), diagnostics or [])


def prepare(args: argparse.Namespace, events: EventLog, file_run: FileRun, *,
            quiet: bool) -> Refused | None:
    """Check the transcript, make the client, open the session; None when ready."""
    from chatcommon.diagnostics import DiagnosticError

    try:
        file_run.check()
    except UsageError as problem:
        return _refused(events, EXIT_USAGE, str(problem))
    except PromptErrors as errors:
        found = report_prompt_errors(errors, args.format)
        return _refused(events, EXIT_PROMPT_ERRORS, "the prompt has errors: nothing was sent",
                        found)
    try:
        file_run.ctx = make_context(args, events, quiet=quiet)
    except MissingApiKey as problem:
        return _refused(events, EXIT_USAGE, str(problem))
    events.emit("run_started", prompt=args.prompt, transcript=str(file_run.path),
                model=args.model)
    try:
        file_run.open()
    except (UsageError, SnapshotMismatch, SnapshotError) as problem:
        return _refused(events, EXIT_USAGE, str(problem))
    except DiagnosticError as problem:  # an inline agent, the moderator, an MCP server
        sources = file_run.checked.sources if file_run.checked is not None else None
        result = CheckResult(None, tuple(problem.diagnostics), sources or SourceRegistry())
        found = report_prompt_errors(PromptErrors(result), args.format)
        return _refused(events, EXIT_PROMPT_ERRORS,
                        "the prompt could not be prepared: nothing was sent", found)
    return None


def check_workspace(args: argparse.Namespace) -> str | None:
    if args.workspace and not Path(args.workspace).is_dir():
        return f"the workspace {args.workspace} is not a folder"
    return None


__all__ = ["EXIT_USAGE", "MissingApiKey", "Refused", "check_workspace", "error",
           "make_context", "prepare", "report_prompt_errors", "transcript_path"]
