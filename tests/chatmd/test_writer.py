"""The transcript writer's text: RAW framing, attribute escaping, layouts, payload files (spec §8).

The round trip through the whole frontend and request conversion is in
``test_writer_roundtrip.py``; here the writer's output is checked against the
lexer/parser directly and against the layouts of spec §8.2-8.3.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatmd.ast import Element, Text
from chatmd.parser import parse_text
from chatmd.transcript_writer import (
    USER_PLACEHOLDER,
    TranscriptItemError,
    append_to_transcript,
    attribute,
    frame,
    next_payload_seq,
    payload_file_component,
    payload_src_for,
    render_items,
    serialise_items,
)

# text without surrogates (not encodable) — every other code point may appear
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=60)
TRICKY = st.lists(st.sampled_from(["|RAW", "RAW|", "|", "RAW", "<", ">", "</user>", "<!--",
                                   "-->", "\n", "\r\n", " ", "&amp;", "a", "\\", '"']),
                  max_size=12).map("".join)


def only_element(text: str) -> Element:
    [node] = parse_text(text).nodes
    assert isinstance(node, Element)
    return node


@settings(max_examples=300, deadline=None)
@given(st.one_of(TEXT, TRICKY))
def test_framed_text_reads_back_exactly(text: str) -> None:
    element = only_element(f"<user>\n{frame(text)}</user>")
    assert element.children == (Text(text, None),)  # type: ignore[arg-type]


def test_frame_splits_every_terminator() -> None:
    assert frame("") == "RAW||RAW"
    assert frame("a|RAWb") == "RAW|a||RAWRAW|RAWb|RAW"
    assert frame("x|RAW|RAW") == "RAW|x||RAWRAW|RAW||RAWRAW|RAW|RAW"


@settings(max_examples=300, deadline=None)
@given(st.one_of(TEXT, TRICKY))
def test_attribute_values_read_back_exactly_or_are_refused(value: str) -> None:
    try:
        written = attribute("v", value)
    except TranscriptItemError:
        assert value.endswith("\\")
        return
    element = only_element(f"<img{written}/>".join(["<user>", "</user>"]))
    [img] = element.elements()
    assert img.get("v") == value


def test_attribute_escaping_and_flags() -> None:
    assert attribute("a", 'x&<>"y') == ' a="x&amp;&lt;&gt;&quot;y"'
    assert attribute("local", None) == " local"
    assert attribute("id", "ends\\") == " id=ends\\"
    with pytest.raises(TranscriptItemError):
        attribute("id", "two words\\")


OUTPUT: dict[str, Any] = {"type": "message", "role": "assistant", "id": "m1", "status": "completed",
          "content": [{"type": "output_text", "text": "hi", "annotations": []}]}
CALL: dict[str, Any] = {"type": "function_call", "name": "f", "arguments": '{"a":1}', "call_id": "c1",
        "id": "i1"}
RESULT: dict[str, Any] = {"type": "function_call_output", "call_id": "c1", "output": "ok"}


def test_inline_layouts() -> None:
    items: list[dict[str, Any]] = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "q"}]},
        OUTPUT | {"phase": "final_answer"},
        CALL,
        RESULT,
        {"type": "custom_tool_call", "name": "apply_patch", "input": "P", "call_id": "c2"},
        {"type": "custom_tool_call_output", "call_id": "c2", "output": "done"},
        {"type": "reasoning", "id": "r1", "status": "completed",
         "summary": [{"type": "summary_text", "text": "think"}]},
    ]
    assert render_items(items, show_tool_call=True).text == (
        '<user>\nRAW|q|RAW</user>\n'
        '<assistant id="m1" status="completed" phase="final_answer">\nRAW|hi|RAW</assistant>\n'
        '<tool_call function_name="f" tool_call_id="c1" id="i1">\nRAW|{"a":1}|RAW</tool_call>\n'
        '<tool_response tool_call_id="c1">\nRAW|ok|RAW</tool_response>\n'
        '<tool_call function_name="apply_patch" tool_call_id="c2" type="custom_tool_call">\n'
        'RAW|P|RAW</tool_call>\n'
        '<tool_response tool_call_id="c2" type="custom_tool_call">\nRAW|done|RAW</tool_response>\n'
        '<reasoning id="r1" status="completed">\n'
        '<summary type="summary_text">RAW|think|RAW</summary>\n'
        '</reasoning>\n')


def test_message_parts_layouts() -> None:
    items: list[dict[str, Any]] = [
        {"type": "message", "role": "system", "content": []},
        {"role": "developer", "content": "plain string"},
        {"type": "message", "role": "user", "content": [
            {"type": "input_image", "image_url": "https://h/i.png", "detail": "high"},
            {"type": "input_text", "text": "what?"}]},
        {"type": "message", "role": "assistant",
         "content": [{"type": "output_text", "text": "a"}, {"type": "output_text", "text": "b"}]},
        {"type": "message", "role": "assistant", "content": []},
        {"type": "function_call_output", "call_id": "c", "output": [
            {"type": "input_text", "text": "see"},
            {"type": "input_image", "image_url": "data:image/png;base64,AA=="}]},
    ]
    assert render_items(items, show_tool_call=True).text == (
        "<system></system>\n"
        "<developer>\nRAW|plain string|RAW</developer>\n"
        '<user><img src="https://h/i.png"/>RAW|what?|RAW</user>\n'
        "<assistant>\nRAW|a b|RAW</assistant>\n"
        "<assistant></assistant>\n"
        '<tool_response tool_call_id="c">\nRAW|see|RAW<img src="data:image/png;base64,AA=="/>'
        "</tool_response>\n")


def test_externalised_mode_numbers_payload_files_per_call(tmp_path: Path) -> None:  # item 112
    items: list[dict[str, Any]] = [CALL, RESULT,
             {"type": "custom_tool_call", "name": "apply_patch", "input": "P", "call_id": "c2"},
             {"type": "custom_tool_call_output", "call_id": "c2", "output": [
                 {"type": "input_text", "text": "a"}, {"type": "input_text", "text": "b"},
                 {"type": "input_image", "image_url": "u"}, {"type": "input_text", "text": "c"}]}]
    payloads = tmp_path / ".chatmd"
    text = serialise_items(items, show_tool_call=False, payload_dir=payloads,
                           payload_src="./.chatmd")
    assert text == (
        '<tool_call function_name="f" tool_call_id="c1" id="i1">'
        '<doc src="./.chatmd/0.tool-call.c1.json" local/></tool_call>\n'
        '<tool_response tool_call_id="c1" id="0">'
        '<doc src="./.chatmd/0.tool-call-result.c1.json" local/></tool_response>\n'
        '<tool_call function_name="apply_patch" tool_call_id="c2" id="c2" type="custom_tool_call">'
        '<doc src="./.chatmd/1.tool-call.c2.json" local/></tool_call>\n'
        '<tool_response tool_call_id="c2" id="1" type="custom_tool_call">'
        '<doc src="./.chatmd/1.tool-call-result.c2.json" local/></tool_response>\n')
    assert sorted(os.listdir(payloads)) == ["0.tool-call-result.c1.json", "0.tool-call.c1.json",
                                            "1.tool-call-result.c2.json", "1.tool-call.c2.json"]
    assert (payloads / "0.tool-call.c1.json").read_bytes() == b'{"a":1}'
    assert (payloads / "0.tool-call-result.c1.json").read_bytes() == b"ok"
    assert (payloads / "1.tool-call-result.c2.json").read_bytes() == b'ab\n<img src="u"/>\nc'


def test_seq_start_and_unseen_calls_take_fresh_numbers() -> None:
    rendered = render_items([RESULT, CALL], show_tool_call=False, seq_start=5)
    assert [p.name for p in rendered.payloads] == ["5.tool-call-result.c1.json",
                                                   "6.tool-call.c1.json"]
    assert rendered.next_seq == 7


def test_payload_file_names_cannot_escape_the_payload_folder() -> None:
    assert payload_file_component("../../etc/passwd") == ".._.._etc_passwd"
    assert payload_file_component("a/b\\c\x00d") == "a_b_c_d"
    assert payload_file_component("") == "call"
    assert len(payload_file_component("x" * 1000)) == 80
    rendered = render_items([CALL | {"call_id": "../x"}], show_tool_call=False)
    assert "/" not in rendered.payloads[0].name


def test_payload_src_is_relative_to_the_working_directory(tmp_path: Path) -> None:
    assert payload_src_for(tmp_path / ".chatmd", tmp_path) == "./.chatmd"
    assert payload_src_for(tmp_path / "a" / "b", tmp_path) == "./a/b"
    assert payload_src_for("/elsewhere/.chatmd", tmp_path) == "/elsewhere/.chatmd"


def test_unsupported_items_are_refused_with_a_reason() -> None:
    cases: list[tuple[dict[str, Any], str]] = [({"type": "web_search_call"}, "web_search_call"),
                           ({"type": "message", "role": "critic", "content": []}, "critic"),
                           ({"type": "function_call", "name": "f", "call_id": "c"}, "arguments"),
                           ({"type": "message", "role": "user",
                             "content": [{"type": "input_file", "file_id": "x"}]}, "input_file")]
    for item, fragment in cases:
        with pytest.raises(TranscriptItemError, match=fragment):
            render_items([item], show_tool_call=True)


def test_append_replaces_a_trailing_placeholder_before_a_user_message(tmp_path: Path) -> None:
    transcript = tmp_path / "t.chatmd"
    transcript.write_text("<user>hi</user>\n" + USER_PLACEHOLDER + "\n", encoding="utf-8")
    append_to_transcript(transcript, [{"role": "user", "content": "next"}],
                         show_tool_call=True, payload_dir=tmp_path / ".chatmd")
    assert transcript.read_text(encoding="utf-8") == "<user>hi</user>\n<user>\nRAW|next|RAW</user>\n"


def test_append_keeps_existing_text_and_adds_a_placeholder(tmp_path: Path) -> None:
    transcript = tmp_path / "t.chatmd"
    original = "<user>hi</user>\r\n" + USER_PLACEHOLDER  # not followed by a user message
    transcript.write_bytes(original.encode("utf-8"))
    append_to_transcript(transcript, [OUTPUT], show_tool_call=True,
                         payload_dir=tmp_path / ".chatmd", placeholder=True)
    assert transcript.read_bytes().decode("utf-8") == (
        original + '\n<assistant id="m1" status="completed">\nRAW|hi|RAW</assistant>\n'
        + USER_PLACEHOLDER + "\n")


def test_append_continues_payload_numbering_and_writes_payloads(tmp_path: Path) -> None:
    payloads = tmp_path / ".chatmd"
    payloads.mkdir()
    (payloads / "3.tool-call.old.json").write_text("{}", encoding="utf-8")
    assert next_payload_seq(payloads) == 4
    transcript = tmp_path / "t.chatmd"
    next_seq = append_to_transcript(transcript, [CALL, RESULT], show_tool_call=False,
                                    payload_dir=payloads, payload_src="./.chatmd")
    assert next_seq == 5
    assert (payloads / "4.tool-call.c1.json").read_text(encoding="utf-8") == '{"a":1}'
    assert "./.chatmd/4.tool-call-result.c1.json" in transcript.read_text(encoding="utf-8")
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".tmp")]


def test_externalised_json_arguments_stay_valid_json(tmp_path: Path) -> None:
    arguments = json.dumps({"path": "a|RAW\n", "x": [1, 2]})
    serialise_items([CALL | {"arguments": arguments}], show_tool_call=False,
                    payload_dir=tmp_path)
    assert json.loads((tmp_path / "0.tool-call.c1.json").read_text(encoding="utf-8")) == \
        json.loads(arguments)
