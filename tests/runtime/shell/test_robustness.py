"""Bad input never raises, and concurrent calls keep the audit chain intact."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runtime.shell.audit import verify
from runtime.shell.executor import ShellSession
from tests.runtime.shell.support import chain_tool, open_prompt, runtime, structured_tool

_SESSIONS: dict[str, ShellSession] = {}


def refusing_session(tmp_path_factory_dir: Path) -> ShellSession:
    """A session whose policy denies everything: fuzzed calls never start a process."""
    key = str(tmp_path_factory_dir)
    if key not in _SESSIONS:
        text = (runtime(policy='<policy default="deny"/>') + chain_tool()
                + structured_tool(stdin="optional", rationale="optional"))
        _SESSIONS[key] = open_prompt(tmp_path_factory_dir, text)
    return _SESSIONS[key]


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.sampled_from(["program", "command", "arguments",
                                                       "stdin", "rationale", "x"]), inner,
                                      max_size=4), max_leaves=12)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(payload=st.one_of(st.text(max_size=60), JSON.map(json.dumps)))
def test_any_payload_gives_a_structured_error_or_a_result(tmp_path: Path, payload: str) -> None:
    session = refusing_session(tmp_path)
    for tool in ("sh", "run"):
        outcome = session.call(tool, payload)
        assert outcome.result is None
        data = json.loads(outcome.text)
        assert data["error"]["code"] == outcome.error_code


def test_parallel_calls_keep_the_audit_chain(tmp_path: Path) -> None:
    text = runtime('<audit format="jsonl" path="audit.jsonl"/>') + structured_tool()
    session = open_prompt(tmp_path, text)
    payload = json.dumps({"program": "echo", "arguments": ["x"]})
    with ThreadPoolExecutor(8) as pool:
        outputs = list(pool.map(lambda _i: session.call("run", payload).text, range(24)))
    assert outputs == ["x\n"] * 24
    report = verify(str(tmp_path / "audit.jsonl"))
    assert report.broken_line is None and report.records >= 24 * 6
