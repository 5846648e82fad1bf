"""``chatmdc run PROMPT [...]``: run a prompt against the model until it is done (issue 13).

Checks the prompt (errors: exit 1, nothing sent), then runs until the model answers without
tool calls, the moderator ends the session, or ``--max-turns`` model requests were made,
appending every completed item to PROMPT (or ``--output``). Exit status: 0 finished (or
ended by the moderator), 1 prompt errors (also: an inline agent failed, an MCP server is
unreachable at start), 2 usage error or unusable input (unreadable file, missing API key,
bad or mismatched ``--session`` file, nothing to send), 4 model API failure after retries,
5 turn limit reached, 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from runtime.commands.common import check_workspace, error, prepare, transcript_path
from runtime.driver.events import EventLog
from runtime.driver.loop import (
    EXIT_INTERRUPTED,
    EXIT_PROMPT_ERRORS,
    EXIT_USAGE,
    FileRun,
    RunOutcome,
)


def _finish(args: argparse.Namespace, events: EventLog, outcome: RunOutcome,
            transcript: str, diagnostics: list[Any] | None = None) -> int:
    events.emit("run_finished", status=outcome.status, exit_code=outcome.exit_code,
                requests=outcome.requests)
    events.close()
    if args.format == "json":
        sys.stdout.write(json.dumps({"status": outcome.status, "exit_code": outcome.exit_code,
                                     "requests": outcome.requests, "message": outcome.message,
                                     "answer": outcome.answer, "transcript": transcript,
                                     "diagnostics": diagnostics or []},
                                    ensure_ascii=False) + "\n")
    elif outcome.exit_code != 0 and outcome.message:
        error(outcome.message)
    elif outcome.message:
        sys.stderr.write(f"chatmdc: {outcome.message}\n")
    return outcome.exit_code


def _fail(args: argparse.Namespace, events: EventLog, status: str, code: int, message: str,
          transcript: str) -> int:
    kind = "prompt" if code == EXIT_PROMPT_ERRORS else "usage"
    events.emit("error", kind=kind, message=message)
    return _finish(args, events, RunOutcome(status, code, 0, message), transcript)


def run(args: argparse.Namespace) -> int:
    try:
        events = EventLog(args.events)
    except OSError as unwritable:
        error(f"cannot write the events file {args.events}: "
              f"{unwritable.strerror or unwritable}")
        return EXIT_USAGE
    problem: str | None = check_workspace(args)
    if problem is not None:
        return _fail(args, events, "failed", EXIT_USAGE, problem, args.prompt)
    try:
        path = transcript_path(args)
    except OSError as failure:
        return _fail(args, events, "failed", EXIT_USAGE,
                     f"cannot read {args.prompt} or create {args.output}: "
                     f"{failure.strerror or failure}", args.prompt)
    try:
        return _run(args, events, FileRun(path, session_file=args.session), str(path))
    except KeyboardInterrupt:
        return _fail(args, events, "interrupted", EXIT_INTERRUPTED, "interrupted", str(path))
    except Exception as problem:  # a bug: reported in one line; the transcript is intact
        events.emit("error", kind="internal", message=f"{type(problem).__name__}: {problem}")
        return _finish(args, events, RunOutcome("failed", EXIT_PROMPT_ERRORS, 0,
                                                f"internal error ({type(problem).__name__}: "
                                                f"{problem}); the transcript holds every "
                                                "completed item"), str(path))


def _run(args: argparse.Namespace, events: EventLog, file_run: FileRun, transcript: str) -> int:
    refused = prepare(args, events, file_run, quiet=args.format == "json")
    if refused is not None:
        return _finish(args, events, refused.outcome, transcript, refused.diagnostics)
    try:
        if file_run.nothing_to_send():
            return _fail(args, events, "failed", EXIT_USAGE,
                         f"nothing to send: {transcript} ends with the model's answer; write "
                         "your next message in its last <user> element", transcript)
        outcome = file_run.run(args.max_turns)
    finally:
        file_run.close()
    return _finish(args, events, outcome, transcript)


__all__ = ["run"]
