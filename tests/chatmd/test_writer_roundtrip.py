"""Round trips through the whole pipeline (spec §8.5, checklist 110-112).

* Transcript items: ``norm(to_items(load(serialise_items(X)))) == norm(X)`` for
  generated Responses item lists, in both persistence modes, alone and after a
  valid prompt prefix.
* Whole prompts: ``load(write_prompt(P)) == P`` for generated IR prompts.
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatcommon.records import evolve
from chatmd.canonical_writer import write_prompt
from chatmd.frontend import load_prompt, load_prompt_text
from chatmd.ir import (
    LEGACY_RUNTIME_ID,
    SCRIPT_KINDS,
    AgentItem,
    AgentTool,
    BuiltinTool,
    Config,
    CustomTool,
    DocItem,
    ImageItem,
    InlineSource,
    McpTool,
    Message,
    PathExpr,
    Prompt,
    ReadFileTool,
    ReadRoot,
    Reasoning,
    Script,
    ScriptLimits,
    ShellRuntime,
    SummaryPart,
    TextItem,
    ToolCallRef,
)
from chatmd.references import reference_problem
from chatmd.request import compile_request, to_items
from chatmd.request_context import ConversionContext
from chatmd.transcript_writer import serialise_items
from chatmd.vocabulary import WS
from tests.chatmd.prompt_files import write_files
from tests.support import CONFORMANCE

SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

CHARS = st.characters(exclude_categories=["Cs"])
FRAGMENTS = st.sampled_from(["|RAW", "RAW|", "|", "RAW", "<", ">", "</assistant>", "</user>",
                             "<!--", "-->", "\n", "\r\n", " ", "\t", "&amp;", "&lt;", "\\", '"',
                             "'", "<doc src=\"x\"/>", "<import src=\"a\"/>", "{\"a\": 1}"])
TEXT = st.one_of(st.text(CHARS, max_size=40),
                 st.lists(st.one_of(FRAGMENTS, st.text(CHARS, max_size=5)), max_size=8)
                 .map("".join))
# attribute values: a trailing backslash cannot be quoted (see chatmd.transcript_writer.attribute)
VALUE = TEXT.filter(lambda s: not s.endswith("\\"))
OPTIONAL_VALUE = st.none() | VALUE


# --- Responses items ---------------------------------------------------------------------------

def _text_part(kind: str) -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(lambda text: {"type": kind, "text": text}, TEXT)


IMAGE_PART = st.builds(lambda url, detail: {"type": "input_image", "image_url": url,
                                            "detail": detail},
                       VALUE.filter(bool), st.sampled_from(["auto", "low", "high"]))
INPUT_PARTS = st.lists(st.one_of(_text_part("input_text"), IMAGE_PART), max_size=4)


def _with_optional(item: dict[str, Any], **optional: Any) -> dict[str, Any]:
    return item | {key: value for key, value in optional.items() if value is not None}


input_message = st.builds(
    lambda role, content: {"type": "message", "role": role, "content": content},
    st.sampled_from(["user", "system", "developer"]), st.one_of(TEXT, INPUT_PARTS))
assistant_input = st.builds(
    lambda content: {"type": "message", "role": "assistant", "content": content},
    st.lists(_text_part("output_text"), max_size=3))
output_message = st.builds(
    lambda item_id, status, phase, texts: _with_optional(
        {"type": "message", "role": "assistant", "id": item_id,
         "content": [{"type": "output_text", "text": t, "annotations": []} for t in texts]},
        status=status, phase=phase),
    VALUE, st.none() | st.sampled_from(["completed", "in_progress", "incomplete"]),
    OPTIONAL_VALUE, st.lists(TEXT, max_size=3))
function_call = st.builds(
    lambda name, arguments, call_id, item_id, status: _with_optional(
        {"type": "function_call", "name": name, "arguments": arguments, "call_id": call_id},
        id=item_id, status=status),
    VALUE, TEXT, VALUE, OPTIONAL_VALUE, st.none() | st.just("completed"))
custom_call = st.builds(
    lambda name, payload, call_id, item_id: _with_optional(
        {"type": "custom_tool_call", "name": name, "input": payload, "call_id": call_id},
        id=item_id),
    VALUE, TEXT, VALUE, OPTIONAL_VALUE)


def _outputs(with_images: bool) -> st.SearchStrategy[dict[str, Any]]:
    parts = INPUT_PARTS if with_images else st.lists(_text_part("input_text"), max_size=4)
    return st.builds(
        lambda kind, call_id, output, item_id: _with_optional(
            {"type": kind, "call_id": call_id, "output": output}, id=item_id),
        st.sampled_from(["function_call_output", "custom_tool_call_output"]), VALUE,
        st.one_of(TEXT, parts), OPTIONAL_VALUE)


reasoning = st.builds(
    lambda item_id, status, summary: _with_optional(
        {"type": "reasoning", "id": item_id,
         "summary": [{"type": kind, "text": text} for kind, text in summary]},
        status=status),
    VALUE, st.none() | st.just("completed"),
    st.lists(st.tuples(st.sampled_from(["summary_text", "other"]), TEXT), max_size=3))


def items(with_images: bool) -> st.SearchStrategy[list[dict[str, Any]]]:
    return st.lists(st.one_of(input_message, assistant_input, output_message, function_call,
                              custom_call, _outputs(with_images), reasoning), max_size=6)


PREFIXES = st.lists(st.sampled_from([
    "", "\n", "   ", "<config model=\"m\"/>\n", "<user>hello</user>\n", "<system>RAW|s|RAW</system>",
    "<!-- note -->", "<tool name=\"apply_patch\"/>\n", "RAW| \n |RAW", "\r\n",
    "<assistant id=\"a\">x</assistant>", "<user>\n<img src=\"https://h/i.png\"/>\n</user>\n",
    "<tool_call function_name=\"f\" tool_call_id=\"p\">{}</tool_call>",
]), max_size=4, unique=True).map("".join)  # unique: a prompt declares a tool once


def _merge_texts(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    merged: list[dict[str, Any]] = []
    for part in parts:
        if part["type"] == "input_image":
            merged.append({"type": "input_image", "image_url": part["image_url"],
                           "detail": "auto"})
        elif merged and merged[-1]["type"] == "input_text":
            merged[-1] = {"type": "input_text", "text": merged[-1]["text"] + part["text"]}
        else:
            merged.append({"type": "input_text", "text": part["text"]})
    return merged


def norm(item: dict[str, Any], *, externalised: bool) -> dict[str, Any]:
    """The normal form of spec §8.5 (plus: externalised calls carry their id or call id)."""
    kind = item.get("type", "message")
    if kind == "message":
        content = item["content"]
        parts = [{"type": "input_text", "text": content}] if isinstance(content, str) else content
        if item["role"] != "assistant":
            return {"type": "message", "role": item["role"], "content": _merge_texts(parts)}
        text = " ".join(part["text"] for part in parts)
        if "id" not in item:
            return {"type": "message", "role": "assistant",
                    "content": [{"type": "output_text", "text": text}] if parts else []}
        out = {"type": "message", "role": "assistant", "id": item["id"],
               "status": item.get("status") or "completed",
               "content": [{"type": "output_text", "text": text, "annotations": []}]}
        return out | ({"phase": item["phase"]} if "phase" in item else {})
    if kind in ("function_call", "custom_tool_call"):
        payload = "arguments" if kind == "function_call" else "input"
        out = {"type": kind, "name": item["name"], payload: item[payload],
               "call_id": item["call_id"]}
        if "id" in item or externalised:
            out["id"] = item.get("id", item["call_id"])
        return out
    if kind in ("function_call_output", "custom_tool_call_output"):
        output = item["output"]
        if isinstance(output, list):
            output = _merge_texts(output)
            if all(part["type"] == "input_text" for part in output):
                output = "".join(part["text"] for part in output)
        return {"type": kind, "call_id": item["call_id"], "output": output}
    assert kind == "reasoning"
    out = {"type": "reasoning", "id": item["id"],
           "summary": [{"type": s["type"], "text": s["text"].strip(WS)} for s in item["summary"]]}
    return out | ({"status": item["status"]} if "status" in item else {})


def _read_back(text: str, folder: str) -> list[dict[str, Any]]:
    prompt = load_prompt_text(text, prompt_dir=folder)
    return to_items(prompt, ConversionContext(prompt_dir=folder, cwd=folder))


def _check_round_trip(prefix: str, generated: list[dict[str, Any]], *, show_tool_call: bool) -> None:
    with tempfile.TemporaryDirectory() as folder:
        text = serialise_items(generated, show_tool_call=show_tool_call,
                               payload_dir=Path(folder) / ".chatmd", payload_src="./.chatmd")
        before = _read_back(prefix, folder)
        after = _read_back(prefix + text, folder)
    externalised = not show_tool_call
    assert after[:len(before)] == before
    assert [norm(i, externalised=externalised) for i in after[len(before):]] == \
        [norm(i, externalised=externalised) for i in generated]


@SETTINGS
@given(items(with_images=True))
def test_inline_mode_round_trips(generated: list[dict[str, Any]]) -> None:
    _check_round_trip("", generated, show_tool_call=True)


@SETTINGS
@given(items(with_images=False))
def test_externalised_mode_round_trips(generated: list[dict[str, Any]]) -> None:
    _check_round_trip("", generated, show_tool_call=False)


@SETTINGS
@given(PREFIXES, items(with_images=True), st.booleans())
def test_round_trip_after_a_prompt_prefix(prefix: str, generated: list[dict[str, Any]],
                                          show_tool_call: bool) -> None:
    if not show_tool_call:  # images in outputs are not recoverable when externalised
        generated = [i for i in generated if not (i["type"].endswith("_output")
                                                  and isinstance(i["output"], list)
                                                  and any(p["type"] == "input_image"
                                                          for p in i["output"]))]
    _check_round_trip(prefix, generated, show_tool_call=show_tool_call)


def test_output_message_with_chatmd_syntax_in_its_text_is_exact() -> None:  # item 110
    text = "a |RAW b RAW| c </assistant> d <!-- e --> |RAW|RAW"
    message = {"type": "message", "role": "assistant", "id": "m", "status": "completed",
               "content": [{"type": "output_text", "text": text, "annotations": []}]}
    with tempfile.TemporaryDirectory() as folder:
        written = serialise_items([message], show_tool_call=True, payload_dir=folder)
        assert _read_back(written, folder) == [message]


def test_call_ids_with_quotes_and_ampersands_are_exact() -> None:  # item 111
    call = {"type": "function_call", "name": "f&g", "arguments": "{}", "call_id": 'c"1&2',
            "id": 'i"&'}
    result = {"type": "function_call_output", "call_id": 'c"1&2', "output": "ok"}
    for show_tool_call in (True, False):
        with tempfile.TemporaryDirectory() as folder:
            written = serialise_items([call, result], show_tool_call=show_tool_call,
                                      payload_dir=Path(folder) / ".chatmd",
                                      payload_src="./.chatmd")
            back = _read_back(written, folder)
        assert back[0] == call
        assert back[1]["call_id"] == 'c"1&2'
        assert norm(back[1], externalised=False)["output"] == "ok"


# --- whole prompts ------------------------------------------------------------------------------

#: The whole-prompt round trips test the writer against the declaration layer: the
#: registered semantic checks (ChatML script contracts, ...) judge script bodies, which
#: are arbitrary text here, so they are left out.
NO_CHECKS: list[Any] = []

STRIPPED = VALUE.map(lambda s: s.strip(WS)).filter(lambda s: s and not s.endswith("\\"))
OPTIONAL_STRIPPED = st.none() | STRIPPED
NON_BLANK = VALUE.filter(lambda s: bool(s.strip(WS)))


def _history_id() -> st.SearchStrategy[str]:
    return st.builds(lambda ns, seq: f"{len(ns.encode('utf-8'))}:{ns}:{seq}",
                     st.text(CHARS, min_size=1, max_size=8).filter(lambda s: not s.endswith("\\")),
                     st.integers(0, 10**6))


#: File references a checked prompt accepts (no NUL byte, not too long: chatmd.invalid_path).
PATH = VALUE.filter(lambda s: reference_problem(s) is None)

content_item: st.SearchStrategy[Any] = st.deferred(lambda: st.one_of(
    st.builds(TextItem, TEXT),
    st.builds(ImageItem, PATH, st.booleans()),
    st.builds(DocItem, PATH, st.booleans(), st.booleans(), st.booleans()),
    st.builds(AgentItem, PATH, st.booleans(),
              st.lists(content_item, max_size=3).map(tuple)),
))


def _content_from(items_: list[Any]) -> Any:
    if not items_:
        return None
    if len(items_) == 1 and isinstance(items_[0], TextItem):
        return items_[0].text
    return tuple(items_)


CONTENT = st.one_of(st.none(), TEXT, st.lists(content_item, max_size=4).map(_content_from))
SOURCE = st.sampled_from(["<prompt>", "<prompt>", "other.chatmd"])


@st.composite
def messages(draw: st.DrawFn) -> Message:
    kind = draw(st.sampled_from(["msg", "user", "assistant", "system", "developer",
                                 "tool_call", "tool_response"]))
    content = draw(CONTENT)
    role_attribute = None
    tool_call = None
    if kind == "msg":
        role = draw(VALUE)
        if draw(st.booleans()):
            tool_call = ToolCallRef(draw(VALUE), draw(VALUE),
                                    content if isinstance(content, str) else "")
    else:
        role = {"tool_call": "assistant", "tool_response": "tool"}.get(kind, kind)
        role_attribute = draw(OPTIONAL_VALUE)
        if kind == "tool_call":
            tool_call = ToolCallRef(draw(VALUE), draw(VALUE),
                                    content if isinstance(content, str) else "")
    tool_call_id = tool_call.call_id if tool_call is not None else draw(OPTIONAL_VALUE)
    return Message(kind, role, content, draw(OPTIONAL_VALUE), draw(OPTIONAL_VALUE),
                   draw(OPTIONAL_VALUE), draw(OPTIONAL_VALUE), draw(OPTIONAL_VALUE),
                   tool_call_id, tool_call, draw(st.none() | _history_id()), role_attribute,
                   draw(SOURCE))


reasoning_items = st.builds(
    Reasoning, VALUE, OPTIONAL_VALUE,
    st.lists(st.builds(SummaryPart, TEXT.map(lambda s: s.strip(WS)), VALUE), max_size=3)
    .map(tuple),
    st.none() | _history_id(), SOURCE)

PATHS = st.one_of(
    st.builds(PathExpr, st.sampled_from(["workspace", "source_dir", "prompt_dir", "tool_dir",
                                         "session_dir", "cache_dir", "home"]),
              VALUE.filter(lambda s: "\x00" not in s)),
    st.builds(PathExpr, st.none(), VALUE.filter(lambda s: "\x00" not in s).map(lambda s: "/" + s)),
)


@st.composite
def read_file_tools(draw: st.DrawFn) -> ReadFileTool:
    ids = draw(st.lists(STRIPPED, min_size=1, max_size=3, unique=True))
    roots = tuple(ReadRoot(root_id, draw(PATHS), draw(OPTIONAL_STRIPPED)) for root_id in ids)
    return ReadFileTool(draw(st.sampled_from(["read_file", "get_contents"])), roots,
                        draw(OPTIONAL_STRIPPED))


# the shell compiler accepts a compact command only when it is one simple command
SIMPLE_COMMAND = st.from_regex(r"\A[A-Za-z0-9_./-]{1,10}( [A-Za-z0-9_./=-]{1,10}){0,3}\Z")


def _unique_shell_names(tools_: list[Any]) -> tuple[Any, ...]:
    """Drop command tools reusing a name (the shell compiler rejects duplicates)."""
    seen: set[str] = set()
    kept = []
    for tool in tools_:
        if isinstance(tool, CustomTool):
            if tool.name in seen:
                continue
            seen.add(tool.name)
        kept.append(tool)
    return tuple(kept)


MCP_NAMES = st.none() | st.lists(STRIPPED.filter(lambda s: "," not in s), min_size=1,
                                 max_size=3).map(tuple)
tools = st.one_of(
    st.builds(BuiltinTool, STRIPPED.filter(lambda s: s not in ("read_file", "get_contents"))),
    read_file_tools(),
    st.builds(CustomTool, STRIPPED, SIMPLE_COMMAND, OPTIONAL_STRIPPED),
    st.builds(AgentTool, STRIPPED, STRIPPED.filter(lambda s: reference_problem(s) is None),
              st.booleans(), OPTIONAL_STRIPPED),
    st.builds(McpTool, STRIPPED, MCP_NAMES, OPTIONAL_STRIPPED, st.booleans(), OPTIONAL_VALUE,
              OPTIONAL_VALUE),
)

LIMITS = st.builds(
    ScriptLimits,
    wall_time=st.floats(min_value=1e-3, max_value=1e6),
    fuel=st.integers(1, 10**9), max_tasks=st.integers(1, 1000),
    max_value=st.integers(1, 2**40), max_output=st.integers(1, 2**30),
    max_array_items=st.integers(1, 10**6), max_depth=st.integers(1, 100))


@st.composite
def scripts(draw: st.DrawFn) -> tuple[Script, ...]:
    ids = draw(st.lists(NON_BLANK.filter(lambda s: ":" not in s), max_size=3, unique=True))
    out = []
    moderator_taken = False
    for script_id in ids:
        kind = draw(st.sampled_from(SCRIPT_KINDS))
        if kind == "moderator":
            if moderator_taken:
                kind = "shell_matcher"
            moderator_taken = True
        text = draw(TEXT.filter(bool))
        out.append(Script(script_id, kind, "chatml", InlineSource(text),
                          hashlib.sha256(text.encode("utf-8")).hexdigest(),
                          draw(st.just(ScriptLimits()) | LIMITS)))
    return tuple(out)


configs = st.one_of(st.just(Config()), st.builds(
    Config, OPTIONAL_VALUE, st.none() | st.integers(-(2**62), 2**62 - 1),
    st.none() | st.floats(allow_nan=False, allow_infinity=False), OPTIONAL_VALUE,
    OPTIONAL_VALUE, st.booleans()))

def _with_legacy_runtime(prompt: Prompt) -> Prompt:
    """A prompt with a legacy command tool also holds the synthetic ``legacy:custom`` runtime."""
    if any(isinstance(tool, CustomTool) for tool in prompt.tools):
        return evolve(prompt, shell_runtimes=(ShellRuntime(LEGACY_RUNTIME_ID, None, None),))
    return prompt


prompts = st.builds(
    Prompt, configs, st.lists(tools, max_size=4).map(_unique_shell_names), scripts(), st.just(()),
    st.none(),  # a moderator runtime needs compiled shell runtimes: see the example below
    st.lists(st.one_of(messages(), reasoning_items), max_size=6).map(tuple)
).map(_with_legacy_runtime)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(prompts)
def test_canonical_text_loads_back_to_an_equal_prompt(prompt: Prompt) -> None:
    text = write_prompt(prompt)
    assert load_prompt_text(text, name="<prompt>", prompt_dir="/nonexistent",
                            checks=NO_CHECKS) == prompt


def test_canonical_text_of_a_parsed_prompt_with_shell_declarations() -> None:
    source = (
        '<shell_access id="dev">\n  <capabilities sandbox="direct_unsafe"/>\n'
        '  <backends merge="replace"><direct id="d" when="any"/></backends>\n</shell_access>\n'
        '<tool name="sh" type="shell" mode="fixed" runtime="dev">\n'
        '  <command program="ls"><arg value="-l"/></command>\n</tool>\n'
        '<moderator_runtime shell_runtime="dev"/>\n'
        '<script language="chatml" kind="shell_matcher" id="guard">RAW|a|RAW|RAW</script>\n'
        '<user>hi</user>\n')
    prompt = load_prompt_text(source, checks=NO_CHECKS)
    assert load_prompt_text(write_prompt(prompt), checks=NO_CHECKS) == prompt

REAL_PROMPTS = sorted((CONFORMANCE / "chatmd" / "prompts").rglob("*.md"))


@pytest.mark.parametrize("path", REAL_PROMPTS, ids=lambda p: p.name)
def test_real_prompts_survive_canonical_text_and_build_requests(path: Path) -> None:
    prompt = load_prompt(path)
    again = load_prompt_text(write_prompt(prompt), name=prompt.name, prompt_dir=prompt.prompt_dir)
    assert again == prompt
    result = compile_request(prompt, ConversionContext.local(prompt.prompt_dir))
    assert result.ok, [str(d) for d in result.diagnostics]
    assert len(result.request["input"]) == len(prompt.items)  # type: ignore[index]


EVERY_ELEMENT = """\
<config model="m" temperature="0.5" max_tokens="9" reasoning_effort="low" id="s" show_tool_call/>
<tool name="read_file"><read id="src" path="lib" description="d"/><read id="all" path="/"/></tool>
<tool name="apply_patch"/>
<tool name="rg" command="rg" description="search"/>
<tool name="triage" agent="p.chatmd" local/>
<tool mcp_server="stdio:srv" includes="a, b" strict client_id_env="I"/>
<tool name="sh" type="shell" mode="structured" runtime="dev"/>
<shell_access id="dev"><capabilities sandbox="direct_unsafe"/><backends merge="replace"><direct id="d" when="any"/></backends></shell_access>
<script language="chatml" kind="moderator">RAW|let x = 1|RAW</script>
<script language="chatml" kind="shell_matcher" id="m" src="m.chatml" fuel="7"/>
<moderator_runtime shell_runtime="dev"/>
<system>s</system>
<user ochat-history-id="1:s:0">hi <img src="a.png" local/><doc src="d.txt" local strip/>
<agent src="a.chatmd" local>q <img src="b"/></agent></user>
<msg role="tool" tool_call function_name="f" tool_call_id="c0">{}</msg>
<tool_call function_name="f" tool_call_id="c" id="i"><doc src="./.chatmd/0.tool-call.c.json" local/></tool_call>
<tool_response tool_call_id="c">RAW|ok|RAW</tool_response>
<assistant id="m1" status="completed" phase="final"><import src="x"/></assistant>
<reasoning id="r" status="done"><summary type="t">s</summary>plain</reasoning>
<user/>
"""


def test_a_prompt_using_every_element_round_trips(tmp_path: Path) -> None:
    write_files(tmp_path, {"p.chatmd": EVERY_ELEMENT, "m.chatml": "let y = 2"})
    prompt = load_prompt(tmp_path / "p.chatmd", checks=NO_CHECKS)
    text = write_prompt(prompt)
    assert load_prompt_text(text, name=prompt.name, prompt_dir=str(tmp_path),
                            checks=NO_CHECKS) == prompt


def test_imported_declarations_keep_qualified_ids_and_their_sources(tmp_path: Path) -> None:
    write_files(tmp_path, {
        "root.chatmd": '<import src="defs/team.chatmd" namespace="team"/>\n<user>hi</user>\n',
        "defs/team.chatmd": '<script language="chatml" kind="shell_matcher" id="guard" '
                            'src="guard.chatml"/>\n<user>from the import</user>\n',
        "defs/guard.chatml": "let ok = true",
    })
    prompt = load_prompt(tmp_path / "root.chatmd", checks=NO_CHECKS)
    text = write_prompt(prompt)
    assert 'id="team:guard"' in text and 'src="defs/guard.chatml"' in text
    assert 'ochat-source-context="defs/team.chatmd"' in text
    again = load_prompt_text(text, name=prompt.name, prompt_dir=str(tmp_path), checks=NO_CHECKS)
    assert again.items == prompt.items
    [script] = again.scripts
    assert (script.id, script.source.text, script.source_hash) == (
        "team:guard", "let ok = true", prompt.scripts[0].source_hash)
