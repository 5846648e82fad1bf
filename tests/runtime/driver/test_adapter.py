"""The openai adapter against the loopback server: streaming, retries, failures, timeouts."""

from __future__ import annotations

from typing import Any

import pytest

from runtime.driver.client import (
    ClientSettings,
    MissingApiKey,
    ModelApiFailure,
    idle_timeout_from,
    make_client,
)
from runtime.driver.streaming import NullObserver, blocking_response, stream_response
from tests.runtime.driver import loopback as lb

BODY = {"model": "m", "input": [{"type": "message", "role": "user", "content": "hi"}],
        "stream": False}


class Recorder(NullObserver):
    def __init__(self) -> None:
        self.deltas: list[str] = []
        self.reasoning: list[str] = []
        self.done: list[dict[str, Any]] = []

    def text_delta(self, text: str) -> None:
        self.deltas.append(text)

    def reasoning_delta(self, text: str) -> None:
        self.reasoning.append(text)

    def item_done(self, item: dict[str, Any]) -> None:
        self.done.append(item)


def client_for(server: lb.LoopbackServer, retries: list[int] | None = None,
               **settings: Any) -> tuple[Any, ClientSettings]:
    config = ClientSettings(base_url=server.base_url, api_key="k", **settings)
    sink = retries if retries is not None else []
    return make_client(config, on_retry=lambda attempt, url: sink.append(attempt)), config


def test_streamed_text_arrives_in_deltas_and_items_in_output_order() -> None:
    reply = lb.stream(lb.reasoning_item("thinking it over"), lb.message_item("hello, world!"))
    with lb.LoopbackServer([reply]) as server:
        client, settings = client_for(server)
        seen = Recorder()
        items = stream_response(client, BODY, settings, seen)
    assert "".join(seen.deltas) == "hello, world!" and len(seen.deltas) == 2
    assert seen.reasoning == ["thinking it over"]
    assert [item["type"] for item in items] == ["reasoning", "message"]
    assert [item["type"] for item in seen.done] == ["reasoning", "message"]
    assert items[1]["content"][0]["text"] == "hello, world!"
    assert server.requests[0]["stream"] is True and server.requests[0]["model"] == "m"


def test_function_call_arguments_come_back_whole() -> None:
    with lb.LoopbackServer([lb.calls(lb.call_item("lookup", '{"q": "x"}', "call_9"))]) as server:
        client, settings = client_for(server)
        items = stream_response(client, BODY, settings, Recorder())
    assert items[0]["type"] == "function_call"
    assert (items[0]["name"], items[0]["arguments"], items[0]["call_id"]) == \
        ("lookup", '{"q": "x"}', "call_9")


def test_429_is_retried_by_the_sdk_and_reported() -> None:
    retries: list[int] = []
    replies = [lb.status(429, "slow down", **{"retry-after-ms": "5"}), lb.text("ok")]
    with lb.LoopbackServer(replies) as server:
        client, settings = client_for(server, retries)
        items = stream_response(client, BODY, settings, Recorder())
    assert items[0]["content"][0]["text"] == "ok"
    assert retries == [2] and len(server.requests) == 2


def test_400_fails_with_status_and_server_text() -> None:
    with lb.LoopbackServer([lb.status(400, "input is malformed")]) as server:
        client, settings = client_for(server)
        with pytest.raises(ModelApiFailure) as failure:
            stream_response(client, BODY, settings, Recorder())
    assert failure.value.status == 400
    assert "HTTP 400" in str(failure.value) and "input is malformed" in str(failure.value)
    assert len(server.requests) == 1  # a 400 is not retried


def test_retries_exhausted_name_the_last_status() -> None:
    replies = [lb.status(503, "overloaded", **{"retry-after-ms": "1"})] * 3
    with lb.LoopbackServer(replies) as server:
        client, settings = client_for(server, max_retries=2)
        with pytest.raises(ModelApiFailure, match="HTTP 503: overloaded"):
            stream_response(client, BODY, settings, Recorder())
    assert len(server.requests) == 3


def test_connection_dropped_mid_stream_keeps_the_completed_items() -> None:
    reply = lb.stream(lb.message_item("first"), lb.message_item("second"), drop_after=7)
    with lb.LoopbackServer([reply]) as server:
        client, settings = client_for(server)
        seen = Recorder()
        with pytest.raises(ModelApiFailure, match="ended before response.completed"):
            stream_response(client, BODY, settings, seen)
    assert [item["content"][0]["text"] for item in seen.done] == ["first"]
    assert len(server.requests) == 1  # an event was published: not retried


def test_stream_failing_before_its_first_event_is_retried() -> None:
    replies = [lb.Reply(events=({"type": "response.created"},), drop_after=0), lb.text("ok")]
    slept: list[float] = []
    with lb.LoopbackServer(replies) as server:
        client, settings = client_for(server)
        items = stream_response(client, BODY, settings, Recorder(), sleep=slept.append)
    assert items[0]["content"][0]["text"] == "ok" and slept == [1.0]


def test_error_event_fails_the_response() -> None:
    with lb.LoopbackServer([lb.error_event("the model crashed", "server_error")]) as server:
        client, settings = client_for(server)
        with pytest.raises(ModelApiFailure, match="server_error.*the model crashed"):
            stream_response(client, BODY, settings, Recorder())


def test_idle_stream_times_out() -> None:
    with lb.LoopbackServer([lb.text("late", delay=2.0)]) as server:
        client, settings = client_for(server, max_retries=0, idle_timeout=0.2)
        with pytest.raises(ModelApiFailure, match="timed out"):
            stream_response(client, BODY, settings, Recorder(), start_retries=0)


def test_blocking_response_returns_the_output() -> None:
    with lb.LoopbackServer([lb.blocking(lb.message_item("plain"))]) as server:
        client, settings = client_for(server)
        items = blocking_response(client, BODY, settings)
    assert items[0]["content"][0]["text"] == "plain"
    assert "stream" not in server.requests[0]


def test_missing_key_is_refused_before_sending() -> None:
    with pytest.raises(MissingApiKey, match="OPENAI_API_KEY"):
        make_client(ClientSettings(base_url="http://127.0.0.1:9/v1", api_key=None))


@pytest.mark.parametrize(("environ", "expected"), [
    ({}, 600.0),
    ({"OCHAT_OPENAI_IDLE_TIMEOUT_SECONDS": "30"}, 30.0),
    ({"OCHAT_STREAM_TIMEOUT_SECONDS": "45"}, 45.0),
    ({"OCHAT_OPENAI_IDLE_TIMEOUT_SECONDS": "9000"}, 3600.0),
    ({"OCHAT_OPENAI_IDLE_TIMEOUT_SECONDS": "soon"}, 600.0),
    ({"OCHAT_OPENAI_IDLE_TIMEOUT_SECONDS": "-3"}, 600.0),
    ({"OCHAT_OPENAI_IDLE_TIMEOUT_SECONDS": "nan"}, 600.0),
])
def test_idle_timeout_setting(environ: dict[str, str], expected: float) -> None:
    assert idle_timeout_from(environ) == expected
