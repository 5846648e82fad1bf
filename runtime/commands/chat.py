"""``chatmdc chat PROMPT [...]``: an interactive conversation appended to PROMPT (issue 13).

A prompt_toolkit loop: type a message, watch the streamed reply and the tool activity
lines; Ctrl-C cancels the turn in flight (what completed stays in the transcript; calls
left without output get a ``cancelled`` output) and returns to the prompt. Commands:
``/quit`` (or Ctrl-D) leaves; ``/retry`` drops the last reply (from the history and the
file) and asks again; ``/steer TEXT`` queues a transient steering note that is sent, once,
as a developer message at the end of the next request (spec 7). When the file ends with a
message of yours that has no answer yet, it is answered first. Exit status as
``chatmdc run``: 0 after ``/quit`` or an end-session, 1 prompt errors, 2 usage errors
(missing key...).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from runtime.commands.common import check_workspace, error, prepare, transcript_path
from runtime.driver.events import EventLog
from runtime.driver.loop import EXIT_OK, EXIT_USAGE, FileRun, RunOutcome
from runtime.items import input_message

HELP = "commands: /quit, /retry, /steer TEXT  (Ctrl-C cancels a reply, Ctrl-D quits)"


class ChatLoop:
    """The interactive loop over an opened :class:`FileRun`."""

    def __init__(self, file_run: FileRun, read_line: Any) -> None:
        self.file_run = file_run
        self.read_line = read_line
        self.retry_point: tuple[int, int] | None = None
        self.display = file_run.ctx.display

    def say(self, text: str) -> None:
        self.display.note(text)

    def pending_user_message(self) -> bool:
        history = self.file_run.session.history
        if not history:
            return False
        last = history[-1].item
        return last.get("type", "message") == "message" and last.get("role") == "user"

    def loop(self) -> int:
        self.say(f"chatting in {self.file_run.path}; {HELP}")
        if self.pending_user_message() and (ended := self.turn()) is not None:
            return ended
        while True:
            try:
                line = self.read_line()
            except KeyboardInterrupt:
                self.say("(use /quit or Ctrl-D to leave)")
                continue
            except EOFError:
                return EXIT_OK
            text = line.strip()
            if not text:
                continue
            if text == "/quit":
                return EXIT_OK
            if text == "/retry":
                self.retry()
            elif text.startswith("/steer"):
                self.steer(text[len("/steer"):].strip())
            elif text.startswith("/") and " " not in text:
                self.say(f"unknown command {text}; {HELP}")
            else:
                self.submit(line.rstrip("\n"))
                if (ended := self.turn()) is not None:
                    return ended

    def submit(self, text: str) -> None:
        file_run = self.file_run
        assert file_run.appender is not None
        file_run.appender.user_message(input_message("user", text))
        file_run.session.add_user_message(text)
        self.retry_point = (len(file_run.session.history), file_run.appender.size())

    def steer(self, note: str) -> None:
        if self.file_run.session.steer(note):
            self.say("(steering note queued for the next request)")
        else:
            self.say("usage: /steer TEXT")

    def retry(self) -> None:
        if self.retry_point is None:
            self.say("(nothing to retry: send a message first)")
            return
        length, size = self.retry_point
        try:
            self.file_run.session.rewind(length)
        except Exception as problem:  # a moderated session cannot be rewound
            self.say(f"(cannot retry: {problem})")
            return
        assert self.file_run.appender is not None
        self.file_run.appender.truncate(size)
        self.turn()

    def turn(self) -> int | None:
        """One reply; the exit status when the session is over, else None."""
        outcome: RunOutcome = self.file_run.run(None)
        if outcome.status == "interrupted":
            self.say("(reply cancelled)")
        elif outcome.status == "failed" and outcome.message:
            self.say(f"error: {outcome.message} (/retry to try again)")
        elif outcome.status == "ended":
            self.say(outcome.message or "(the session was ended)")
            return EXIT_OK
        return None


def _prompt_reader() -> Any:
    from prompt_toolkit import PromptSession

    session: Any = PromptSession()

    def read() -> str:
        return str(session.prompt("you> "))

    return read


def run(args: argparse.Namespace) -> int:
    try:
        events = EventLog(args.events)
    except OSError as unwritable:
        error(f"cannot write the events file {args.events}: "
              f"{unwritable.strerror or unwritable}")
        return EXIT_USAGE
    problem: str | None = check_workspace(args)
    if problem is None and not (sys.stdin.isatty() and sys.stdout.isatty()):
        problem = "chatmdc chat needs a terminal (use chatmdc run for scripts)"
    if problem is not None:
        error(problem)
        return EXIT_USAGE
    try:
        path = transcript_path(args)
    except OSError as failure:
        error(f"cannot read {args.prompt} or create {args.output}: {failure.strerror or failure}")
        return EXIT_USAGE
    file_run = FileRun(path, session_file=args.session)
    refused = prepare(args, events, file_run, quiet=False)
    if refused is not None:
        if refused.outcome.message:
            error(refused.outcome.message)
        return refused.outcome.exit_code
    try:
        code = ChatLoop(file_run, _prompt_reader()).loop()
    finally:
        file_run.close()
        events.emit("run_finished", status="finished", exit_code=0,
                    requests=file_run.requests)
        events.close()
    return code


__all__ = ["ChatLoop", "run"]
