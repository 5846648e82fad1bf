"""Helpers for the runtime tests: prompts that load the real moderator scripts, a scripted
fake model, output-item builders and a recording tool runner."""

from __future__ import annotations

import itertools
import shutil
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from chatml.stdlib.render import show
from chatml.values import Value
from runtime.ids import Entry, EntryAllocator
from runtime.prompt_checks import load_prompt
from runtime.registry import Artifact, ModeratorRegistry
from runtime.session import ModelRequest

SCRIPTS = Path(__file__).resolve().parent / "scripts"

DEFAULT_TOOLS = '<tool name="search" command="grep -r"/>\n<tool name="apply_patch"/>\n'


def script_text(name: str) -> str:
    return (SCRIPTS / name).read_text(encoding="utf-8")


def write_prompt(folder: Path, *, script: str | None = None, script_source: str | None = None,
                 tools: str = DEFAULT_TOOLS, messages: str = "<user>Hello</user>\n",
                 config: str = '<config model="gpt-test" id="demo"/>\n',
                 name: str = "chat.chatmd") -> Path:
    """A prompt in ``folder``; ``script`` copies a script of tests/runtime/scripts beside it,
    ``script_source`` writes the given ChatML as ``moderator.chatml``."""
    declaration = ""
    if script is not None:
        shutil.copy(SCRIPTS / script, folder / script)
        declaration = f'<script language="chatml" kind="moderator" id="main" src="{script}"/>\n'
    elif script_source is not None:
        (folder / "moderator.chatml").write_text(script_source, encoding="utf-8")
        declaration = ('<script language="chatml" kind="moderator" id="main" '
                       'src="moderator.chatml"/>\n')
    path = folder / name
    path.write_text(config + tools + declaration + "<system>You are helpful.</system>\n"
                    + messages, encoding="utf-8")
    return path


def prompt_in(folder: Path, **options: Any) -> Any:
    return load_prompt(write_prompt(folder, **options))


def compile_script(source: str, *, script_id: str = "main", surface: str = "moderator",
                   registry: ModeratorRegistry | None = None) -> Artifact:
    return (registry or ModeratorRegistry()).compile_text(source, script_id=script_id,
                                                          surface=surface)


def compile_file(name: str) -> Artifact:
    from chatcommon.sources import SourceFile

    return ModeratorRegistry().compile_source(SourceFile(name, script_text(name)),
                                              script_id="main")


# --------------------------------------------------------------------------- output items

_ids = itertools.count(1)


def assistant(text: str, item_id: str | None = None) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "id": item_id or f"msg_{next(_ids)}",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def function_call(name: str, arguments: str, call_id: str | None = None) -> dict[str, Any]:
    call = call_id or f"call_{next(_ids)}"
    return {"type": "function_call", "name": name, "arguments": arguments, "call_id": call,
            "id": f"fc_{call}"}


def custom_call(name: str, payload: str, call_id: str | None = None) -> dict[str, Any]:
    call = call_id or f"call_{next(_ids)}"
    return {"type": "custom_tool_call", "name": name, "input": payload, "call_id": call,
            "id": f"ctc_{call}"}


def user_item(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


class ScriptedModel:
    """A fake model: returns the scripted responses in order (then a plain ``done`` answer)
    and records every request it was sent."""

    def __init__(self, responses: Sequence[Sequence[Mapping[str, Any]]] = ()) -> None:
        self.responses = [list(r) for r in responses]
        self.requests: list[ModelRequest] = []

    def __call__(self, request: ModelRequest) -> list[Mapping[str, Any]]:
        self.requests.append(request)
        if self.responses:
            return self.responses.pop(0)
        return [assistant("done")]


class RecordingRunner:
    """A tool runner that records its payloads and answers with ``reply(payload)``."""

    def __init__(self, reply: Callable[[str], Any] = lambda payload: "ok",
                 delay: Callable[[str], float] | None = None) -> None:
        self.reply = reply
        self.payloads: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, payload: str) -> Any:
        with self._lock:
            self.payloads.append(payload)
        return self.reply(payload)


def entries(*items: Mapping[str, Any], namespace: str = "t/stream") -> list[Entry]:
    allocator = EntryAllocator(namespace)
    return [Entry(allocator.allocate(), dict(item)) for item in items]


def shown(value: Value) -> str:
    return show(value)


def items_of(history: Sequence[Entry]) -> list[Any]:
    return [entry.item for entry in history]


TRACER = """
(* Logs every event: its phase, and for appended items and tool events what they carry. *)
let initial_state = 0
let describe ctx ev =
  match ev with
  | `Item_appended(item) -> ctx.phase ++ " " ++ Item.id(item)
  | `Pre_tool_call(call) -> ctx.phase ++ " " ++ call.name
  | `Post_tool_response(result) -> ctx.phase ++ " " ++ result.name
  | _ -> ctx.phase
let on_event ctx st ev =
  let* () = Log.info(describe(ctx, ev)) in
  Task.pure(st + 1)
"""


class LogSink:
    """Collects ``Log.*`` messages of a moderator (``Capabilities(on_log=sink)``)."""

    def __init__(self) -> None:
        self.messages: list[str] = []

    def __call__(self, level: str, message: str) -> None:
        self.messages.append(message)

    def phases(self) -> list[str]:
        return [message.split(" ")[0] for message in self.messages]
