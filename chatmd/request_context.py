"""What request conversion needs from its host: folders, a fetcher, an agent runner (spec §7.3).

Conversion itself is pure; everything that touches the outside world comes
through a :class:`ConversionContext`:

* ``prompt_dir`` / ``cwd`` — where local ``<doc>``, ``<img>`` and ``<agent>``
  sources are looked up (prompt dir first, then cwd for documents and agents);
* a :class:`Fetcher` for remote documents and agent prompts — the default
  :class:`NoNetworkFetcher` refuses, :class:`HttpFetcher` does HTTP(S) GETs;
* an :class:`AgentRunner` for ``<agent>`` elements (none by default: agents
  are then reported as unavailable) and the :class:`AgentCache` that makes
  identical agent elements run once per session;
* the host's request defaults (model, output token limit, envelope flags) and the
  facts tool construction needs (path variables, MCP catalogue, shell definer).
"""

from __future__ import annotations

import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import attrs

from chatmd.declarations.shell_validation import ShellDefinitions
from chatmd.tools.host import PathVariables, ShellToolDefiner, ToolHost
from chatmd.tools.mcp import McpCatalogue, NoMcpCatalogue

#: The reference's default model when the prompt's ``<config>`` names none.
DEFAULT_MODEL = "gpt-4.5-preview"
DEFAULT_MAX_OUTPUT_TOKENS = 600
AGENT_CACHE_TTL_SECONDS = 24 * 60 * 60
#: Remote documents larger than this are refused (a prompt is not a download manager).
MAX_FETCH_BYTES = 32 * 1024 * 1024


class FetchError(Exception):
    """A remote resource could not be fetched (the message says why)."""


class Fetcher(Protocol):
    def fetch(self, url: str) -> bytes:
        """The body of ``url``; raise :class:`FetchError` on any failure."""
        ...


class NoNetworkFetcher:
    """The default: no network access at all."""

    def fetch(self, url: str) -> bytes:
        raise FetchError(f"network access is disabled, so {url} was not fetched")


def _http_only_opener() -> urllib.request.OpenerDirector:
    """An opener that speaks HTTP(S) only: no ``file:``, ``ftp:`` or ``data:`` URLs, not even
    through a redirect."""
    opener = urllib.request.OpenerDirector()
    for handler in (urllib.request.HTTPHandler(), urllib.request.HTTPSHandler(),
                    urllib.request.HTTPRedirectHandler(), urllib.request.HTTPErrorProcessor(),
                    urllib.request.HTTPDefaultErrorHandler()):
        opener.add_handler(handler)
    return opener


@attrs.frozen
class HttpFetcher:
    """HTTP(S) GET with a timeout and a size limit; other URL schemes are refused."""

    timeout: float = 30.0
    max_bytes: int = MAX_FETCH_BYTES
    user_agent: str = "chatmd-toolchain"

    def fetch(self, url: str) -> bytes:
        if not url.lower().startswith(("http://", "https://")):
            raise FetchError(f"{url!r} is not an http:// or https:// URL")
        request = urllib.request.Request(url, headers={"User-Agent": self.user_agent})
        try:
            with _http_only_opener().open(request, timeout=self.timeout) as response:
                body = response.read(self.max_bytes + 1)
        except urllib.error.HTTPError as error:
            raise FetchError(f"GET {url} failed: HTTP {error.code} {error.reason}") from None
        except (urllib.error.URLError, OSError, ValueError) as error:
            reason = getattr(error, "reason", error)
            raise FetchError(f"GET {url} failed: {reason}") from None
        if len(body) > self.max_bytes:
            raise FetchError(f"{url} is larger than {self.max_bytes} bytes")
        return body


class AgentRunError(Exception):
    """A nested agent run failed (the message says why)."""


class AgentRunner(Protocol):
    def run_agent(self, prompt_text: str, input_parts: Sequence[Mapping[str, Any]],
                  prompt_dir: str, session_id: str | None) -> str:
        """Run the agent prompt ``prompt_text`` (parsed with ``prompt_dir`` as its prompt dir)
        with one extra user message whose content is ``input_parts`` (Responses input parts),
        and return the text of its new assistant output messages (parts joined by a space,
        messages by LF). Raise :class:`AgentRunError` (or any exception) on failure.
        """
        ...


@attrs.frozen
class CallbackAgentRunner:
    """Adapts a plain function to :class:`AgentRunner`."""

    callback: Callable[[str, Sequence[Mapping[str, Any]], str, str | None], str]

    def run_agent(self, prompt_text: str, input_parts: Sequence[Mapping[str, Any]],
                  prompt_dir: str, session_id: str | None) -> str:
        return self.callback(prompt_text, input_parts, prompt_dir, session_id)


@attrs.define
class AgentCache:
    """Agent results per host session, keyed by ``(url, local, input)``, with a TTL."""

    ttl_seconds: float = AGENT_CACHE_TTL_SECONDS
    clock: Callable[[], float] = time.monotonic
    _entries: dict[tuple[str, bool, str], tuple[float, str]] = attrs.field(factory=dict)

    def get(self, key: tuple[str, bool, str]) -> str | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        stored_at, result = entry
        if self.clock() - stored_at > self.ttl_seconds:
            del self._entries[key]
            return None
        return result

    def put(self, key: tuple[str, bool, str], result: str) -> None:
        self._entries[key] = (self.clock(), result)


def _default_cwd() -> Path:
    return Path.cwd()


@attrs.define
class ConversionContext:
    """Everything request conversion may consult outside the prompt itself."""

    prompt_dir: Path = attrs.field(converter=Path)
    cwd: Path = attrs.field(factory=_default_cwd, converter=Path)
    fetcher: Fetcher = attrs.field(factory=NoNetworkFetcher)
    agent_runner: AgentRunner | None = None
    agent_cache: AgentCache = attrs.field(factory=AgentCache)
    session_id: str | None = None
    mcp_catalogue: McpCatalogue = attrs.field(factory=NoMcpCatalogue)
    #: Long-form shell tools: the shell compiler's definitions (shell spec §9), loaded lazily.
    shell_definer: ShellToolDefiner | None = attrs.field(factory=ShellDefinitions)
    paths: PathVariables | None = None
    environ: Mapping[str, str] | None = None
    default_model: str = DEFAULT_MODEL
    default_max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS
    parallel_tool_calls: bool | None = True
    store: bool | None = True
    stream: bool | None = False
    #: A pinned prompt (``--confine``): local ``<doc>``/``<img>``/``<agent>`` files only from
    #: beneath ``prompt_dir`` (realpath), never the working directory or an absolute path.
    confine: bool = False

    def tool_host(self) -> ToolHost:
        """The facts tool construction needs, taken from this context."""
        paths = self.paths or PathVariables.for_host(self.prompt_dir, cwd=self.cwd)
        return ToolHost(paths=paths, mcp_catalogue=self.mcp_catalogue, environ=self.environ,
                        shell_definer=self.shell_definer)

    @classmethod
    def local(cls, prompt_dir: str | os.PathLike[str], *, allow_network: bool = False,
              **kwargs: Any) -> ConversionContext:
        """Documents and images from disk; HTTP only with ``allow_network``; no agents."""
        fetcher: Fetcher = HttpFetcher() if allow_network else NoNetworkFetcher()
        return cls(prompt_dir=Path(prompt_dir), fetcher=fetcher, **kwargs)
