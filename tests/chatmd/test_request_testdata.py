"""Data-driven request cases: ``tests/chatmd/testdata/request/*.md``.

Each case is a ChatMD prompt, checked with the full frontend plus the tool
check, then converted with :func:`chatmd.request.compile_request` in a local
context: prompt dir = the case's folder, cwd = ``request/cwd/``, every tool
path variable = the ``request/`` folder, no network, no agent runner.

* Diagnostics are compared with the ``<!--! ... -->`` markers (see
  ``harness.py``); a case without markers must be clean.
* ``NAME.expected.json`` (optional) holds expected top-level keys of the
  request body. Under ``"tools"`` each expected definition is compared without
  its description; ``description_contains`` lists fragments the description
  must contain and ``format_keys`` the keys of a custom tool's ``format``.
  ``${REQUEST_DATA}`` stands for the absolute (canonical) ``request/`` folder.

The cases use the ``.md`` extension (as the reference's example prompts do) so
that the syntax-only runner, which parses every ``*.chatmd``, leaves them alone.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from chatcommon.diagnostics import Diagnostic
from chatmd.frontend import check_prompt
from chatmd.request import RequestResult, compile_request
from chatmd.request_context import ConversionContext
from chatmd.tools import PathVariables, check_tools
from tests.chatmd.harness import TESTDATA, check_case

REQUEST_DATA = TESTDATA / "request"


def request_cases() -> list[Path]:
    return sorted(p for p in REQUEST_DATA.glob("*.md") if not p.name.startswith("_"))


def context_for(path: Path) -> ConversionContext:
    here = str(REQUEST_DATA)
    paths = PathVariables(tool_dir=here, workspace=here, prompt_dir=str(path.parent),
                          session_dir=here, cache_dir=here, home=here)
    return ConversionContext(prompt_dir=path.parent, cwd=REQUEST_DATA / "cwd", paths=paths)


def run_case(path: Path) -> tuple[list[Diagnostic], RequestResult | None]:
    checked = check_prompt(path, checks=[check_tools])
    if checked.prompt is None:
        return list(checked.diagnostics), None
    compiled = compile_request(checked.prompt, context_for(path))
    return list(checked.diagnostics) + list(compiled.diagnostics), compiled


def _expected(path: Path) -> dict[str, Any] | None:
    expected = path.with_suffix(".expected.json")
    if not expected.is_file():
        return None
    data = os.path.realpath(REQUEST_DATA)
    text = expected.read_text(encoding="utf-8").replace("${REQUEST_DATA}", data)
    return json.loads(text)


def _compare_tools(actual: list[dict[str, Any]], expected: list[dict[str, Any]]) -> None:
    assert [d["name"] for d in actual] == [d["name"] for d in expected]
    for definition, wanted in zip(actual, expected, strict=True):
        wanted = dict(wanted)
        fragments = wanted.pop("description_contains", [])
        format_keys = wanted.pop("format_keys", None)
        description = definition.get("description", "")
        for fragment in fragments:
            assert fragment in description, f"{definition['name']}: {fragment!r} not in description"
        if format_keys is not None:
            assert sorted(definition["format"]) == format_keys
        shown = {k: v for k, v in definition.items() if k not in ("description", "format")
                 or (k == "format" and format_keys is None)}
        assert shown == wanted


@pytest.mark.parametrize("path", request_cases(), ids=lambda p: p.name)
def test_request_case(path: Path) -> None:
    outcome: dict[str, RequestResult | None] = {}

    def diagnostics(case: Path) -> list[Diagnostic]:
        found, outcome["compiled"] = run_case(case)
        return found

    check_case(path, diagnostics)
    expected = _expected(path)
    if expected is None:
        return
    compiled = outcome["compiled"]
    assert compiled is not None and compiled.request is not None
    request = compiled.request
    for key, value in expected.items():
        if key == "tools":
            _compare_tools(request.get("tools", []), value)
        else:
            assert request.get(key) == value, f"request[{key!r}] differs"
    if "tools" not in expected and "model" in expected:
        assert "tools" not in request  # the envelope cases declare no tools


def test_there_are_request_cases() -> None:
    assert len(request_cases()) >= 10
