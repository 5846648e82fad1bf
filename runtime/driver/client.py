"""The model client: the official ``openai`` SDK configured for a run (spec 8.9).

:func:`make_client` builds an ``openai.OpenAI`` client from :class:`ClientSettings`:
base URL and key from the arguments or the SDK's environment (``OPENAI_BASE_URL``,
``OPENAI_API_KEY``), the SDK's own retries (429, 5xx, connection errors, with backoff)
and timeouts. A missing key is :class:`MissingApiKey` before anything is sent. Every
HTTP attempt after the first of one call is reported to ``on_retry`` (the ``retry``
driver event). :func:`api_failure` turns the SDK's exceptions into :class:`ModelApiFailure`
whose message names the HTTP status and the server's error text.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

#: Spec 8.9: per-event wait of a stream, default and cap (seconds).
DEFAULT_IDLE_TIMEOUT = 600.0
MAX_IDLE_TIMEOUT = 3600.0
IDLE_TIMEOUT_VARIABLES = ("OCHAT_OPENAI_IDLE_TIMEOUT_SECONDS", "OCHAT_STREAM_TIMEOUT_SECONDS")
DEFAULT_TIMEOUT = 600.0
DEFAULT_MAX_RETRIES = 2


class MissingApiKey(Exception):
    """No API key in ``--api-key``/``OPENAI_API_KEY``: nothing can be sent."""


class ModelApiFailure(Exception):
    """The model API failed after the SDK's retries (status and server text in the message)."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def idle_timeout_from(environ: Mapping[str, str]) -> float:
    """Spec 8.9: the first set variable, default 600 s, capped at 3600 s, invalid -> default."""
    for name in IDLE_TIMEOUT_VARIABLES:
        raw = environ.get(name)
        if raw is None or not raw.strip():
            continue
        try:
            value = float(raw)
        except ValueError:
            return DEFAULT_IDLE_TIMEOUT
        if not value > 0 or value != value:
            return DEFAULT_IDLE_TIMEOUT
        return min(value, MAX_IDLE_TIMEOUT)
    return DEFAULT_IDLE_TIMEOUT


@attrs.frozen
class ClientSettings:
    base_url: str | None = None
    api_key: str | None = None
    max_retries: int = DEFAULT_MAX_RETRIES
    timeout: float = DEFAULT_TIMEOUT
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT

    @classmethod
    def from_environment(cls, environ: Mapping[str, str], *, base_url: str | None = None,
                         max_retries: int = DEFAULT_MAX_RETRIES,
                         timeout: float = DEFAULT_TIMEOUT) -> ClientSettings:
        return cls(base_url=base_url or environ.get("OPENAI_BASE_URL") or None,
                   api_key=environ.get("OPENAI_API_KEY") or None, max_retries=max_retries,
                   timeout=timeout, idle_timeout=idle_timeout_from(environ))


RetryObserver = Callable[[int, str], None]
"""``on_retry(attempt, url)``: the HTTP attempt number (2, 3, ...) of one call."""


class _AttemptCounter:
    """An httpx request hook: the SDK numbers the retries of one call in the
    ``x-stainless-retry-count`` header; every attempt after the first is reported."""

    def __init__(self, on_retry: RetryObserver | None) -> None:
        self.on_retry = on_retry

    def __call__(self, request: Any) -> None:
        retry = request.headers.get("x-stainless-retry-count", "0")
        count = int(retry) if retry.isdigit() else 0
        if count > 0 and self.on_retry is not None:
            self.on_retry(count + 1, str(request.url))


def make_client(settings: ClientSettings, *, on_retry: RetryObserver | None = None) -> Any:
    """An ``openai.OpenAI`` client for ``settings``; :class:`MissingApiKey` without a key."""
    if not settings.api_key:
        raise MissingApiKey("no API key: set OPENAI_API_KEY (any non-empty value for a local "
                            "OpenAI-compatible server); nothing was sent")
    import openai

    http_client = openai.DefaultHttpxClient(event_hooks={"request": [_AttemptCounter(on_retry)]})
    return openai.OpenAI(api_key=settings.api_key, base_url=settings.base_url,
                         max_retries=settings.max_retries,
                         timeout=openai.Timeout(settings.timeout, read=settings.timeout),
                         http_client=http_client)


def stream_timeout(settings: ClientSettings) -> Any:
    """Timeouts of a streamed call: each wait for the next bytes is the idle timeout."""
    import openai

    return openai.Timeout(settings.timeout, read=settings.idle_timeout)


def _server_text(body: object, fallback: str) -> str:
    if isinstance(body, Mapping):
        error = body.get("error", body)
        if isinstance(error, Mapping) and isinstance(error.get("message"), str):
            return str(error["message"])
        if isinstance(error, str):
            return error
    return fallback


def api_failure(error: BaseException) -> ModelApiFailure:
    """A readable :class:`ModelApiFailure` for an ``openai`` exception."""
    import openai

    if isinstance(error, openai.APIStatusError):
        text = _server_text(error.body, error.message)
        return ModelApiFailure(f"the model API answered HTTP {error.status_code}: {text}",
                               status=error.status_code)
    if isinstance(error, openai.APITimeoutError):
        return ModelApiFailure("the model API timed out (no answer within the timeout)")
    if isinstance(error, openai.APIConnectionError):
        cause = error.__cause__
        detail = f" ({type(cause).__name__}: {cause})" if cause is not None else ""
        return ModelApiFailure(f"could not reach the model API at {error.request.url}{detail}")
    if isinstance(error, openai.APIError):
        return ModelApiFailure(f"the model API reported an error: "
                               f"{_server_text(error.body, error.message)}")
    return ModelApiFailure(f"the model API failed: {error}")


__all__ = ["ClientSettings", "MissingApiKey", "ModelApiFailure", "api_failure", "idle_timeout_from",
           "make_client", "stream_timeout"]
