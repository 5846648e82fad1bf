"""A loopback Responses API server for the driver tests: real HTTP on 127.0.0.1.

Each test scripts the replies in order (:class:`Reply`): a streamed answer (SSE events
exactly as the ``openai`` SDK parses them), a JSON answer with any status and headers
(429, 400...), or a stream that is cut after some events. Every request body is
recorded (``server.requests``). A request past the script gets a 500 naming the
problem, with ``x-should-retry: false`` so the SDK does not retry it. The server runs on
a daemon thread and stops when the test's ``with`` block ends.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attrs

Event = dict[str, Any]


@attrs.frozen
class Reply:
    """One scripted answer: SSE ``events`` (streamed) or a JSON ``body`` with ``status``."""

    events: tuple[Event, ...] = ()
    status: int = 200
    body: Any = None
    headers: tuple[tuple[str, str], ...] = ()
    drop_after: int | None = None
    """Close the connection after this many events (no ``response.completed``)."""
    delay: float = 0.0
    """Seconds to wait before answering (a slow model, for cancellation tests)."""
    pause_after: int | None = None
    pause: float = 0.0
    """Seconds to stall after ``pause_after`` events (a model stuck mid-stream)."""


_ids = itertools.count(1)


def _response(status: str, output: Sequence[Event] = ()) -> Event:
    return {"id": "resp_loopback", "object": "response", "created_at": 0, "model": "loopback",
            "status": status, "output": list(output), "parallel_tool_calls": True,
            "tool_choice": "auto", "tools": []}


def message_item(text: str, item_id: str | None = None) -> Event:
    return {"type": "message", "id": item_id or f"msg_{next(_ids)}", "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def call_item(name: str, arguments: str, call_id: str | None = None) -> Event:
    number = next(_ids)
    return {"type": "function_call", "id": f"fc_{number}", "call_id": call_id or f"call_{number}",
            "name": name, "arguments": arguments, "status": "completed"}


def custom_call_item(name: str, payload: str, call_id: str | None = None) -> Event:
    number = next(_ids)
    return {"type": "custom_tool_call", "id": f"ctc_{number}",
            "call_id": call_id or f"call_{number}", "name": name, "input": payload}


def reasoning_item(summary: str) -> Event:
    return {"type": "reasoning", "id": f"rs_{next(_ids)}",
            "summary": [{"type": "summary_text", "text": summary}]}


def _item_events(index: int, item: Event) -> list[Event]:
    kind = item["type"]
    if kind == "message":
        text = item["content"][0]["text"]
        opened = dict(item, content=[], status="in_progress")
        chunks = [text[i:i + 7] for i in range(0, len(text), 7)] or [""]
        events: list[Event] = [{"type": "response.output_item.added", "output_index": index,
                                "item": opened}]
        events += [{"type": "response.output_text.delta", "item_id": item["id"],
                    "output_index": index, "content_index": 0, "delta": chunk, "logprobs": []}
                   for chunk in chunks]
        events.append({"type": "response.output_text.done", "item_id": item["id"],
                       "output_index": index, "content_index": 0, "text": text, "logprobs": []})
    elif kind == "function_call":
        events = [{"type": "response.output_item.added", "output_index": index,
                   "item": dict(item, arguments="", status="in_progress")},
                  {"type": "response.function_call_arguments.delta", "item_id": item["id"],
                   "output_index": index, "delta": item["arguments"]},
                  {"type": "response.function_call_arguments.done", "item_id": item["id"],
                   "output_index": index, "arguments": item["arguments"],
                   "name": item["name"]}]
    elif kind == "custom_tool_call":
        events = [{"type": "response.output_item.added", "output_index": index,
                   "item": dict(item, input="")},
                  {"type": "response.custom_tool_call_input.done", "item_id": item["id"],
                   "output_index": index, "input": item["input"]}]
    elif kind == "reasoning":
        events = [{"type": "response.output_item.added", "output_index": index,
                   "item": dict(item, summary=[])}]
        events += [{"type": "response.reasoning_summary_text.delta", "item_id": item["id"],
                    "output_index": index, "summary_index": i, "delta": part["text"]}
                   for i, part in enumerate(item["summary"])]
    else:
        events = []
    events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    return events


def stream(*items: Event, drop_after: int | None = None, delay: float = 0.0,
           pause_after: int | None = None, pause: float = 0.0) -> Reply:
    """A streamed answer producing ``items``."""
    events: list[Event] = [{"type": "response.created", "response": _response("in_progress")}]
    for index, item in enumerate(items):
        events += _item_events(index, item)
    events.append({"type": "response.completed", "response": _response("completed", items)})
    numbered = tuple(dict(event, sequence_number=n) for n, event in enumerate(events))
    return Reply(events=numbered, drop_after=drop_after, delay=delay, pause_after=pause_after,
                 pause=pause)


def text(answer: str, **options: Any) -> Reply:
    return stream(message_item(answer), **options)


def calls(*items: Event) -> Reply:
    return stream(*items)


def error_event(message: str, code: str = "server_error") -> Reply:
    events = ({"type": "response.created", "response": _response("in_progress"),
               "sequence_number": 0},
              {"type": "error", "code": code, "message": message, "param": None,
               "sequence_number": 1})
    return Reply(events=events)


def status(code: int, message: str, **headers: str) -> Reply:
    body = {"error": {"message": message, "type": "invalid_request_error", "code": None,
                      "param": None}}
    return Reply(status=code, body=body, headers=tuple(headers.items()))


def blocking(*items: Event) -> Reply:
    """A non-streamed JSON answer producing ``items``."""
    return Reply(body=_response("completed", items))


class LoopbackServer:
    """The scripted server; use as a context manager (``with LoopbackServer([...]) as s``)."""

    def __init__(self, replies: Sequence[Reply] = ()) -> None:
        self.replies: list[Reply] = list(replies)
        self.requests: list[dict[str, Any]] = []
        self.served = 0
        self.lock = threading.Lock()
        self.server_seconds = 0.0
        self.finished_at: dict[int, float] = {}
        """Reply index -> when its answer was fully sent (``time.monotonic``)."""
        self.received_at: list[float] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def add(self, *replies: Reply) -> None:
        with self.lock:
            self.replies.extend(replies)

    def next_reply(self, body: dict[str, Any]) -> Reply | None:
        with self.lock:
            self.requests.append(body)
            self.received_at.append(time.monotonic())
            if self.served >= len(self.replies):
                self.served += 1
                return None
            reply = self.replies[self.served]
            self.served += 1
            return reply

    def __enter__(self) -> LoopbackServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def _sse(events: Sequence[Event]) -> Iterator[bytes]:
    for event in events:
        yield (f"event: {event['type']}\ndata: {json.dumps(event)}\n\n").encode()


def _handler_for(owner: LoopbackServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

        def do_POST(self) -> None:  # noqa: N802
            started = time.perf_counter()
            length = int(self.headers.get("content-length", "0"))
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw)
            except ValueError:
                body = {"unparseable": raw.decode("utf-8", "replace")}
            reply = owner.next_reply(body)
            index = len(owner.received_at) - 1
            try:
                self._answer(reply)
                owner.finished_at[index] = time.monotonic()
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout)
                self.close_connection = True
            finally:
                with owner.lock:
                    owner.server_seconds += time.perf_counter() - started

        def _answer(self, reply: Reply | None) -> None:
            if reply is None:
                self._json(500, {"error": {"message": "the loopback script has no reply left"}},
                           (("x-should-retry", "false"),))
                return
            if reply.delay:
                time.sleep(reply.delay)
            if not reply.events:
                self._json(reply.status, reply.body, reply.headers)
                return
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            events = reply.events if reply.drop_after is None else reply.events[:reply.drop_after]
            for number, chunk in enumerate(_sse(events)):
                if number == reply.pause_after:
                    time.sleep(reply.pause)
                self.wfile.write(chunk)
                self.wfile.flush()
            if reply.drop_after is not None:
                self.close_connection = True
                self.connection.shutdown(2)
                return
            self.close_connection = True

        def _json(self, code: int, body: Any, headers: Sequence[tuple[str, str]]) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for key, value in headers:
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler
