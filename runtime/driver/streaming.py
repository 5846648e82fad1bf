"""One model response: streamed (``responses.create(..., stream=True)``) or blocking (spec 8.3, 8.4).

:func:`stream_response` consumes the event stream: text and reasoning-summary deltas go
to the :class:`StreamObserver` as they arrive, every ``response.output_item.done`` item
is handed over as soon as it completes (:func:`iter_response` yields it then: the session
appends it, and starts a tool call, while the rest of the response is still arriving),
and the response ends with ``response.completed`` (or ``response.incomplete``). A stream that fails before
its first event is retried (spec 8.9: up to 5 times, delays 1 s, 2 s, ...); once an event
was received, failures propagate as :class:`~runtime.driver.client.ModelApiFailure`.
:func:`blocking_response` is the non-streamed form used by nested agents.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol

from runtime.driver.client import ClientSettings, ModelApiFailure, api_failure, stream_timeout

Item = dict[str, Any]
STREAM_START_RETRIES = 5


class StreamObserver(Protocol):
    def text_delta(self, text: str) -> None: ...

    def reasoning_delta(self, text: str) -> None: ...

    def item_started(self, item: Item) -> None: ...

    def item_done(self, item: Item) -> None: ...


class NullObserver:
    """Observes nothing."""

    def text_delta(self, text: str) -> None:
        pass

    def reasoning_delta(self, text: str) -> None:
        pass

    def item_started(self, item: Item) -> None:
        pass

    def item_done(self, item: Item) -> None:
        pass


def plain(value: Any) -> Item:
    """An SDK model as the JSON the server sent (unset fields left out)."""
    if isinstance(value, Mapping):
        return dict(value)
    result = value.to_dict(mode="json")
    return dict(result)


def _call_arguments(body: Mapping[str, Any]) -> dict[str, Any]:
    """``create`` keyword arguments for ``body``: the model by name, everything else as
    ``extra_body``. The body is JSON already (built by :mod:`chatmd.request`); passing it as
    ``extra_body`` skips the SDK's recursive parameter transformation, whose cost grows with
    the conversation (about 15 ms per request at a hundred items)."""
    rest = {key: value for key, value in body.items() if key not in ("stream", "model")}
    arguments: dict[str, Any] = {"extra_body": rest}
    if "model" in body:
        arguments["model"] = body["model"]
    return arguments


class _Started(Exception):
    """Wraps a failure that happened after the first event (never retried)."""

    def __init__(self, failure: ModelApiFailure) -> None:
        super().__init__(str(failure))
        self.failure = failure


def stream_response(client: Any, body: Mapping[str, Any], settings: ClientSettings,
                    observer: StreamObserver, **options: Any) -> list[Item]:
    """The output items of one streamed response (see the module docstring)."""
    return list(iter_response(client, body, settings, observer, **options))


def iter_response(client: Any, body: Mapping[str, Any], settings: ClientSettings,
                  observer: StreamObserver, *, start_retries: int = STREAM_START_RETRIES,
                  retry_delay: float = 1.0,
                  sleep: Callable[[float], None] = time.sleep) -> Iterator[Item]:
    """Each output item of one streamed response as soon as it completes
    (``response.output_item.done``), then any item only ``response.completed`` listed."""
    attempt = 0
    while True:
        try:
            yield from _stream_once(client, body, settings, observer)
            return
        except _Started as started:
            raise started.failure from None
        except ModelApiFailure:
            if attempt >= start_retries:
                raise
            attempt += 1
            sleep(retry_delay * attempt)


def _stream_once(client: Any, body: Mapping[str, Any], settings: ClientSettings,
                 observer: StreamObserver) -> Iterator[Item]:
    import openai

    try:
        stream = client.responses.create(**_call_arguments(body), stream=True,
                                         timeout=stream_timeout(settings))
    except openai.APIStatusError as error:
        raise _Started(api_failure(error)) from None  # the SDK already retried what it should
    except openai.APIError as error:
        raise _Started(api_failure(error)) from None
    started = False
    try:
        consumer = _Consumer(observer)
        for event in stream:
            started = True
            item = consumer.handle(event)
            if item is not None:
                yield item
        yield from consumer.rest()
    except ModelApiFailure as problem:
        if started:
            raise _Started(problem) from None
        raise
    except openai.APIError as error:
        raise _after(api_failure(error), started) from None
    except (json.JSONDecodeError, ValueError, TypeError, AttributeError) as error:
        raise _after(ModelApiFailure(f"the model API sent a malformed stream event: {error}"),
                     started) from None
    finally:
        stream.close()


def _after(failure: ModelApiFailure, started: bool) -> Exception:
    """``failure``, wrapped so it is not retried once an event was received."""
    return _Started(failure) if started else failure


class _Consumer:
    """The state of one stream: completed items by output index, the final output."""

    def __init__(self, observer: StreamObserver) -> None:
        self.observer = observer
        self.items: dict[int, Item] = {}
        self.final: list[Item] | None = None

    def handle(self, event: Any) -> Item | None:
        """Act on one event; the item it completed, if any."""
        kind = getattr(event, "type", None)
        if kind == "response.output_text.delta":
            self.observer.text_delta(str(event.delta))
        elif kind == "response.reasoning_summary_text.delta":
            self.observer.reasoning_delta(str(event.delta))
        elif kind == "response.output_item.added":
            self.observer.item_started(plain(event.item))
        elif kind == "response.output_item.done":
            item = plain(event.item)
            self.items[int(event.output_index)] = item
            self.observer.item_done(item)
            return item
        elif kind in ("response.completed", "response.incomplete"):
            self.final = [plain(item) for item in (event.response.output or [])]
        elif kind == "response.failed":
            error = getattr(event.response, "error", None)
            message = getattr(error, "message", None) or "no error text"
            code = getattr(error, "code", None)
            raise ModelApiFailure(f"the model API reported the response failed"
                                  f"{f' ({code})' if code else ''}: {message}")
        elif kind == "error":
            code = getattr(event, "code", None)
            raise ModelApiFailure(f"the model API sent an error event"
                                  f"{f' ({code})' if code else ''}: {event.message}")
        return None

    def rest(self) -> list[Item]:
        """The items of ``response.completed`` no ``output_item.done`` delivered."""
        if self.final is None:
            raise ModelApiFailure("the model API stream ended before response.completed "
                                  "(connection closed mid-stream)")
        if not self.items:
            return list(self.final)
        seen = {item.get("id") for item in self.items.values()}
        return [item for item in self.final if item.get("id") and item.get("id") not in seen]


def blocking_response(client: Any, body: Mapping[str, Any], settings: ClientSettings) -> list[Item]:
    """The output items of one non-streamed response."""
    import openai

    try:
        response = client.responses.create(**_call_arguments(body), timeout=settings.timeout)
    except openai.APIError as error:
        raise api_failure(error) from None
    reported = getattr(response, "error", None)
    if reported is not None and getattr(response, "status", None) == "failed":
        raise ModelApiFailure(f"the model API reported the response failed: "
                              f"{getattr(reported, 'message', reported)}")
    return [plain(item) for item in (getattr(response, "output", None) or [])]


__all__ = ["NullObserver", "StreamObserver", "blocking_response", "iter_response", "plain",
           "stream_response"]
