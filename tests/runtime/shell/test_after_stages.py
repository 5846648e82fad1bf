"""After-interceptors run once per executed stage, not once per request (shell spec §8.9, §8.11)."""

from __future__ import annotations

import json
from pathlib import Path

from runtime.shell.executor import ShellSession
from tests.runtime.shell.support import call, chain_tool, error, open_prompt, runtime


def then(action: str, state: str = "state") -> str:
    return f"Task.bind({action}, fun u -> Task.pure({state}))"


def after_script(body: str) -> str:
    return ('<script id="a" language="chatml" kind="shell_after_interceptor">\n'
            'let initial_state = 0\n'
            f'let after event state = {body}\n</script>\n')


def shell(tmp_path: Path, body: str, **attrs: str) -> ShellSession:
    interceptors = ('<interceptors><interceptor id="a" phase="after" script="a"/>'
                    '</interceptors>')
    text = after_script(body) + runtime(interceptors) + chain_tool(result="structured", **attrs)
    return open_prompt(tmp_path, text)


# Each stage's stderr names the stage (argv[0]) and the call number (the session state):
# one after-interceptor call per stage shows up as one line per stage.
TAG = then('Result.replace(event.stdout, event.stderr ++ "after " ++ Array.get(event.argv, 0) '
           '++ " #" ++ to_string(state) ++ " stdout=[" ++ event.stdout ++ "]\\n")',
           "state + 1")


def test_a_two_stage_pipeline_is_intercepted_stage_by_stage(tmp_path: Path) -> None:
    outcome = call(shell(tmp_path, TAG), "sh", command="printf abc | wc -c")
    data = json.loads(outcome.text)
    assert data["stdout"].strip() == "3"
    assert data["stderr"] == ("after printf #0 stdout=[]\n"
                              "after wc #1 stdout=[3\n]\n")
    assert [c["argv"][0] for c in data["commands"]] == ["printf", "wc"]


def test_every_pipeline_of_a_chain_is_intercepted(tmp_path: Path) -> None:
    session = shell(tmp_path, TAG)
    data = json.loads(call(session, "sh", command="echo one; echo two | cat").text)
    assert data["stdout"] == "two\n"
    assert data["stderr"].splitlines() == [
        "after echo #0 stdout=[one", "]", "after echo #1 stdout=[]", "after cat #2 stdout=[two",
        "]"]


def test_the_last_stage_replacement_is_what_the_model_sees(tmp_path: Path) -> None:
    body = ('if Array.get(event.argv, 0) == "wc" then '
            + then('Result.replace("replaced\\n", "")') + " else " + then("Result.keep()"))
    data = json.loads(call(shell(tmp_path, body), "sh", command="printf abc | wc -c").text)
    assert data["stdout"] == "replaced\n" and data["stderr"] == ""


def test_a_withheld_stage_stops_the_chain_before_later_pipelines(tmp_path: Path) -> None:
    marker = tmp_path / "later-ran"
    body = ('if String.contains(event.stdout, "secret") then '
            + then('Result.reject_disclosure("withheld")') + " else " + then("Result.keep()"))
    outcome = call(shell(tmp_path, body), "sh",
                   command=f"echo secret | cat; touch {marker}")
    assert error(outcome) == ("interceptor_rejected", "interceptor a: withheld")
    assert not marker.exists()


def test_a_middle_stage_is_withheld_by_its_stderr(tmp_path: Path) -> None:
    body = ('if String.contains(event.stderr, "leak") then '
            + then('Result.reject_disclosure("stderr withheld")') + " else "
            + then("Result.keep()"))
    session = shell(tmp_path, body)
    command = "sh -c 'echo leak >&2; echo data' | cat"
    assert error(call(session, "sh", command=command)) == (
        "interceptor_rejected", "interceptor a: stderr withheld")
    assert json.loads(call(session, "sh", command="echo fine | cat").text)["stdout"] == "fine\n"
