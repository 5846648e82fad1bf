"""The ``webpage_to_markdown`` built-in: fetch a web page and return it as Markdown.

Only offered when the run allows network access (``--allow-network``);
otherwise every call answers ``webpage_to_markdown.network_disabled``.

* HTTP(S) only, through :class:`chatmd.request_context.HttpFetcher` (no
  ``file:``/``ftp:``, not even by redirect; a timeout; a size limit).
* HTML is converted with `markdownify <https://pypi.org/project/markdownify/>`_:
  a maintained, MIT-licensed converter built on BeautifulSoup, so malformed
  real-world HTML never fails, scripts and styles are dropped, and headings,
  lists, links, tables and code blocks come out as CommonMark. (The in-house
  :func:`chatmd.html_text.html_to_markdown` serves ``<doc markdown/>``; web
  pages in the wild need a tolerant tree builder and encoding detection,
  which BeautifulSoup provides.)
* A GitHub ``/blob/`` URL is fetched from ``raw.githubusercontent.com`` and
  returned as the file's text; a ``#L10-L80`` (or ``#L10``) fragment on a
  text response keeps only those 1-based lines.
* A response whose first non-blank character is ``<`` (not ``<?xml``) is taken as
  HTML; others (plain text, Markdown, JSON) are returned as text.
* The output is cut at :data:`~runtime.builtin_tools.text_files.MAX_OUTPUT_BYTES`.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

from chatmd.request_context import Fetcher, FetchError, HttpFetcher
from runtime.builtin_tools.arguments import parse_arguments, string_arg
from runtime.builtin_tools.failures import ToolFailure, fixed_output, guarded
from runtime.builtin_tools.text_files import clip
from runtime.tools import Runner

TOOL = "webpage_to_markdown"
MAX_PAGE_BYTES = 8 * 1024 * 1024
DISABLED = (f"{TOOL}.network_disabled: network access is off for this run, so no page can be "
            "fetched\nhint: the user can allow it with --allow-network")
_LINES = re.compile(r"L(\d+)(?:-L?(\d+))?")
_HTML = re.compile(rb"^(\xef\xbb\xbf)?\s*<(?!\?xml)")


def webpage_runner(allow_network: bool, fetcher: Fetcher | None = None) -> Runner:
    if not allow_network:
        return fixed_output(DISABLED)
    source = fetcher or HttpFetcher(timeout=30.0, max_bytes=MAX_PAGE_BYTES)
    return guarded(lambda payload: fetch_markdown(payload, source))


def github_raw_url(url: str) -> str | None:
    """``https://raw.githubusercontent.com/O/R/REF/PATH`` for a GitHub blob URL, else None."""
    parts = urlsplit(url)
    if parts.hostname not in ("github.com", "www.github.com"):
        return None
    segments = parts.path.strip("/").split("/")
    if len(segments) < 5 or segments[2] != "blob":
        return None
    owner, repo, _blob, *rest = segments
    return urlunsplit(("https", "raw.githubusercontent.com", f"/{owner}/{repo}/" + "/".join(rest),
                       "", ""))


def line_range(fragment: str) -> tuple[int, int] | None:
    """(first, last) 1-based lines of a ``L10-L80`` / ``L10`` fragment, else None."""
    match = _LINES.fullmatch(fragment)
    if match is None:
        return None
    first = int(match.group(1))
    last = int(match.group(2)) if match.group(2) else first
    return (max(first, 1), last) if last >= first else None


def fetch_markdown(payload: str, fetcher: Fetcher) -> str:
    url = string_arg(parse_arguments(payload, TOOL, ("url",)), "url", TOOL).strip()
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise ToolFailure(f"{TOOL}.invalid_url", f"{url} is not an http:// or https:// URL")
    raw = github_raw_url(url)
    address = urlunsplit(parts._replace(fragment=""))
    try:
        body = fetcher.fetch(raw or address)
    except FetchError as error:
        raise ToolFailure(f"{TOOL}.fetch_failed", str(error)) from None
    if raw is None and _HTML.match(body[:4096]):
        return clip(html_to_markdown(body))
    text = _decode(body)
    lines = line_range(parts.fragment)
    if lines is not None:
        first, last = lines
        text = "".join(text.splitlines(keepends=True)[first - 1:last])
    return clip(text)


def html_to_markdown(body: bytes) -> str:
    """Markdown for an HTML document (encoding detected by BeautifulSoup)."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(body, "html.parser")
    for hidden in soup(["script", "style", "noscript", "template", "head"]):
        hidden.decompose()
    markdown = MarkdownConverter(heading_style="atx", bullets="-").convert_soup(soup)
    return re.sub(r"\n{3,}", "\n\n", markdown).strip() + "\n"


def _decode(body: bytes) -> str:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        from bs4 import UnicodeDammit

        guess = UnicodeDammit(body).unicode_markup
        if guess is None:
            raise ToolFailure(f"{TOOL}.not_text", "the response is neither HTML nor text "
                              f"({len(body)} bytes)") from None
        return guess


__all__ = ["DISABLED", "fetch_markdown", "github_raw_url", "html_to_markdown",
           "line_range", "webpage_runner"]
