"""``chatmdc chat`` driven through a pseudo-terminal: a real process, real keystrokes."""

from __future__ import annotations

import contextlib
import os
import pty
import re
import select
import signal
import time
from pathlib import Path

from tests.runtime.driver import loopback as lb
from tests.runtime.driver.support import CHATMDC, parses, write
from tests.support import REPO_ROOT

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")
PROMPT = '<config model="m"/>\n<system>Be brief.</system>\n<user>\n\n</user>\n'


class Terminal:
    """A child process on a pty; ``expect`` waits for text on its screen output."""

    def __init__(self, argv: list[str], cwd: Path) -> None:
        env = dict(os.environ, OPENAI_API_KEY="k", PYTHONPATH=str(REPO_ROOT), TERM="xterm",
                   PROMPT_TOOLKIT_NO_CPR="1", COLUMNS="120", LINES="40")
        pid, fd = pty.fork()
        if pid == 0:  # the child: becomes the program
            os.chdir(cwd)
            os.execvpe(argv[0], argv, env)
        self.pid, self.fd = pid, fd
        self.seen = ""
        self.mark = 0

    def read(self, seconds: float) -> None:
        ready, _, _ = select.select([self.fd], [], [], seconds)
        if ready:
            try:
                data = os.read(self.fd, 65536)
            except OSError:
                return
            self.seen += ANSI.sub("", data.decode("utf-8", "replace"))

    def expect(self, text: str, seconds: float = 20.0) -> None:
        deadline = time.monotonic() + seconds
        while text not in self.seen[self.mark:]:
            if time.monotonic() > deadline:
                raise AssertionError(f"did not see {text!r}; screen so far:\n{self.seen}")
            self.read(0.1)
        self.mark = self.seen.index(text, self.mark) + len(text)

    def type(self, text: str) -> None:
        os.write(self.fd, text.encode())

    def stop(self) -> None:
        """Kill the child if it still runs, and reap it."""
        with contextlib.suppress(ChildProcessError):
            done, _ = os.waitpid(self.pid, os.WNOHANG)
            if not done:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
        os.close(self.fd)

    def wait(self, seconds: float = 20.0) -> int:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.read(0.05)
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status)
        os.kill(self.pid, signal.SIGKILL)
        raise AssertionError(f"the chat did not exit; screen:\n{self.seen}")


def user_texts(request: dict[str, object]) -> list[str]:
    return [part["text"] for item in request["input"]  # type: ignore[union-attr]
            if item.get("role") in ("user", "developer")  # type: ignore[union-attr]
            for part in item["content"]]  # type: ignore[index]


def test_chat_loop_messages_steer_retry_cancel_and_quit(tmp_path: Path) -> None:
    prompt = write(tmp_path / "p.chatmd", PROMPT)
    replies = [lb.text("Hello human."),
               lb.text("First take."),
               lb.text("Second take."),
               lb.stream(lb.message_item("done part"), lb.message_item("stuck part"),
                         pause_after=7, pause=30.0),
               lb.text("After the cancel.")]
    with lb.LoopbackServer(replies) as server:
        term = Terminal([*CHATMDC, "chat", str(prompt), "--base-url", server.base_url],
                        tmp_path)
        try:
            term.expect("you>")
            term.type("Hi there\r")
            term.expect("Hello human.")
            term.expect("you>")
            term.type("/steer answer in French\r")
            term.expect("steering note queued")
            term.expect("you>")
            term.type("Tell me more\r")
            term.expect("First take.")
            term.expect("you>")
            term.type("/retry\r")
            term.expect("Second take.")
            term.expect("you>")
            term.type("Go on\r")
            term.expect("done part")
            time.sleep(0.3)
            term.type("\x03")  # Ctrl-C: the terminal sends SIGINT to the chat
            term.expect("reply cancelled")
            term.expect("you>")
            term.type("Again\r")
            term.expect("After the cancel.")
            term.expect("you>")
            term.type("/quit\r")
            code = term.wait()
        finally:
            term.stop()
    assert code == 0, term.seen
    requests = server.requests
    assert user_texts(requests[0]) == ["Be brief.", "Hi there"] or \
        user_texts(requests[0])[-1] == "Hi there"
    assert user_texts(requests[1])[-2:] == ["Tell me more", "answer in French"]
    assert requests[1]["input"][-1]["role"] == "developer"
    # /retry sends the same conversation again, without the discarded answer or the note
    assert "First take." not in str(requests[2]["input"])
    assert user_texts(requests[2])[-1] == "Tell me more"
    assert "answer in French" not in str(requests[2]["input"])
    text = prompt.read_text()
    assert "First take." not in text and "Second take." in text
    assert "done part" in text and "stuck part" not in text
    assert "After the cancel." in text and text.endswith("<user>\n\n</user>\n")
    assert text.count("<user>") == 5  # Hi there, Tell me more, Go on, Again, the placeholder
    assert "done part" in str(requests[4]["input"])
    parses(prompt)


def test_chat_asks_before_a_shell_tool_that_needs_approval(tmp_path: Path) -> None:
    prompt = write(tmp_path / "p.chatmd", '<config model="m"/>\n<tool name="say" command="echo"/>\n'
                   '<user>\n\n</user>\n')
    replies = [lb.calls(lb.call_item("say", '{"arguments": ["approved-run"]}', "c1")),
               lb.text("Ran it."),
               lb.calls(lb.call_item("say", '{"arguments": ["denied-run"]}', "c2")),
               lb.text("Did not run it.")]
    with lb.LoopbackServer(replies) as server:
        term = Terminal([*CHATMDC, "chat", str(prompt), "--base-url", server.base_url],
                        tmp_path)
        try:
            term.expect("you>")
            term.type("Say it\r")
            term.expect("approve?")
            term.type("y\r")
            term.expect("Ran it.")
            term.expect("you>")
            term.type("Say it again\r")
            term.expect("approve?")
            term.type("n\r")
            term.expect("Did not run it.")
            term.expect("you>")
            term.type("/quit\r")
            code = term.wait()
        finally:
            term.stop()
    assert code == 0, term.seen
    outputs = {item["call_id"]: item["output"] for request in server.requests
               for item in request["input"]  # type: ignore[union-attr]
               if item.get("type") == "function_call_output"}  # type: ignore[union-attr]
    assert "approved-run" in str(outputs["c1"])
    assert "denied" in str(outputs["c2"]) and "denied-run" not in str(outputs["c2"])
