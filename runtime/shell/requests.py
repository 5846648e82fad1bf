"""From a model call to a request (shell spec §8.1).

:func:`decode_input` reads the function call's JSON arguments strictly (an
object, no duplicate keys, only the known fields with the right types).
:func:`build_request` applies the tool's stdin/rationale presence rules, rejects
fields foreign to the mode, validates ``arguments`` and builds the
:class:`Request`: pipelines of argv tuples joined by chain operators. Model
arguments are always literal argv elements: nothing here splits, expands or
quotes them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from chatmd.shell.compile.chain import ChainError, parse_chain
from runtime.shell.errors import ShellError

FIELDS = ("program", "command", "script", "arguments", "stdin", "rationale")
_FORBIDDEN = {"fixed": ("program", "command", "script"), "script": ("program", "command", "script"),
              "structured": ("command", "script"), "chain": ("program", "script", "arguments"),
              "raw": ("program", "command", "arguments")}


@dataclass(frozen=True)
class Request:
    """What one tool call asks for."""

    kind: str
    """``structured`` (fixed, structured and chain tools), ``raw_shell`` or ``script_file``."""
    pipelines: tuple[tuple[tuple[str, ...], ...], ...]
    operators: tuple[str, ...]
    stdin: bytes
    rationale: str | None
    script_sha256: str | None = None
    script_preview: str | None = None


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ShellError("shell.tool_duplicate_input", f"duplicate input field {key}")
        result[key] = value
    return result


def decode_input(payload: str) -> dict[str, Any]:
    """The call's arguments as a dict of known, well-typed fields."""
    try:
        value = json.loads(payload or "{}", object_pairs_hook=_no_duplicates)
    except ShellError:
        raise
    except (ValueError, RecursionError) as error:
        raise ShellError("shell.tool_invalid_input",
                         f"the arguments are not valid JSON: {error}") from None
    if not isinstance(value, dict):
        raise ShellError("shell.tool_invalid_input", "the arguments must be a JSON object")
    for key, item in value.items():
        if key not in FIELDS:
            raise ShellError("shell.tool_unknown_input",
                             f"unknown input field {key}; expected some of {', '.join(FIELDS)}")
        if key == "arguments":
            if not isinstance(item, list) or not all(isinstance(a, str) for a in item):
                raise ShellError("shell.tool_invalid_input",
                                 "arguments must be an array of strings")
        elif not isinstance(item, str):
            raise ShellError("shell.tool_invalid_input", f"{key} must be a string")
    return value


def _presence(name: str, mode: str, inputs: Mapping[str, Any]) -> None:
    if mode == "none" and name in inputs:
        raise ShellError(f"shell.tool_{name}_forbidden", f"{name} is not accepted by this tool")
    if mode == "required" and name not in inputs:
        raise ShellError(f"shell.tool_{name}_required", f"{name} is required by this tool")


def check_common(inputs: Mapping[str, Any], mode_name: str, stdin_mode: str,
                 rationale_mode: str, max_stdin: int) -> tuple[bytes, str | None]:
    """Steps 2-4 of §8.1: stdin and rationale presence, fields foreign to the mode."""
    _presence("stdin", stdin_mode, inputs)
    stdin = str(inputs.get("stdin", "")).encode("utf-8", "surrogateescape")
    if len(stdin) > max_stdin:
        raise ShellError("shell.tool_stdin_too_large",
                         f"stdin has {len(stdin)} bytes; the limit is {max_stdin}")
    _presence("rationale", rationale_mode, inputs)
    for name in _FORBIDDEN[mode_name]:
        if name in inputs:
            raise ShellError("shell.tool_field_forbidden", f"{name} is not valid for this mode")
    rationale = inputs.get("rationale")
    return stdin, rationale if isinstance(rationale, str) else None


def check_arguments(inputs: Mapping[str, Any], bounds: Mapping[str, Any]) -> list[str]:
    """The model arguments of a fixed tool, checked against ``<arguments>``."""
    mode = bounds.get("mode") or "optional"
    if mode == "none":
        if "arguments" in inputs:
            raise ShellError("shell.tool_arguments_forbidden", "this tool accepts no arguments")
        return []
    arguments = list(inputs.get("arguments") or [])
    minimum = bounds.get("min_count")
    if minimum is None:
        minimum = 1 if mode == "required" else 0
    if mode == "required" and "arguments" not in inputs:
        raise ShellError("shell.tool_arguments_required", "arguments are required")
    if len(arguments) < minimum:
        raise ShellError("shell.tool_too_few_arguments",
                         f"{len(arguments)} arguments given; at least {minimum} required")
    maximum = bounds.get("max_count")
    if maximum is not None and len(arguments) > maximum:
        raise ShellError("shell.tool_too_many_arguments",
                         f"{len(arguments)} arguments given; at most {maximum} allowed")
    size = bounds.get("max_item_bytes")
    for index, arg in enumerate(arguments):
        if size is not None and len(arg.encode("utf-8", "surrogateescape")) > size:
            raise ShellError("shell.tool_argument_too_large",
                             f"argument {index} is longer than {size} bytes")
    return arguments


def check_argv(argv: Sequence[str]) -> tuple[str, ...]:
    if not argv or not argv[0]:
        raise ShellError("shell.tool_program_required", "the program must be non-empty")
    if any("\0" in item for item in argv):
        raise ShellError("shell.tool_invalid_input", "programs and arguments must not contain NUL")
    return tuple(argv)


def single(argv: Sequence[str]) -> tuple[tuple[tuple[str, ...], ...], ...]:
    return ((check_argv(argv),),)


def chain_request(inputs: Mapping[str, Any], stdin: bytes, rationale: str | None) -> Request:
    command = inputs.get("command")
    if command is None:
        raise ShellError("shell.tool_command_required", "command is required")
    try:
        chain = parse_chain(str(command))
    except ChainError as error:
        raise ShellError("shell.tool_chain_parse",
                         f"{error.message} at byte offset {error.offset}") from None
    pipelines = tuple(tuple(check_argv(words) for words in p.commands) for p in chain.pipelines)
    return Request("structured", pipelines, chain.operators, stdin, rationale)


def structured_request(inputs: Mapping[str, Any], stdin: bytes,
                       rationale: str | None) -> Request:
    if "program" not in inputs:
        raise ShellError("shell.tool_program_required", "program is required")
    if "arguments" not in inputs:
        raise ShellError("shell.tool_arguments_required", "arguments are required")
    argv = [str(inputs["program"]), *inputs["arguments"]]
    return Request("structured", single(argv), (), stdin, rationale)


def raw_request(inputs: Mapping[str, Any], executable: str, before: Sequence[str],
                stdin: bytes, rationale: str | None, preview: str) -> Request:
    script = inputs.get("script")
    if script is None:
        raise ShellError("shell.tool_script_required", "script is required")
    argv = [executable, *before, str(script)]
    digest = hashlib.sha256(str(script).encode("utf-8", "surrogateescape")).hexdigest()
    return Request("raw_shell", single(argv), (), stdin, rationale, digest, preview)
