"""The atomic append protocol and item-by-item transcript write-back (spec 8.6)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runtime.driver.append import append_bytes, journal_path
from runtime.driver.append_log import recover
from runtime.driver.transcript import TranscriptAppender
from tests.runtime.driver.support import parses, write

HEAD = '<config model="m"/>\n<user>hi</user>\n'


def test_append_adds_bytes_and_leaves_no_journal(tmp_path: Path) -> None:
    target = write(tmp_path / "t.chatmd", "abc")
    assert append_bytes(target, b"def") == 6
    assert target.read_bytes() == b"abcdef"
    assert not journal_path(target).exists()


def test_replace_from_swaps_the_tail(tmp_path: Path) -> None:
    target = write(tmp_path / "t.chatmd", "keep|tail")
    append_bytes(target, b"new", replace_from=5)
    assert target.read_bytes() == b"keep|new"


def test_a_complete_journal_is_replayed(tmp_path: Path) -> None:
    """A crash after the journal was written but before (or while) the target was: the
    next open finishes the append exactly once."""
    target = write(tmp_path / "t.chatmd", "abc<assist")  # a torn write of 7 bytes at 3
    journal_path(target).write_bytes(json.dumps({"offset": 3, "length": 11}).encode()
                                     + b"\n<assistant>")
    assert recover(target)
    assert target.read_bytes() == b"abc<assistant>"
    assert not journal_path(target).exists()
    assert not recover(target)


def test_a_torn_journal_is_discarded_and_the_target_kept(tmp_path: Path) -> None:
    target = write(tmp_path / "t.chatmd", "abc")
    journal_path(target).write_bytes(json.dumps({"offset": 3, "length": 50}).encode()
                                     + b"\nshort")
    assert not recover(target)
    assert target.read_bytes() == b"abc" and not journal_path(target).exists()
    journal_path(target).write_bytes(b"{not json")
    assert not recover(target)
    assert target.read_bytes() == b"abc"


def _items() -> list[dict[str, object]]:
    return [{"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "look",
             "arguments": '{"q": "a|RAW b"}'},
            {"type": "function_call_output", "call_id": "call_1", "output": "found\nit"},
            {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": "done"}]}]


def test_payload_files_are_written_before_the_elements(tmp_path: Path) -> None:
    target = write(tmp_path / "t.chatmd", HEAD)
    seen: list[tuple[str, bool]] = []
    appender = TranscriptAppender(target, show_tool_call=False,
                                  payload_dir=tmp_path / ".chatmd")

    def check(item: object) -> None:
        files = sorted(p.name for p in (tmp_path / ".chatmd").iterdir())
        seen.append((str(files), "doc src" in target.read_text()))

    appender.on_written = check
    for item in _items():
        appender.append(item)
    text = target.read_text()
    assert '<doc src="./.chatmd/0.tool-call.call_1.json" local/>' in text
    assert '<tool_response tool_call_id="call_1" id="0">' in text
    assert (tmp_path / ".chatmd" / "0.tool-call.call_1.json").read_text() == '{"q": "a|RAW b"}'
    assert (tmp_path / ".chatmd" / "0.tool-call-result.call_1.json").read_text() == "found\nit"
    assert "0.tool-call.call_1.json" in seen[0][0]
    prompt = parses(target)
    assert [item.kind for item in prompt.items][-3:] == ["tool_call", "tool_response",
                                                        "assistant"]


def test_show_tool_call_writes_payloads_inline(tmp_path: Path) -> None:
    target = write(tmp_path / "t.chatmd", HEAD)
    appender = TranscriptAppender(target, show_tool_call=True, payload_dir=tmp_path / ".chatmd")
    for item in _items():
        appender.append(item)
    text = target.read_text()
    assert "<doc" not in text and not (tmp_path / ".chatmd").exists()
    assert 'RAW|{"q": "a|' in text
    prompt = parses(target)
    call = prompt.items[-3]
    assert call.tool_call is not None and call.tool_call.arguments == '{"q": "a|RAW b"}'


def test_messages_are_written_once_and_user_messages_skipped(tmp_path: Path) -> None:
    target = write(tmp_path / "t.chatmd", HEAD)
    appender = TranscriptAppender(target, show_tool_call=False)
    message = _items()[2]
    assert appender.append(message) and not appender.append(message)
    assert not appender.append({"type": "message", "role": "user", "content": "x"})
    assert target.read_text().count("<assistant") == 1


def test_user_message_replaces_the_placeholder(tmp_path: Path) -> None:
    target = write(tmp_path / "t.chatmd", HEAD)
    appender = TranscriptAppender(target, show_tool_call=False)
    appender.append(_items()[2])
    appender.placeholder()
    assert target.read_text().endswith("<user>\n\n</user>\n")
    appender.user_message({"type": "message", "role": "user",
                           "content": [{"type": "input_text", "text": "next question"}]})
    text = target.read_text()
    assert "<user>\n\n</user>" not in text and text.count("next question") == 1
    assert parses(target).items[-1].role == "user"


def test_a_file_without_final_newline_gets_one_before_the_element(tmp_path: Path) -> None:
    target = write(tmp_path / "t.chatmd", HEAD.rstrip("\n"))
    TranscriptAppender(target, show_tool_call=False).append(_items()[2])
    assert "</user>\n<assistant" in target.read_text()
    parses(target)


def abandon(log: object) -> None:
    """Drop a log's handles without a checkpoint, as a crash would."""
    import os

    os.close(log._log_fd)  # type: ignore[attr-defined]
    os.close(log._target_fd)  # type: ignore[attr-defined]
    log._log_fd = log._target_fd = -1  # type: ignore[attr-defined]


