"""Running one pipeline of prepared stages (shell spec §8.9, §8.15).

:func:`run_pipeline` spawns every stage (each in its own session, so each
is the leader of its own process group) connected by ``os.pipe``; the parent
closes its copies of the pipe ends at once. It writes the tool stdin to the
first stage and drains the last stage's stdout and every stage's stderr with
a selector, keeping the first ``stdout``/``stderr`` bytes of each channel
and draining the rest. The wall deadline, the idle limit (no byte read on any
channel) and the ``total_output`` budget (raw bytes read) abort the run.
Whatever ends the run, every stage's process group is killed with SIGKILL
and every stage is reaped: no orphan keeps running.
"""

from __future__ import annotations

import contextlib
import os
import resource
import selectors
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from runtime.shell.errors import ShellError

_READ = 65536


@dataclass(frozen=True)
class Stage:
    """One process to spawn: the final argv (backend-wrapped), cwd, env, OS limits."""

    argv: tuple[str, ...]
    cwd: str
    env: Mapping[str, str]
    rlimits: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class Budget:
    deadline: float
    idle: float | None
    stdout: int
    stderr: int
    total_output: int


@dataclass
class _Capture:
    limit: int
    data: bytearray = field(default_factory=bytearray)
    seen: int = 0

    def add(self, chunk: bytes) -> None:
        self.seen += len(chunk)
        room = self.limit - len(self.data)
        if room > 0:
            self.data += chunk[:room]

    @property
    def truncated(self) -> bool:
        return self.seen > len(self.data)


@dataclass(frozen=True)
class PipelineOutcome:
    statuses: tuple[tuple[str, int], ...]
    stdout: bytes
    stdout_truncated: bool
    stderrs: tuple[tuple[bytes, bool], ...]
    termination: str | None
    output_bytes: tuple[tuple[str, int], ...]


def status_of(returncode: int) -> tuple[str, int]:
    return ("signaled", -returncode) if returncode < 0 else ("exited", returncode)


def _limiter(rlimits: Sequence[tuple[int, int]]) -> Callable[[], None] | None:
    if not rlimits:
        return None

    def apply() -> None:
        for which, value in rlimits:
            resource.setrlimit(which, (value, value))
    return apply


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def _spawn(stages: Sequence[Stage], has_stdin: bool) -> list[subprocess.Popen[bytes]]:
    processes: list[subprocess.Popen[bytes]] = []
    previous: int | None = None
    try:
        for index, stage in enumerate(stages):
            last = index == len(stages) - 1
            stdin: int = (subprocess.PIPE if has_stdin else subprocess.DEVNULL) \
                if previous is None else previous
            write_end: int | None = None
            stdout: int = subprocess.PIPE
            if not last:
                read_end, write_end = os.pipe()
                stdout = write_end
            try:
                processes.append(subprocess.Popen(
                    list(stage.argv), stdin=stdin, stdout=stdout, stderr=subprocess.PIPE,
                    cwd=stage.cwd, env=dict(stage.env), close_fds=True,
                    start_new_session=True, preexec_fn=_limiter(stage.rlimits)))
            finally:
                if previous is not None:
                    os.close(previous)
                    previous = None
                if write_end is not None:
                    os.close(write_end)
            if not last:
                previous = read_end
    except OSError as error:
        if previous is not None:
            os.close(previous)
        _finish(processes)
        raise ShellError("spawn_error", f"cannot start {stages[len(processes)].argv[0]}: "
                         f"{error.strerror or error}") from None
    return processes


def _finish(processes: Sequence[subprocess.Popen[bytes]]) -> None:
    """Kill every stage's group, close the parent's pipe ends, reap every stage."""
    for process in processes:
        _kill_group(process)
    for process in processes:
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
    for process in processes:
        with contextlib.suppress(OSError):
            process.wait()
    for process in processes:
        _kill_group(process)


def run_pipeline(stages: Sequence[Stage], stdin: bytes, budget: Budget) -> PipelineOutcome:
    """Run ``stages`` as one pipeline; raises ShellError(spawn_error) if a stage cannot start."""
    processes = _spawn(stages, bool(stdin))
    try:
        return _drain(processes, stdin, budget)
    finally:
        _finish(processes)


