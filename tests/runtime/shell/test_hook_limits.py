"""ChatML hook limits and state (shell spec §4.1, §8.11): wall time, action sizes, persistence.

Every test runs a real ChatML hook script through the executor.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from runtime.shell.executor import ShellSession
from tests.runtime.shell.support import call, error, open_prompt, runtime, structured_tool


def before_script(body: str, *, initial: str = "0", limits: str = "") -> str:
    return (f'<script id="h" language="chatml" kind="shell_before_interceptor" {limits}>\n'
            f'let initial_state = {initial}\n'
            f'let before event state = {body}\n</script>\n')


def then(action: str, state: str = "state") -> str:
    return f"Task.bind({action}, fun u -> Task.pure({state}))"


def interceptor(failure: str = "deny", lifecycle: str = "session") -> str:
    return (f'<interceptors><interceptor id="i" phase="before" script="h" '
            f'lifecycle="{lifecycle}" failure="{failure}"/></interceptors>')


def session(tmp_path: Path, script: str, failure: str = "deny", lifecycle: str = "session",
            **options: object) -> ShellSession:
    text = script + runtime(interceptor(failure, lifecycle)) + structured_tool()
    return open_prompt(tmp_path, text, **options)  # type: ignore[arg-type]


def echo(shell: ShellSession, word: str = "ok") -> tuple[str, str] | str:
    outcome = call(shell, "run", program="echo", arguments=[word])
    return error(outcome) if outcome.error_code else outcome.text


# ------------------------------------------------------------------ wall time

SPIN = ("let rec spin n = if n < 0 then Intercept.continue() else spin(n + 1)\n"
        "let before event state = Task.bind(spin(0), fun u -> Task.pure(state))")


def spinning(limits: str) -> str:
    return (f'<script id="h" language="chatml" kind="shell_before_interceptor" {limits}>\n'
            f'let initial_state = 0\n{SPIN}\n</script>\n')


def test_a_hook_that_loops_forever_stops_at_its_wall_time(tmp_path: Path) -> None:
    # fuel 10^9 means 10^10 VM steps: only the wall-time deadline can stop this loop
    shell = session(tmp_path, spinning('fuel="1000000000" wall_time="300ms"'))
    code, message = echo(shell)  # type: ignore[misc]
    assert code == "interceptor_rejected"
    assert "wall-time limit exceeded" in message and "0.3 s" in message


def test_a_timed_out_hook_with_failure_keep_lets_the_command_run(tmp_path: Path) -> None:
    shell = session(tmp_path, spinning('fuel="1000000000" wall_time="200ms"'), failure="keep")
    assert echo(shell, "still") == "still\n"
    assert echo(shell, "again") == "again\n"  # the hook is usable after a timeout


def test_the_deadline_does_not_leak_into_later_runs(tmp_path: Path) -> None:
    from chatml.limits import METER

    shell = session(tmp_path, spinning('fuel="1000000000" wall_time="200ms"'), failure="keep")
    echo(shell)
    assert METER.deadline is None


# ------------------------------------------------------------------ per-action limits

def test_an_action_string_above_max_output_is_a_hook_error(tmp_path: Path) -> None:
    long_text = "x" * 100
    script = before_script(then(f'Intercept.respond("{long_text}", "")'),
                           limits='max_output="64"')
    code, message = echo(session(tmp_path, script))  # type: ignore[misc]
    assert code == "interceptor_rejected"
    assert "Intercept.respond" in message and "100 bytes exceeds max_output (64)" in message
    fits = before_script(then(f'Intercept.respond("{long_text[:64]}", "")'),
                         limits='max_output="64"')
    assert echo(session(tmp_path, fits)) == long_text[:64]


def test_an_action_array_above_max_array_items_is_a_hook_error(tmp_path: Path) -> None:
    rewrite = ("if Array.length(Shell.argv(event)) == 2 then "
               + then('Intercept.rewrite(["echo", "a", "b"])')
               + " else " + then("Intercept.continue()"))
    code, message = echo(session(tmp_path, before_script(  # type: ignore[misc]
        rewrite, limits='max_array_items="2"')))
    assert code == "interceptor_rejected" and "exceeds max_array_items (2)" in message
    assert echo(session(tmp_path, before_script(rewrite, limits='max_array_items="3"'))) == \
        "a b\n"


def test_with_failure_keep_an_oversize_action_is_ignored(tmp_path: Path) -> None:
    script = before_script(then('Intercept.reject("' + "r" * 80 + '")'), limits='max_output="8"')
    assert echo(session(tmp_path, script, failure="keep")) == "ok\n"


# ------------------------------------------------------------------ state persistence

QUOTA = before_script(
    "if state >= 2 then " + then('Intercept.reject("quota used")', "state + 1")
    + " else " + then("Intercept.continue()", "state + 1"))


def state_file(tmp_path: Path) -> Path:
    return tmp_path / ".chatmd" / "shell-hook-state.json"


def test_session_state_is_kept_between_calls_and_persisted(tmp_path: Path) -> None:
    shell = session(tmp_path, QUOTA)
    assert echo(shell, "1") == "1\n" and echo(shell, "2") == "2\n"
    assert echo(shell, "3") == ("interceptor_rejected", "interceptor i: quota used")
    data = json.loads(state_file(tmp_path).read_text())
    (entry,) = data["states"]
    assert data["version"] == 1 and entry["key"] == ["session", "r", "h"]
    assert entry["script_id"] == "h" and entry["kind"] == "shell_before_interceptor"
    assert entry["state"] == 3 and len(entry["manifest_sha256"]) == 64
    assert stat.S_IMODE(os.stat(state_file(tmp_path)).st_mode) == 0o600


def test_a_resumed_session_restores_the_state(tmp_path: Path) -> None:
    first = session(tmp_path, QUOTA)
    assert echo(first, "1") == "1\n" and echo(first, "2") == "2\n"
    resumed = session(tmp_path, QUOTA)
    assert echo(resumed, "3")[0] == "interceptor_rejected"


def test_state_is_not_restored_for_another_source_or_manifest(tmp_path: Path) -> None:
    def use_up(shell: ShellSession) -> None:
        assert [echo(shell, w) for w in ("1", "2")] == ["1\n", "2\n"]
        assert echo(shell, "3")[0] == "interceptor_rejected"

    use_up(session(tmp_path, QUOTA))
    edited = QUOTA.replace("quota used", "quota exhausted")  # another source SHA-256
    assert echo(session(tmp_path, edited), "again") == "again\n"
    use_up(session(tmp_path, QUOTA))
    longer = runtime(interceptor(), limits='<limits wall_time="2s" idle_time="1s"/>')
    other_manifest = open_prompt(tmp_path, QUOTA + longer + structured_tool())
    assert echo(other_manifest, "fresh") == "fresh\n"


def test_invocation_lifecycle_keeps_and_persists_nothing(tmp_path: Path) -> None:
    shell = session(tmp_path, QUOTA, lifecycle="invocation")
    assert [echo(shell, w) for w in ("1", "2", "3", "4")] == ["1\n", "2\n", "3\n", "4\n"]
    assert not state_file(tmp_path).exists()


def test_a_corrupt_state_file_restores_nothing(tmp_path: Path) -> None:
    state_file(tmp_path).parent.mkdir(parents=True)
    for junk in ("{not json", '{"version": 1, "states": [{"key": 5}]}', "[]",
                 '{"version": 1, "states": [{"key": ["r", "h"], "script_id": "h", '
                 '"state": {"v": 1}}]}'):
        state_file(tmp_path).write_text(junk)
        shell = session(tmp_path, QUOTA)
        assert echo(shell, "1") == "1\n"
        assert json.loads(state_file(tmp_path).read_text())["states"][0]["state"] == 1


def test_a_state_that_is_not_data_is_a_hook_error(tmp_path: Path) -> None:
    script = before_script(then("Intercept.continue()", "fun x -> x + 1"),
                           initial="fun x -> x")
    code, message = echo(session(tmp_path, script))  # type: ignore[misc]
    assert code == "interceptor_rejected" and "must be data" in message
    assert not state_file(tmp_path).exists()


def test_a_state_above_max_value_is_not_committed(tmp_path: Path) -> None:
    grow = before_script(
        "if String.length(state) > 900 then " + then('Intercept.reject("big")')
        + " else " + then("Intercept.continue()", 'state ++ "' + "y" * 600 + '"'),
        initial='""', limits='max_value="1KiB"')
    shell = session(tmp_path, grow)
    assert echo(shell, "1") == "1\n"
    code, message = echo(shell, "2")  # type: ignore[misc]
    assert code == "interceptor_rejected" and "exceeds max_value (1024)" in message
    saved = json.loads(state_file(tmp_path).read_text())["states"][0]["state"]
    assert saved == "y" * 600  # the oversize state was rolled back, the old one kept


def test_an_unwritable_state_file_fails_the_call_and_keeps_the_old_state(tmp_path: Path) -> None:
    blocked = tmp_path / "blocked"
    blocked.write_text("a file, not a folder")
    shell = session(tmp_path, QUOTA, hook_state_path=blocked / "state.json")
    code, message = echo(shell, "1")  # type: ignore[misc]
    assert code == "interceptor_rejected" and "could not be saved" in message
    assert echo(session(tmp_path, QUOTA, failure="keep",
                        hook_state_path=blocked / "state.json"), "2") == "2\n"


def test_a_top_level_that_never_ends_fails_instantiation_at_its_wall_time(
        tmp_path: Path) -> None:
    import pytest

    from runtime.shell.errors import InstantiationError

    script = ('<script id="h" language="chatml" kind="shell_before_interceptor" '
              'fuel="1000000000" wall_time="200ms">\n'
              'let rec spin n = if n < 0 then 0 else spin(n + 1)\n'
              'let initial_state = spin(0)\n'
              'let before event state = Task.bind(Intercept.continue(), '
              'fun u -> Task.pure(state))\n</script>\n')
    with pytest.raises(InstantiationError) as caught:
        session(tmp_path, script)
    assert caught.value.code == "shell.chatml_compile"
    assert "wall-time limit exceeded" in caught.value.message