def test_durable_log_replays_appends_lost_after_the_last_checkpoint(tmp_path: Path) -> None:
    """Durable mode: a power loss that kept the log but not the target's last writes is
    repaired on the next open; records of a retired epoch are not replayed."""
    from runtime.driver.append_log import AppendLog, log_path

    target = write(tmp_path / "t.chatmd", HEAD)
    log = AppendLog(target, durable=True)
    log.append(b"<assistant>\nRAW|one|RAW</assistant>\n")
    log.checkpoint()
    log.append(b"<assistant>\nRAW|two|RAW</assistant>\n")
    log.append(b"<user>\n\n</user>\n")
    saved_log = log_path(target).read_bytes()
    full = target.read_bytes()
    # simulate the crash: the target lost its last two writes, the log survived
    lost = full[: len(HEAD) + len(b"<assistant>\nRAW|one|RAW</assistant>\n")]
    abandon(log)
    target.write_bytes(lost)
    log_path(target).write_bytes(saved_log)
    assert recover(target)
    assert target.read_bytes() == full and not log_path(target).exists()
    parses(target)


def test_durable_log_with_a_corrupt_record_stops_there(tmp_path: Path) -> None:
    from runtime.driver.append_log import AppendLog, log_path

    target = write(tmp_path / "t.chatmd", HEAD)
    log = AppendLog(target, durable=True)
    log.append(b"<assistant>\nRAW|one|RAW</assistant>\n")
    log.append(b"<assistant>\nRAW|two|RAW</assistant>\n")
    data = bytearray(log_path(target).read_bytes())
    data[data.index(b"two")] = ord("X")  # the second record's hash no longer matches
    abandon(log)
    target.write_bytes(HEAD.encode())
    log_path(target).write_bytes(bytes(data))
    assert recover(target)
    assert target.read_text() == HEAD + "<assistant>\nRAW|one|RAW</assistant>\n"


def test_default_mode_writes_no_log_and_closes_cleanly(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from runtime.driver.append_log import DURABLE_VARIABLE, AppendLog, log_path

    monkeypatch.delenv(DURABLE_VARIABLE, raising=False)
    target = write(tmp_path / "t.chatmd", HEAD)
    log = AppendLog(target)
    log.append(b"x")
    assert not log_path(target).exists()
    log.close()
    assert target.read_text() == HEAD + "x"
    monkeypatch.setenv(DURABLE_VARIABLE, "1")
    log = AppendLog(target)
    log.append(b"y")
    assert log_path(target).exists()
    log.close()
    assert not log_path(target).exists() and target.read_text() == HEAD + "xy"