def _drain(processes: list[subprocess.Popen[bytes]], stdin: bytes,
           budget: Budget) -> PipelineOutcome:
    selector = selectors.DefaultSelector()
    stdout = _Capture(budget.stdout)
    stderrs = [_Capture(budget.stderr) for _ in processes]
    last = processes[-1]
    assert last.stdout is not None
    selector.register(last.stdout, selectors.EVENT_READ, stdout)
    for process, capture in zip(processes, stderrs, strict=True):
        assert process.stderr is not None
        selector.register(process.stderr, selectors.EVENT_READ, capture)
    exits = _watch_exits(selector, processes)
    running = len(exits) if len(exits) == len(processes) else -1
    pending = memoryview(stdin)
    first = processes[0].stdin
    if first is not None:
        os.set_blocking(first.fileno(), False)
        selector.register(first, selectors.EVENT_WRITE, None)
    total = 0
    activity = time.monotonic()
    termination: str | None = None
    try:
        while selector.get_map() and termination is None:
            wait, termination = _timeout(budget, activity)
            if termination is not None:
                break
            for key, _mask in selector.select(wait):
                if key.data is None:
                    pending = _feed(selector, key.fileobj, pending)
                    continue
                if isinstance(key.data, _Exit):
                    key.data.process.poll()
                    selector.unregister(key.fileobj)
                    running -= 1
                    if running == 0:
                        # every stage has exited: what is left in their groups (background
                        # children holding the pipes open) is killed, so the pipes close
                        for process in processes:
                            _kill_group(process)
                    continue
                chunk = os.read(key.fd, _READ)
                if not chunk:
                    selector.unregister(key.fileobj)
                    continue
                activity = time.monotonic()
                key.data.add(chunk)
                total += len(chunk)
                if total > budget.total_output:
                    termination = "output_limit_exceeded"
                    break
        if termination is None:
            termination = _wait(processes, budget, activity)
    finally:
        selector.close()
        for fd in exits:
            os.close(fd)
    if termination is not None:
        for process in processes:
            _kill_group(process)
        for process in processes:
            with contextlib.suppress(OSError):
                process.wait()
    statuses = tuple(status_of(p.returncode if p.returncode is not None else -9)
                     for p in processes)
    return PipelineOutcome(
        statuses, bytes(stdout.data), stdout.truncated,
        tuple((bytes(c.data), c.truncated) for c in stderrs), termination,
        (("stdout", stdout.seen),) + tuple(("stderr", c.seen) for c in stderrs))


@dataclass(frozen=True)
class _Exit:
    process: subprocess.Popen[bytes]


def _watch_exits(selector: selectors.BaseSelector,
                 processes: Sequence[subprocess.Popen[bytes]]) -> list[int]:
    """Register a pidfd per stage (Linux): its exit wakes the selector, no polling."""
    if not hasattr(os, "pidfd_open"):
        return []
    fds: list[int] = []
    for process in processes:
        try:
            fd = os.pidfd_open(process.pid)
        except OSError:
            continue
        fds.append(fd)
        selector.register(fd, selectors.EVENT_READ, _Exit(process))
    return fds


def _timeout(budget: Budget, activity: float) -> tuple[float, str | None]:
    now = time.monotonic()
    if now >= budget.deadline:
        return 0.0, "timed_out"
    wait = budget.deadline - now
    if budget.idle is not None:
        idle_end = activity + budget.idle
        if now >= idle_end:
            return 0.0, "idle_timed_out"
        wait = min(wait, idle_end - now)
    return wait, None


def _feed(selector: selectors.BaseSelector, stream: Any, pending: memoryview) -> memoryview:
    fd = stream.fileno()
    try:
        written = os.write(fd, pending[:_READ]) if pending else 0
    except BlockingIOError:
        return pending
    except OSError:
        written = len(pending)
    pending = pending[written:]
    if not pending:
        selector.unregister(stream)
        with contextlib.suppress(OSError):
            stream.close()
    return pending


def _wait(processes: Sequence[subprocess.Popen[bytes]], budget: Budget,
          activity: float) -> str | None:
    for process in processes:
        while True:
            wait, termination = _timeout(budget, activity)
            if termination is not None:
                return termination
            try:
                process.wait(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                continue
    return None
