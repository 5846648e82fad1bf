"""Restore after a crash: a child process saves its session mid-conversation and is killed
with SIGKILL while the next turn is in flight; the restored session has the same canonical
and effective history, and carries on."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from runtime.prompt_checks import load_prompt
from runtime.session import Session
from tests.runtime.support import ScriptedModel, assistant, write_prompt
from tests.support import REPO_ROOT

CHILD = r"""
import json, sys, time
from pathlib import Path
from runtime.prompt_checks import load_prompt
from chatcommon.atomic import atomic_write_text
from runtime.session import Session
from tests.runtime.support import ScriptedModel, assistant, function_call

folder = Path(sys.argv[1])
session = Session.open(load_prompt(folder / "chat.chatmd"),
                       runners={"search": lambda payload: "the SECRET plan"})
session.run(ScriptedModel([[function_call("search", "{}", "c1")], [assistant("SECRET answer")]]))
session.save(folder / "session.json")
atomic_write_text(folder / "effective.json", json.dumps({
    "effective": session.effective_history(),
    "canonical": [[e.entry_id, e.item] for e in session.history]}))
print("saved", flush=True)

def hang(request):
    time.sleep(600)
    return []

session.add_user_message("this turn never finishes")
session.run_turn(hang)
"""


def test_session_restored_after_sigkill_has_the_same_effective_history(tmp_path: Path) -> None:
    write_prompt(tmp_path, script="redactor.chatml")
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path)], cwd=REPO_ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        assert line == "saved\n", child.stderr.read() if child.stderr else line
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(30)
    assert child.returncode == -signal.SIGKILL
    expected = json.loads((tmp_path / "effective.json").read_text())
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []

    restored = Session.restore(load_prompt(tmp_path / "chat.chatmd"), tmp_path / "session.json",
                               runners={"search": lambda payload: "x"})
    assert [[e.entry_id, e.item] for e in restored.history] == expected["canonical"]
    assert restored.effective_history() == expected["effective"]
    assert "[redacted]" in json.dumps(expected["effective"])
    assert restored.manager is not None and restored.manager.restored
    assert restored.manager.current_state() == {"redacted": 2}
    # the conversation goes on with fresh ids after the persisted ones
    restored.add_user_message("again")
    model = ScriptedModel([[assistant("fine")]])
    restored.run_turn(model)
    ids = [e.entry_id for e in restored.history]
    assert len(ids) == len(set(ids))
    assert "the SECRET plan" not in json.dumps(model.requests[0].input)
