"""The driver commands' flags (argparse only: cheap to import when ``chatmdc`` builds its
parser)."""

from __future__ import annotations

import argparse

from runtime.driver.client import DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT

APPROVAL_MODES = ("ask", "allow", "deny")


def _whole_number(text: str, minimum: int, expected: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {value}")
    return value


def positive_int(text: str) -> int:
    return _whole_number(text, 1, "at least 1")


def _non_negative_int(text: str) -> int:
    return _whole_number(text, 0, "0 or more")


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text}")
    return value


def add_driver_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("prompt", metavar="PROMPT", help="the ChatMD prompt / transcript")
    parser.add_argument("--output", metavar="FILE",
                        help="append to FILE instead of PROMPT (created as a copy of PROMPT "
                        "when missing)")
    parser.add_argument("--base-url", metavar="URL",
                        help="the Responses API base URL (default: OPENAI_BASE_URL, else the "
                        "SDK's default)")
    parser.add_argument("--model", metavar="NAME",
                        help="use this model instead of the prompt's <config model>")
    parser.add_argument("--workspace", metavar="DIR",
                        help="folder the built-in tools work in (default: the current folder)")
    parser.add_argument("--allow-network", action="store_true",
                        help="allow remote documents, remote agent prompts and "
                        "webpage_to_markdown")
    parser.add_argument("--approvals", choices=APPROVAL_MODES, default="ask",
                        help="what to do when a tool asks for approval (default: ask)")
    parser.add_argument("--session", metavar="FILE",
                        help="persist and restore the moderator snapshot in FILE (sidecar)")
    parser.add_argument("--no-stream", action="store_true",
                        help="send non-streamed requests (the answer is printed when complete)")
    parser.add_argument("--events", metavar="FILE",
                        help="append one JSON line per driver event to FILE")
    parser.add_argument("--max-retries", type=_non_negative_int, default=DEFAULT_MAX_RETRIES,
                        metavar="N", help="SDK retries of 429, 5xx and connection errors "
                        f"(default {DEFAULT_MAX_RETRIES})")
    parser.add_argument("--timeout", type=_seconds, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                        help=f"per-request timeout (default {DEFAULT_TIMEOUT:g})")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="text: streamed output and text diagnostics; json: one JSON "
                        "result (and JSON diagnostics) on standard output")


__all__ = ["APPROVAL_MODES", "add_driver_flags", "positive_int"]
