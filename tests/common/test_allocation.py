"""One-shot processes: ending without the teardown still flushes output and runs exit handlers."""

from __future__ import annotations

import subprocess
import sys

from chatcommon.allocation import end_one_shot_process, hold_until_exit
from tests.support import REPO_ROOT

_PROGRAM = """
import atexit, sys, threading
from chatcommon.allocation import end_one_shot_process, hold_until_exit, one_shot_process
one_shot_process()
atexit.register(lambda: print("atexit ran"))
hold_until_exit([object() for _ in range(1000)])
sys.stdout.write("buffered, not flushed;")
sys.stderr.write("to stderr;")
if sys.argv[1] == "thread":  # another thread running: a normal exit, which waits for it
    done = threading.Event()
    threading.Thread(target=lambda: (done.wait(0.2), print("thread done;"))).start()
    done.set()
sys.exit(end_one_shot_process(int(sys.argv[2])))
"""


def _run(mode: str, status: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _PROGRAM, mode, str(status)], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=60, check=False)


def test_a_one_shot_process_ends_with_its_status_output_flushed_and_handlers_run() -> None:
    for status in (0, 1, 2):
        done = _run("plain", status)
        assert done.returncode == status
        assert done.stdout == "buffered, not flushed;atexit ran\n"
        assert done.stderr == "to stderr;"


def test_with_another_thread_running_the_process_exits_normally() -> None:
    done = _run("thread", 1)
    assert done.returncode == 1
    assert "thread done;" in done.stdout and done.stdout.endswith("atexit ran\n")


def test_outside_a_one_shot_process_nothing_ends_and_nothing_is_held() -> None:
    import chatcommon.allocation as allocation

    value = object()
    hold_until_exit(value)
    assert all(held is not value for held in allocation._held)
    assert end_one_shot_process(3) == 3
